"""Semantic neighbours (`kg build --embed`, kg.related_work.embed) and their use in `kg related` and the RDF.

Unit tests run on a fake encoder (deterministic vectors, no model); one module build of the
seeds runs the default embedder (int8 all-MiniLM-L6-v2 on ONNX Runtime), which the test extra
installs. The other embedders: tests/related_work/test_embedders.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import kg
from kg.builder import BuildOptions
from kg.cli import main
from kg.errors import ExitCode, ExtraMissing
from kg.model import Paper
from kg.related_work import embed


def fake_encoder(calls: list[int]):
    """Vectors from a hash of the text: the same text always gives the same unit vector."""

    def encode(texts: list[str]) -> np.ndarray:
        calls.append(len(texts))
        rows = []
        for text in texts:
            rng = np.random.default_rng(abs(hash(text)) % (2**32))
            v = rng.standard_normal(embed.DIMENSIONS).astype(np.float32)
            rows.append(v / np.linalg.norm(v))
        return np.stack(rows)

    return encode


def papers(n: int) -> list[Paper]:
    return [Paper(id=f"p{i:03d}", title=f"Title {i}", abstract=f"Abstract number {i} about things.") for i in range(n)]


def test_embed_papers_orders_by_id_and_caches_by_content(tmp_path):
    calls: list[int] = []
    corpus = list(reversed(papers(70)))
    first = embed.embed_papers(corpus, cache_dir=tmp_path, encode=fake_encoder(calls))
    assert first.ids == tuple(sorted(p.id for p in corpus))
    assert first.encoded == 70 and sum(calls) == 70
    assert len(calls) == 2  # batches of embed.BATCH (64): each batch reaches the cache on its own
    assert np.allclose(np.linalg.norm(first.vectors, axis=1), 1.0, atol=1e-5)
    calls.clear()
    edited = [*corpus[1:], Paper(id=corpus[0].id, title=corpus[0].title, abstract="An edited abstract.")]
    second = embed.embed_papers(edited, cache_dir=tmp_path, encode=fake_encoder(calls))
    assert calls == [1] and second.encoded == 1  # only the edited paper is encoded again
    same = [i for i, pid in enumerate(second.ids) if pid != corpus[0].id]
    assert np.array_equal(first.vectors[same], second.vectors[same])


def test_progress_after_every_batch_from_what_the_cache_had(tmp_path):
    """The stage reports what the cache held, then each encoded batch: the bar's time left comes from those."""
    embed.embed_papers(papers(30), cache_dir=tmp_path, encode=fake_encoder([]))
    seen: list[tuple[str, int, int | None]] = []
    embed.embed_papers(papers(160), cache_dir=tmp_path, encode=fake_encoder([]), progress=lambda *event: seen.append(event))
    assert seen == [(embed.EMBED_STAGE, 30, 160), (embed.EMBED_STAGE, 94, 160), (embed.EMBED_STAGE, 158, 160), (embed.EMBED_STAGE, 160, 160)]


def test_damaged_cached_vector_is_recomputed(tmp_path):
    import sqlite3

    embed.embed_papers(papers(3), cache_dir=tmp_path, encode=fake_encoder([]))
    db = sqlite3.connect(tmp_path / embed.CACHE_FILE)
    with db:
        db.execute("UPDATE extraction SET payload = '\"AAAA\"'")  # wrong length, checksum no longer holds
    db.close()
    calls: list[int] = []
    again = embed.embed_papers(papers(3), cache_dir=tmp_path, encode=fake_encoder(calls))
    assert again.encoded == 3 and sum(calls) == 3


def test_nearest_is_exact_and_deterministic():
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((50, embed.DIMENSIONS)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    near = embed.nearest(vectors, k=5)
    for row, found in enumerate(near):
        scores = vectors @ vectors[row]
        scores[row] = -np.inf
        expected = sorted(range(50), key=lambda j: (-round(float(scores[j]), 4), j))[:5]
        assert [j for j, _ in found] == expected
        assert all(-1.0 <= s <= 1.0 for _, s in found)
    assert embed.nearest(vectors[:1], k=5) == [[]]


def test_load_refuses_vectors_of_other_papers(tmp_path):
    stored = embed.embed_papers(papers(4), cache_dir=None, encode=fake_encoder([]))
    embed.save(stored, tmp_path)
    loaded = embed.load(tmp_path, list(stored.ids))
    assert loaded is not None and np.array_equal(np.asarray(loaded), stored.vectors)
    assert embed.load(tmp_path, list(stored.ids)[:3]) is None
    (tmp_path / embed.EMBED_FILE).write_bytes(b"not numpy")
    assert embed.load(tmp_path, list(stored.ids)) is None


def test_build_without_the_extra_fails_first_and_writes_nothing(tmp_path, seeds, monkeypatch, capsys):
    monkeypatch.setattr(embed, "available", lambda name=None: False)
    out = tmp_path / "out"
    assert main(["build", str(seeds), "-o", str(out), "--embed", "-q"]) == ExitCode.EXTRA_MISSING
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["Error: embeddings need the embed extra, which is not installed: pip install -e '.[embed]'"]
    assert not out.exists() or not any(out.iterdir())
    assert main(["build", str(seeds), "-o", str(out), "--embedder", "torch", "-q"]) == ExitCode.EXTRA_MISSING
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "Error: embeddings need the embed-torch extra, which is not installed: pip install -e '.[embed-torch]' (where pip would"
        " pick a CUDA build of torch, install a CPU build first: docs/related.md, Semantic neighbours)"
    ]
    assert not out.exists() or not any(out.iterdir())
    with pytest.raises(ExtraMissing):
        embed.encoder()


