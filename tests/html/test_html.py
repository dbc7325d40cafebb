"""kg html without a browser: filtering, escaping, offline page, CLI (see test_html_browser.py)."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path

import networkx as nx
import pytest

from kg.cli import main
from kg.graph import save
from kg.html import (
    find_regions,
    layout,
    render_html,
    safe_url,
    script_json,
    select_subgraph,
    short_title,
    write_html,
)


@pytest.fixture
def graph_dir(make_graph, tmp_path: Path) -> Path:
    save(make_graph(), tmp_path)
    return tmp_path


def json_block(page: str, block_id: str):
    match = re.search(rf'<script id="{block_id}" type="application/json">(.*?)</script>', page, re.S)
    assert match, block_id
    return json.loads(match.group(1))


# ---- pieces ----


def test_script_json_escapes_everything_that_could_end_a_script() -> None:
    text = script_json({"a": "</script><!--&\u2028\u2029"})
    assert text == '{"a":"\\u003c/script\\u003e\\u003c!--\\u0026\\u2028\\u2029"}'
    assert json.loads(text) == {"a": "</script><!--&\u2028\u2029"}


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://arxiv.org/abs/2401.00001", "https://arxiv.org/abs/2401.00001"),
        ("  http://example.org/a?b=1&c=2 ", "http://example.org/a?b=1&c=2"),
        ("javascript:alert(1)", None),
        ("JaVaScRiPt:alert(1)", None),
        (" javascript:alert(1)", None),
        ("data:text/html,<script>alert(1)</script>", None),
        ("//example.org/x", None),
        ("https://example.org/\"onmouseover=alert(1)", None),
        ("/relative/path", None),
        (None, None),
        (42, None),
    ],
)
def test_safe_url_keeps_only_absolute_http_urls(url, expected) -> None:
    assert safe_url(url) == expected


def test_short_title_cuts_at_a_word_boundary() -> None:
    assert short_title("Attention Is All You Need") == "Attention Is All You Need"
    assert short_title("Graph Neural Networks for Molecular Property Prediction at Scale") == "Graph Neural Networks for Molecular…"
    assert short_title("x" * 50) == "x" * 40 + "…"


# ---- choosing what to draw ----


def concept_ids(graph: nx.DiGraph) -> list[str]:
    return sorted(key for key, data in graph.nodes(data=True) if data["kind"] == "concept")


def test_select_keeps_everything_by_default(make_graph) -> None:
    graph = make_graph()
    selection = select_subgraph(graph)
    view = selection.graph
    assert (selection.min_papers, selection.papers_available) == (1, 3)
    assert sorted(view) == sorted(graph)
    assert view.number_of_edges() == graph.number_of_edges() == 12  # 11 mentions + 1 broader


def test_select_by_type_keeps_papers(make_graph) -> None:
    view = select_subgraph(make_graph(), types=["dataset", "METRIC"]).graph
    assert concept_ids(view) == ["concept:dataset/imagenet", "concept:metric/bleu"]
    assert sorted(k for k in view if k.startswith("paper:")) == ["paper:p1", "paper:p2", "paper:p3"]


def test_select_min_papers_drops_rare_concepts(make_graph) -> None:
    selection = select_subgraph(make_graph(), min_papers=2)
    view = selection.graph
    assert selection.min_papers == 2
    assert concept_ids(view) == ["concept:dataset/imagenet", "concept:method/gnn"]


def test_select_focus_draws_related_papers_and_what_they_share(make_graph) -> None:
    graph = make_graph()
    # depth 0: the paper and its concepts.
    assert sorted(select_subgraph(graph, focus="p1", depth=0).graph) == [
        "concept:hardware/gpu", "concept:method/gnn", "concept:method/message-passing", "concept:task/molecule", "paper:p1",
    ]
    # depth 1: + its related papers (p2, p3 share GNN with it) and that shared concept, not
    # what else they mention (RAG, BLEU, ImageNet, the evil method).
    selection = select_subgraph(graph, focus="p1", depth=1)
    assert selection.focus == "paper:p1"
    assert sorted(selection.graph) == [
        "concept:hardware/gpu", "concept:method/gnn", "concept:method/message-passing", "concept:task/molecule",
        "paper:p1", "paper:p2", "paper:p3",
    ]
    # depth 2: + what p2 and p3 share with their own related papers (ImageNet, between them).
    view = select_subgraph(graph, focus="molecular property", depth=2).graph  # title fragment
    assert set(view) - set(selection.graph) == {"concept:dataset/imagenet"}
    assert "concept:metric/bleu" not in view and "concept:method/rag" not in view
    with pytest.raises(ValueError, match="depth must be 0 or more"):
        select_subgraph(graph, focus="p1", depth=-1)


def test_select_chooses_min_papers_automatically_for_big_graphs(make_graph) -> None:
    # 3 papers + 8 concepts = 11 nodes; a budget of 5 leaves room for the 2 concepts in 2 papers.
    selection = select_subgraph(make_graph(), max_nodes=5)
    assert selection.min_papers == 2
    assert len(selection.graph) == 5


def test_select_keeps_the_best_linked_papers_when_papers_alone_are_too_many(make_graph) -> None:
    # Budget 3: the threshold rises to 3 (only GNN, in all 3 papers, is left), and of the
    # papers, all equally linked to it, the first two by id stay.
    selection = select_subgraph(make_graph(), max_nodes=3)
    assert sorted(selection.graph) == ["concept:method/gnn", "paper:p1", "paper:p2"]
    assert (selection.min_papers, selection.papers_available) == (3, 3)
    # An explicit threshold is obeyed as given: no papers are dropped.
    assert len(select_subgraph(make_graph(), max_nodes=3, min_papers=3).graph) == 4


def test_select_rejects_bad_arguments(make_graph) -> None:
    with pytest.raises(ValueError, match="unknown concept type"):
        select_subgraph(make_graph(), types=["PERSON"])
    with pytest.raises(ValueError, match="min_papers must be 1 or more"):
        select_subgraph(make_graph(), min_papers=0)


# ---- the page ----


def test_page_is_self_contained_and_offline(make_graph) -> None:
    page = render_html(make_graph())
    # No element that fetches anything: no <link>, no src/href attribute pointing outside.
    assert "<link" not in page
    assert re.findall(r"<(?:script|img|iframe|link|source|embed|object)\b[^>]*\b(?:src|href|data)\s*=", page, re.I) == []
    for host in ("jsdelivr", "cdnjs", "cloudflare", "bootstrap", "unpkg"):  # pyvis templates' CDN links
        assert host not in page.lower()
    assert len(re.findall(r"^<script>", page, re.M)) == 2  # vis-network and kg's script, both inline
    assert "new vis.Network" in page


def test_page_csp_allows_exactly_its_own_scripts(make_graph) -> None:
    page = render_html(make_graph())
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    assert csp.startswith("default-src 'none'; script-src 'sha256-")
    bodies = re.findall(r"<script>(.*?)</script>", page, re.S)
    expected = ["'sha256-" + base64.b64encode(hashlib.sha256(body.encode()).digest()).decode() + "'" for body in bodies]
    assert re.search(r"script-src ([^;]+);", csp).group(1).split() == expected
    assert "unsafe-inline" not in csp.split("script-src")[1].split(";")[0]


def test_page_embeds_corpus_text_inert(make_graph, evil_abstract) -> None:
    page = render_html(make_graph())
    for raw in ("<script>window", "<img src=x", "<a href=\"javascript", "</script><script>", "<svg onload", "\u2028"):
        assert raw not in page
    nodes = {node["id"]: node for node in json_block(page, "kg-nodes")}
    evil = nodes["paper:p3"]["kg"]
    assert evil["abstract"] == " ".join(evil_abstract.split())  # the text survives intact, as data
    assert nodes["paper:p2"]["kg"]["url"] is None  # javascript: URL dropped
    assert nodes["paper:p1"]["kg"]["url"] == "https://example.org/p1"
    assert nodes["concept:method/evil"]["label"] == "<script>window.__pwned='label'</script>"


def test_page_nodes_styles_and_edges(make_graph) -> None:
    page = render_html(make_graph())
    nodes = {node["id"]: node for node in json_block(page, "kg-nodes")}
    assert len(nodes) == 11
    assert nodes["paper:p1"]["group"] == "paper"
    assert nodes["paper:p1"]["label"] == "Graph Neural Networks for Molecular…"
    assert nodes["concept:method/gnn"]["label"] == "graph neural network"
    assert nodes["concept:method/gnn"]["kg"] == {"papers": 3, "alt_labels": ["GNN"]}
    # size by degree: GNN (3 papers + 1 narrower concept) is the biggest concept
    assert max((n for n in nodes.values() if n["group"] != "paper"), key=lambda n: n["size"])["id"] == "concept:method/gnn"
    assert all(isinstance(n["x"], float) and isinstance(n["y"], float) for n in nodes.values())
    # Edges as [from, to, kind] places in the node list (kind 0 used, 1 proposed, 2 broader).
    edges = json_block(page, "kg-edges")
    order = [node["id"] for node in json_block(page, "kg-nodes")]
    named = [(order[a], order[b], kind) for a, b, kind in edges]
    assert len(named) == 12
    assert ("concept:method/message-passing", "concept:method/gnn", 2) in named
    assert ("paper:p1", "concept:method/gnn", 1) in named
    assert ("paper:p1", "concept:task/molecule", 0) in named
    # The page script reads the kinds' names and styles from the page data, in that order.
    assert json_block(page, "kg-data")["edge_kinds"] == [["used", {}], ["proposed", {"width": 2}], ["broader", {"dashes": True}]]
    options = json_block(page, "kg-options")
    assert options["physics"] == {"enabled": False}
    assert options["edges"]["smooth"] is False
    assert set(options["groups"]) == {"paper", "METHOD", "DATASET", "TASK", "METRIC", "HARDWARE", "TERM"}


def test_terms_have_a_toggle_that_starts_off(make_graph) -> None:
    page = render_html(make_graph())
    toggles = dict(re.findall(r'<label class="kg-toggle" data-type="(\w+)"><input type="checkbox"( checked)? value=', page))
    assert toggles == {"paper": " checked", "METHOD": " checked", "DATASET": " checked", "TASK": " checked",
                       "METRIC": " checked", "HARDWARE": " checked", "TERM": ""}


def test_page_is_deterministic(make_graph) -> None:
    assert render_html(make_graph()) == render_html(make_graph())


def test_write_html_reports_what_it_drew(make_graph, tmp_path: Path) -> None:
    summary = write_html(make_graph(), tmp_path / "g.html", min_papers=2)
    page = (tmp_path / "g.html").read_text(encoding="utf-8")
    assert (summary.nodes, summary.papers, summary.concepts, summary.edges, summary.min_papers) == (5, 3, 2, 5, 2)
    assert summary.papers_available == 3
    assert '<p class="kg-note">' not in page
    assert summary.bytes == len(page.encode("utf-8"))
    assert 'id="kg-threshold" type="range" min="2"' in page


# ---- the command ----


def test_cli_writes_graph_html_beside_the_graph(graph_dir: Path, capsys) -> None:
    assert main(["html", "--graph", str(graph_dir)]) == 0
    out = capsys.readouterr().out
    size = (graph_dir / "graph.html").stat().st_size
    assert out == f"Wrote {graph_dir / 'graph.html'} ({size / 1e6:.1f} MB): 3 papers, 8 concepts (in ≥ 1 papers), 12 edges\n"


def test_page_says_when_papers_were_left_out(make_graph, tmp_path: Path) -> None:
    summary = write_html(make_graph(), tmp_path / "g.html", max_nodes=3)
    assert (summary.papers, summary.papers_available) == (2, 3)
    page = (tmp_path / "g.html").read_text(encoding="utf-8")
    assert '<p class="kg-note">Drawn: the 2 papers most linked to these concepts, of 3.' in page


def test_cli_options(graph_dir: Path, tmp_path: Path, capsys) -> None:
    target = tmp_path / "sub" / "focus.html"
    code = main(["html", "--graph", str(graph_dir / "graph.json"), "-o", str(target), "--focus", "p2", "--depth", "1", "--types", "method,dataset"])
    assert code == 0
    # p2, its methods and datasets, and its two related papers (linked to it by ImageNet and GNN).
    assert "3 papers, 3 concepts (in ≥ 1 papers), 6 edges" in capsys.readouterr().out
    page = target.read_text(encoding="utf-8")
    nodes = {node["id"] for node in json_block(page, "kg-nodes")}
    assert nodes == {"paper:p1", "paper:p2", "paper:p3", "concept:method/rag", "concept:method/gnn", "concept:dataset/imagenet"}
    assert json_block(page, "kg-data")["focus"] == "paper:p2"  # the page opens with it selected


def test_cli_max_nodes(graph_dir: Path, capsys) -> None:
    assert main(["html", "--graph", str(graph_dir), "--max-nodes", "3"]) == 0
    out = capsys.readouterr().out
    assert out.endswith(": 2 papers (the best linked of 3), 1 concepts (in ≥ 3 papers), 2 edges\n")


def test_cli_missing_graph(tmp_path: Path, capsys) -> None:
    assert main(["html", "--graph", str(tmp_path / "nowhere")]) == 10
    assert capsys.readouterr().err == f"Error: no graph at {tmp_path / 'nowhere' / 'graph.json'}; run `kg build INPUT… -o {tmp_path / 'nowhere'}` first\n"


def test_cli_unknown_paper(graph_dir: Path, capsys) -> None:
    # --focus finds papers as `kg related` does: id, title, or words starting title words.
    assert main(["html", "--graph", str(graph_dir), "--focus", "Retrieval Augmented Generation With Long Contexts"]) == 0
    capsys.readouterr()
    assert main(["html", "--graph", str(graph_dir), "--focus", "Retrieval Augmented Genration"]) == 11
    err = capsys.readouterr().err
    assert err.startswith("Error: no paper matches 'Retrieval Augmented Genration'; closest titles")
    assert "Retrieval-Augmented Generation with Long Contexts" in err


def test_cli_ambiguous_paper(graph_dir: Path, capsys) -> None:
    assert main(["html", "--graph", str(graph_dir), "--focus", "g"]) == 12  # Graph …, … Generation …
    err = capsys.readouterr().err
    assert err.startswith("Error: 'g' matches 2 papers; give an id or more of the title")
    assert "p1  Graph Neural Networks" in err


def test_cli_bad_types(graph_dir: Path, capsys) -> None:
    assert main(["html", "--graph", str(graph_dir), "--types", "METHOD,PERSON"]) == 2
    assert "Error: Invalid value for '--types': unknown concept type 'PERSON'; choose from METHOD, DATASET, HARDWARE, METRIC, TASK" in capsys.readouterr().err


def test_cli_bad_min_papers(graph_dir: Path, capsys) -> None:
    assert main(["html", "--graph", str(graph_dir), "--min-papers", "0"]) == 2
    assert "Invalid value for '--min-papers': 0 is not in the range x>=1." in capsys.readouterr().err


def test_cli_unwritable_output(graph_dir: Path, capsys) -> None:
    (graph_dir / "blocker").write_text("a file, not a folder")
    assert main(["html", "--graph", str(graph_dir), "-o", str(graph_dir / "blocker" / "g.html")]) == 18
    assert capsys.readouterr().err.startswith(f"Error: cannot write {graph_dir / 'blocker' / 'g.html'}: ")


# ---- the seeds, through `kg build` ----


def test_build_writes_the_same_page_as_kg_html(seeds_out: Path, seeds_graph, tmp_path: Path) -> None:
    built = (seeds_out / "graph.html").read_bytes()
    write_html(seeds_graph, tmp_path / "again.html")
    assert (tmp_path / "again.html").read_bytes() == built  # deterministic, default options
    graph = seeds_graph
    nodes = json_block(built.decode("utf-8"), "kg-nodes")
    assert len(nodes) == graph.number_of_nodes()  # the seeds are small: nothing filtered
    assert sum(1 for node in nodes if node["group"] == "paper") == 38


# ---- regions of the field ----


def test_regions_are_the_two_fields_named_by_their_own_concepts(two_fields) -> None:
    from kg.html import concept_paper_counts

    graph = two_fields()
    papers = [key for key, data in graph.nodes(data=True) if data["kind"] == "paper"]
    regions = find_regions(graph, papers, concept_paper_counts(graph))
    assert sorted(region.papers for region in regions) == [
        tuple(f"paper:g{i}" for i in range(1, 7)), tuple(f"paper:v{i}" for i in range(1, 7)),
    ]
    for region in regions:
        field = region.papers[0].removeprefix("paper:")[0]
        # Named by three of its own concepts; the hub in every paper names neither.
        assert len(region.concepts) == 3 and "concept:method/deep-learning" not in region.concepts
        own = {"g": {"concept:method/gnn", "concept:method/message-passing", "concept:task/link-prediction"},
               "v": {"concept:method/cnn", "concept:dataset/imagenet", "concept:task/segmentation"}}[field]  # fmt: skip
        assert set(region.concepts) == own
        assert region.name == " · ".join(graph.nodes[c]["label"] for c in region.concepts)
    assert regions[0].color != regions[1].color
    assert find_regions(graph, papers, concept_paper_counts(graph)) == regions  # seeded: deterministic


def test_layout_keeps_each_region_together(two_fields) -> None:
    import math

    from kg.html import concept_paper_counts

    graph = two_fields()
    papers = [key for key, data in graph.nodes(data=True) if data["kind"] == "paper"]
    regions = find_regions(graph, papers, concept_paper_counts(graph))
    positions = layout(graph, regions=regions)
    assert set(positions) == set(graph)
    inside, across = [], []
    for a in papers:
        for b in papers:
            if a < b:
                (inside if a[6] == b[6] else across).append(math.dist(positions[a], positions[b]))
    # Every paper is nearer to each paper of its own field than the two fields' papers are on average.
    assert max(inside) < sum(across) / len(across)
    assert layout(graph, regions=regions) == positions


def test_page_carries_regions_and_colours_papers_by_region(two_fields) -> None:
    page = render_html(two_fields())
    data = json_block(page, "kg-data")
    nodes = json_block(page, "kg-nodes")
    assert [region["size"] for region in data["regions"]] == [6, 6]
    assert {region["name"] for region in data["regions"]} == {
        "graph neural network · message passing · link prediction", "ImageNet · convolutional network · segmentation",
    }
    for region in data["regions"]:
        assert all(nodes[ref]["group"] != "paper" for ref in region["concepts"])  # references to drawn concepts
    regions = {node["id"]: node["kg"]["region"] for node in nodes if node["group"] == "paper"}
    assert len({regions[f"paper:g{i}"] for i in range(1, 7)}) == 1 and len({regions[f"paper:v{i}"] for i in range(1, 7)}) == 1
    assert regions["paper:g1"] != regions["paper:v1"]


# ---- the panel's data: related papers, concepts that are not drawn ----


def test_each_paper_carries_its_related_papers_as_kg_related_ranks_them(make_graph) -> None:
    import kg

    graph = make_graph()
    page = render_html(graph)
    nodes = json_block(page, "kg-nodes")
    for node in nodes:
        if node["group"] != "paper":
            continue
        expected = kg.related(graph, node["id"].removeprefix("paper:"), top=8)
        got = node["kg"]["related"]
        assert [nodes[entry[0]]["id"] for entry in got] == [f"paper:{r.id}" for r in expected]
        assert [entry[1] for entry in got] == [round(r.score, 3) for r in expected]
        # The strongest shared concepts first, as references to concept nodes.
        assert [[nodes[c]["id"] for c in entry[2]] for entry in got] == [[f"concept:{x.concept}" for x in r.reasons[:3]] for r in expected]
        assert all(entry[3] is None for entry in got)  # no embeddings: concepts and words
        assert [entry[4:] for entry in got] == [[list(r.words), r.by_similarity] for r in expected]
    p2 = next(node for node in nodes if node["id"] == "paper:p2")["kg"]
    assert [nodes[entry[0]]["id"] for entry in p2["related"]] == ["paper:p3", "paper:p1"]  # ImageNet and GNN beat GNN alone


def test_concepts_left_off_the_page_still_reach_the_panel(make_graph, tmp_path: Path) -> None:
    write_html(make_graph(), tmp_path / "g.html", min_papers=2)  # draws only GNN and ImageNet
    page = (tmp_path / "g.html").read_text(encoding="utf-8")
    nodes, data = json_block(page, "kg-nodes"), json_block(page, "kg-data")
    # Drawn nodes are referred to by their place in the node list, extras by N + their row.
    refs = [node["label"] for node in nodes] + [row[1] for row in data["extra"]]
    assert [node["id"] for node in nodes] == ["concept:dataset/imagenet", "concept:method/gnn", "paper:p1", "paper:p2", "paper:p3"]
    kg_of = {node["id"]: node["kg"] for node in nodes}
    assert sorted(refs[r] for r in kg_of["paper:p2"]["more"]) == ["BLEU", "retrieval-augmented generation"]
    assert [refs[r] for r in kg_of["paper:p2"]["more_proposed"]] == ["retrieval-augmented generation"]  # p2 proposes RAG
    assert ["METHOD", "retrieval-augmented generation", 1, "RAG"] in data["extra"]  # type, label, papers, alt labels
    # message passing (not drawn) is narrower than GNN (drawn): the link travels too.
    assert [[refs[a], refs[b]] for a, b in data["hierarchy"]] == [["message passing", "graph neural network"]]
    # The evil label stays data: escaped in the page, intact in the JSON.
    assert "<script>window.__pwned='label'</script>" in refs
    assert "<script>window.__pwned" not in page


def test_focus_page_draws_the_related_papers_of_a_seeds_paper(seeds_graph, tmp_path: Path) -> None:
    import kg

    graph = seeds_graph
    key, data = next((k, d) for k, d in sorted(graph.nodes(data=True)) if d["kind"] == "paper" and "HippoRAG 2" in d["title"])
    summary = write_html(graph, tmp_path / "f.html", focus=key.removeprefix("paper:"), depth=1)
    nodes = json_block((tmp_path / "f.html").read_text(encoding="utf-8"), "kg-nodes")
    drawn = {node["id"] for node in nodes}
    related = kg.related(graph, key.removeprefix("paper:"), top=8)
    assert drawn >= {key} | {f"paper:{r.id}" for r in related}
    assert summary.papers == 1 + len(related) <= 9  # legible: the paper and its eight related papers at most
    assert summary.concepts <= graph.out_degree(key) + 4 * len(related)


def _random_paper_graph(seed: int) -> nx.DiGraph:
    """Papers mentioning random concepts (roles, mention counts) with broader links: ties and
    concepts reached only through narrower ones included."""
    import random

    rng = random.Random(seed)
    graph = nx.DiGraph()
    concepts = [f"concept:method/c{i}" for i in range(40)]
    for i, key in enumerate(concepts):
        graph.add_node(key, kind="concept", id=key.removeprefix("concept:"), label=f"c{i}", type=rng.choice(["METHOD", "TASK"]))
    for i in range(10, 40):
        graph.add_edge(concepts[i], concepts[rng.randrange(i)], kind="broader")
    for p in range(60):
        key = f"paper:p{p:02d}"
        graph.add_node(key, kind="paper", id=f"p{p:02d}", title=f"Paper {p}")
        for concept in rng.sample(concepts, rng.randint(0, 8)):
            graph.add_edge(key, concept, kind="mentions", role=rng.choice(["used", "proposed"]), mentions=rng.randint(1, 4))
    return graph


@pytest.mark.parametrize("scoring", [None, {"b": 0.75}, {"k": 0.0, "broader": 0.3, "idf_power": 1.5}])
def test_batch_ranker_ranks_exactly_as_rank(scoring) -> None:
    # The page ranks every drawn paper with kg.related_work.batch; it must be `kg related`'s list.
    from kg.related_work.batch import Ranker
    from kg.related_work.index import RelatedIndex
    from kg.related_work.rank import rank

    index = RelatedIndex.from_graph(_random_paper_graph(7), scoring=scoring)
    ranker = Ranker(index)
    for paper in range(len(index.paper_ids)):
        for top, types in ((8, None), (3, ["TASK"]), (100, None)):
            assert ranker.rank(paper, top=top, types=types) == rank(index, paper, top=top, types=types)


@pytest.mark.parametrize("seed", [0, 1])
def test_batch_ranker_fuses_embeddings_exactly_as_rank(seed) -> None:
    """The page's related list in an --embed build is `kg related`'s: same papers, scores, reasons."""
    import numpy as np

    from kg.related_work.batch import Ranker
    from kg.related_work.index import RelatedIndex
    from kg.related_work.rank import rank

    index = RelatedIndex.from_graph(_random_paper_graph(seed))
    vectors = np.random.default_rng(seed).standard_normal((len(index.paper_ids), 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ranker = Ranker(index)
    for paper in range(len(index.paper_ids)):
        for top, types in ((8, None), (3, ["TASK"]), (100, None)):
            fused = ranker.rank(paper, top=top, types=types, embeddings=vectors)
            assert fused == rank(index, paper, top=top, types=types, embeddings=vectors)
            assert all(r.similarity is not None for r in fused)


def test_a_concept_no_paper_reaches_does_not_stop_the_page(tmp_path):
    """A curated broader chain longer than the index follows (2 steps) leaves concepts with
    no postings; the page's batch ranking must give them no weight, not divide by zero."""
    import warnings

    from kg.graph import build_graph
    from kg.html import write_html
    from kg.model import Concept, Mention, Paper, PaperEntities
    from kg.related_work.batch import Ranker
    from kg.related_work.index import RelatedIndex
    from kg.related_work.rank import rank

    chain = ["method/prompt-tuning", "method/peft", "method/fine-tuning", "method/transfer-learning", "method/machine-learning"]
    concepts = [Concept(id=cid, type="METHOD", pref_label=cid.split("/")[1], broader=tuple(chain[i + 1 : i + 2])) for i, cid in enumerate(chain)]
    concepts.append(Concept(id="task/qa", type="TASK", pref_label="question answering"))
    papers = [Paper(id=f"p{i}", title=f"Paper {i}", abstract="We use prompt tuning for question answering.") for i in range(3)]

    def mention(start: int, end: int, concept: str, label: str) -> Mention:
        return Mention(start=start, end=end, text="x", label=label, concept=concept, role="used", source="vocab", score=0.9, sent_start=0, sent_end=44)

    entities = [PaperEntities(p.id, (mention(7, 20, chain[0], "METHOD"), mention(25, 43, "task/qa", "TASK"))) for p in papers]
    graph = build_graph(papers, entities, concepts)
    index = RelatedIndex.from_graph(graph)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # not even numpy's divide-by-zero warning
        ranker = Ranker(index)
    for paper in range(len(index.paper_ids)):
        assert ranker.rank(paper, top=5) == rank(index, paper, top=5)
    write_html(graph, tmp_path / "graph.html")
    assert (tmp_path / "graph.html").stat().st_size > 0