# -- the real model, once ------------------------------------------------------------------


@pytest.fixture(scope="module")
def embedded_out(seeds, tmp_path_factory) -> Path:
    if not embed.available():
        pytest.fail("the embed extra is part of the test extra: pip install -e '.[test]'")
    out = tmp_path_factory.mktemp("embedded") / "out"
    summary = kg.build([str(seeds)], out, BuildOptions(embed=True, cache_dir=out.parent / "cache"))  # its own: tests rebuild with it
    assert summary.embedded == summary.papers == 38
    return out


def test_build_writes_unit_vectors_and_neighbour_links(embedded_out):
    graph = kg.load(embedded_out)
    ids = sorted(d["id"] for _, d in graph.nodes(data=True) if d.get("kind") == "paper")
    vectors = embed.load(embedded_out, ids)
    assert vectors is not None and vectors.shape == (38, embed.DIMENSIONS)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    similar = [(u, v, d) for u, v, d in graph.edges(data=True) if d.get("kind") == "similar"]
    assert len(similar) == 38 * embed.NEIGHBOURS
    number = {pid: i for i, pid in enumerate(ids)}
    for u, v, d in similar:
        a, b = number[graph.nodes[u]["id"]], number[graph.nodes[v]["id"]]
        assert d["similarity"] == pytest.approx(float(vectors[a] @ vectors[b]), abs=1e-3)
    # HippoRAG 2 (retrieval for LLMs): its three nearest papers are all about language models,
    # out of 38 papers on every topic (GNNs, optimisation, quantum circuits, …).
    hippo = next(k for k, d in graph.nodes(data=True) if d.get("title", "").startswith("HippoRAG 2"))
    near = [graph.nodes[v]["abstract"] for _, v, d in graph.out_edges(hippo, data=True) if d.get("kind") == "similar" and d["rank"] <= 3]
    assert len(near) == 3
    assert all("LLM" in text or "language model" in text.lower() for text in near)


def test_rebuild_encodes_nothing(embedded_out, seeds):
    summary = kg.build([str(seeds)], embedded_out, BuildOptions(embed=True, cache_dir=embedded_out.parent / "cache"))
    assert summary.embedded == 0


def test_rdf_has_scored_similarity_links_that_validate(embedded_out, shacl_shapes):
    import pyshacl
    import rdflib

    g = rdflib.Graph().parse(embedded_out / "graph.ttl", format="turtle")
    KG = rdflib.Namespace("https://w3id.org/kg-ml/ontology#")
    nodes = list(g.subjects(rdflib.RDF.type, KG.Similarity))
    assert len(nodes) == 38 * embed.NEIGHBOURS
    for node in nodes[:20]:
        assert -1 <= float(g.value(node, KG.cosine)) <= 1
        assert int(g.value(node, KG.rank)) >= 1
    assert len(list(g.triples((None, KG.similarTo, None)))) == 38 * embed.NEIGHBOURS
    conforms, _, report = pyshacl.validate(g, shacl_graph=shacl_shapes)
    assert conforms, report


def test_kg_related_fuses_and_says_so(embedded_out, capsys):
    assert main(["related", "HippoRAG 2", "--graph", str(embedded_out), "--top", "5"]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[1] == "  by shared concepts, shared words and embedding similarity"
    # Every result says in words what carried it: never a bare similarity number.
    why = [line.strip() for line in text if line.strip().startswith(("similar abstract (0.", "shared words: "))]
    assert len(why) == 5 and not any(line.strip().startswith("similarity") for line in text)
    assert main(["related", "HippoRAG 2", "--graph", str(embedded_out), "--top", "5", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["signals"] == ["concepts", "lexical", "embedding"]
    for result in data["results"]:
        assert set(result["signals"]) == {"concepts", "lexical", "embedding"}
        assert -1 <= result["signals"]["embedding"] <= 1
        assert result["signals"]["concepts"] == pytest.approx(sum(r["contribution"] for r in result["reasons"]))
    scores = [r["score"] for r in data["results"]]
    assert scores == sorted(scores, reverse=True)
    assert main(["related", "HippoRAG 2", "--graph", str(embedded_out), "--no-embeddings", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["signals"] == ["concepts", "lexical"]


def test_kg_related_needs_neither_torch_nor_the_extra(embedded_out, torch_stand_ins):
    code = (
        "import sys; from kg.cli import main; "
        f"main(['related', 'HippoRAG 2', '--graph', {str(embedded_out)!r}]); "
        "print(sorted(m for m in ('torch', 'sentence_transformers', 'spacy', 'networkx') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, env=torch_stand_ins)
    assert done.stdout.splitlines()[-1] == "[]", done.stderr


def test_build_without_embed_removes_old_vectors(embedded_out, seeds, tmp_path):
    import shutil

    copy = Path(shutil.copytree(embedded_out, tmp_path / "out", symlinks=True))
    kg.build([str(seeds)], copy, kg.BuildOptions(cache_dir=embedded_out.parent / "cache"))  # the extractions are there
    assert not (copy / embed.EMBED_FILE).is_symlink() and not (copy / embed.EMBED_META_FILE).is_symlink()
    assert not (copy / embed.EMBED_FILE).exists() and not (copy / embed.EMBED_META_FILE).exists()
    graph = kg.load(copy)
    assert not [1 for *_, d in graph.edges(data=True) if d.get("kind") == "similar"]


def test_page_draws_no_similarity_lines(embedded_out):
    from kg.html import select_subgraph

    graph = kg.load(embedded_out)
    assert [1 for *_, kind in graph.edges(data="kind") if kind == "similar"]
    chosen = select_subgraph(graph).graph
    assert chosen.number_of_nodes() > 38
    assert not [1 for *_, kind in chosen.edges(data="kind") if kind == "similar"]


def test_related_work_names_the_embeddings_file_as_kg_embed_does():
    from kg.related_work import rank as related_work

    assert related_work.EMBED_META_FILE == embed.EMBED_META_FILE


def test_one_ranker_for_kg_related_the_api_and_the_page(embedded_out):
    """`kg related DIR`, `kg.related(kg.load(DIR), …)` and the page's panel give the same list,
    embeddings fused in all three (the page and the API used concepts alone before)."""
    import re

    from kg.related_work.rank import find_related

    graph = kg.load(embedded_out)
    page = (embedded_out / "graph.html").read_text(encoding="utf-8")
    nodes = json.loads(re.search(r'<script id="kg-nodes" type="application/json">(.*?)</script>', page, re.S).group(1))
    papers = [node for node in nodes if node["group"] == "paper"]
    assert len(papers) == 38
    for node in papers:
        pid = node["id"].removeprefix("paper:")
        command = find_related(embedded_out, pid, top=8)
        assert command.signals == ("concepts", "lexical", "embedding")
        api = kg.related(graph, pid, top=8)
        assert api == list(command.results)
        got = node["kg"]["related"]
        assert [nodes[ref]["id"] for ref, *_ in got] == [f"paper:{r.id}" for r in api]
        assert [entry[3] for entry in got] == [round(r.similarity, 3) for r in api]
        assert [entry[4:] for entry in got] == [[list(r.words), r.by_similarity] for r in api]
    alone = kg.related(graph, "HippoRAG 2", top=8, use_embeddings=False)
    assert alone and all(r.similarity is None for r in alone)


def test_kg_related_text_embeds_the_text_like_the_stored_vectors(embedded_out, capsys):
    """A paper's own text, embedded by the model that made the stored vectors, is the paper."""
    from kg.related_work.rank import find_related_text, open_index

    index, _ = open_index(embedded_out)
    graph = kg.load(embedded_out)
    number = 7
    paper = graph.nodes[f"paper:{index.paper_ids[number]}"]
    text = paper["abstract"] if paper.get("title_derived") else f"{paper['title']}. {paper['abstract']}"  # as the build embeds it
    found = find_related_text(embedded_out, text, top=3)
    assert found.signals == ("concepts", "lexical", "embedding") and found.warnings == ()
    assert found.results[0].id == index.paper_ids[number]
    assert found.results[0].similarity == pytest.approx(1.0, abs=1e-3)


def test_kg_related_text_without_the_extra_warns_and_ranks_without_embeddings(embedded_out, capsys, monkeypatch):
    monkeypatch.setattr(embed, "available", lambda name=None: False)
    assert main(["related", "--text", "Retrieval-augmented generation with long-term memory for LLMs.", "--graph", str(embedded_out), "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err.startswith("Warning: embedding the text needs the embed extra")
    data = json.loads(captured.out)
    assert data["signals"] == ["concepts", "lexical"] and data["results"]
    assert data["warnings"] == [captured.err.removeprefix("Warning: ").strip()]
