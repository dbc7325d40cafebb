"""RDF and SPARQL on the real seeds: `kg build seeds/` → out/graph.ttl.

* graph.ttl validates against schemas/shapes.ttl and parses back isomorphic;
* every example query gives the same rows on both backends, equal to an independent
  computation over graph.json (networkx), plus exact rows for three of them.

The exact rows depend on what extraction finds in the seeds: when the extraction stage
changes, regenerate them with ``kg sparql @NAME --graph out --format csv`` (and check
they make sense) rather than loosening the tests.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest
import rdflib
from rdflib.compare import isomorphic

from kg.rdf import convert, terms, triples
from kg.sparql import engine as sparql
from kg.text.vocab import normalize_key

HIPPORAG2 = "hipporag-2-a-framework-that-outperforms-standard-rag-b2523bf3"


@pytest.fixture(scope="module")
def out(copy_seeds_out, tmp_path_factory) -> Path:
    """A copy of the seeds output (conftest's seeds_build): the Oxigraph backend caches its store in it."""
    return copy_seeds_out(tmp_path_factory.mktemp("rdf-seeds"))


@pytest.fixture(scope="module")
def graph(seeds_graph):
    return seeds_graph


@pytest.fixture(scope="module")
def turtle(out) -> rdflib.Graph:
    return rdflib.Graph().parse(out / "graph.ttl", format="turtle")


@pytest.fixture(scope="module")
def backends(out):
    return {name: sparql.open_backend(out, backend=name) for name in ("rdflib", "oxigraph")}


# --- graph.ttl -----------------------------------------------------------------------------


def test_build_wrote_graph_ttl(seeds_build) -> None:
    assert str(seeds_build.out / "graph.ttl") in seeds_build.summary.outputs


def test_graph_ttl_parses_back_isomorphic(graph, turtle) -> None:
    expected = convert.to_rdflib(graph)
    assert len(turtle) == len(expected) == sum(1 for _ in triples.triples(graph))
    assert isomorphic(turtle, expected)


@pytest.mark.slow  # seconds of pyshacl; the default leg validates the hand-made graph (tests/rdf/test_rdf.py)
def test_graph_ttl_validates_against_shapes(turtle, shacl_shapes) -> None:
    import pyshacl

    conforms, _, report = pyshacl.validate(turtle, shacl_graph=shacl_shapes)
    assert conforms, report


def test_every_kg_term_is_declared(turtle, ontology) -> None:
    declared = set(ontology.subjects(rdflib.RDFS.comment))
    used = {t for triple in turtle for t in triple if isinstance(t, rdflib.URIRef) and str(t).startswith(terms.KG)}
    assert used - declared == set()


def test_seed_counts_match_graph(graph, turtle) -> None:
    papers = sum(1 for _, d in graph.nodes(data=True) if d["kind"] == "paper")
    spans = sum(len(d["spans"]) for _, _, d in graph.edges(data=True) if d["kind"] == "mentions")
    fabio = rdflib.URIRef("http://purl.org/spar/fabio/ResearchPaper")
    oa = rdflib.URIRef("http://www.w3.org/ns/oa#Annotation")
    assert len(set(turtle.subjects(rdflib.RDF.type, fabio))) == papers == 38
    assert len(set(turtle.subjects(rdflib.RDF.type, oa))) == spans


# --- example queries: an independent oracle over the networkx graph -------------------------


def _papers(graph):
    return {k: d for k, d in graph.nodes(data=True) if d["kind"] == "paper"}


def _links(graph):
    return [(u, v, d) for u, v, d in graph.edges(data=True) if d["kind"] == "mentions"]


def _named(node: dict, label: str | None) -> bool:
    """Whether a bound label names the concept: its normalised form is the normalised
    prefLabel or an altLabel (computed here from kg.text.vocab, not from the RDF)."""
    if label is None:
        return True
    forms = {normalize_key(node["label"]), *(normalize_key(alt) for alt in node.get("alt_labels") or ())}
    return normalize_key(label) in forms


def oracle(graph, name: str, bindings: dict[str, str]) -> list[tuple[str, ...]]:
    nodes, papers = graph.nodes, _papers(graph)
    if name == "papers_using_dataset":
        rows = [(nodes[v]["label"], papers[u]["id"], papers[u]["title"], str(d["mentions"])) for u, v,
            d in _links(graph) if nodes[v]["type"] == "DATASET" and _named(nodes[v], bindings.get("dataset"))]
        return sorted(rows)
    if name == "hardware_per_paper":
        rows = [(papers[u]["id"], papers[u]["title"], nodes[v]["label"], str(d["mentions"])) for u, v, d in _links(graph) if nodes[v]["type"] == "HARDWARE"]
        return sorted(r for r in rows if bindings.get("paperId", r[0]) == r[0])
    if name == "methods_per_task":
        groups = defaultdict(set)
        for paper in papers:
            out = [(v, d) for _, v, d in graph.out_edges(paper, data=True) if d["kind"] == "mentions"]
            for method, d in out:
                if nodes[method]["type"] == "METHOD" and d["role"] == "proposed":
                    for task, _ in out:
                        if nodes[task]["type"] == "TASK" and _named(nodes[task], bindings.get("task")):
                            groups[nodes[task]["label"], nodes[method]["label"]].add(paper)
        rows = sorted(((t, m, len(p)) for (t, m), p in groups.items()), key=lambda r: (r[0], -r[2], r[1]))
        return [(t, m, str(n)) for t, m, n in rows]
    subjects = {p: {v for _, v, d in graph.out_edges(p, data=True) if d["kind"] == "mentions"} for p in papers}
    by_id = {papers[p]["id"]: p for p in papers}
    if name == "shared_concepts":
        a, b = by_id[bindings["paperA"]], by_id[bindings["paperB"]]
        rows = [(bindings["paperA"], bindings["paperB"], nodes[c]["type"].title(), nodes[c]["label"]) for c in subjects[a] & subjects[b]]
        return sorted(rows)
    if name == "related_shared_concepts":
        p = by_id[bindings["paperId"]]
        rows = [(bindings["paperId"], papers[r]["id"], papers[r]["title"], len(subjects[p] & subjects[r])) for r in papers if r != p and subjects[p] & subjects[r]]
        rows.sort(key=lambda r: (-r[3], r[1]))
        return [(a, b, t, str(n)) for a, b, t, n in rows[:50]]
    raise AssertionError(name)


def _most_shared_pair(graph) -> tuple[str, str]:
    papers = _papers(graph)
    subjects = {papers[p]["id"]: {v for _, v, d in graph.out_edges(p, data=True) if d["kind"] == "mentions"} for p in papers}
    ids = sorted(subjects)
    return max(((a, b) for a in ids for b in ids if a < b), key=lambda pair: (len(subjects[pair[0]] & subjects[pair[1]]), pair))


def _most_used(graph, kind: str) -> str:
    counts = defaultdict(int)
    for _, v, _ in _links(graph):
        if graph.nodes[v]["type"] == kind:
            counts[graph.nodes[v]["label"]] += 1
    return max(sorted(counts), key=lambda label: counts[label])


def cases(graph) -> list[tuple[str, dict[str, str]]]:
    a, b = _most_shared_pair(graph)
    return [
        ("papers_using_dataset", {}),
        ("papers_using_dataset", {"dataset": _most_used(graph, "DATASET")}),
        ("papers_using_dataset", {"dataset": _most_used(graph, "DATASET").upper() + "S"}),  # case and plural forgiven
        ("methods_per_task", {"task": _most_used(graph, "TASK")}),
        ("methods_per_task", {"task": _most_used(graph, "TASK").title().replace(" ", "-")}),
        ("methods_per_task", {}),
        ("hardware_per_paper", {}),
        ("shared_concepts", {"paperA": a, "paperB": b}),
        ("related_shared_concepts", {"paperId": HIPPORAG2}),
        ("related_shared_concepts", {"paperId": a}),
    ]


def values(result) -> list[tuple[str, ...]]:
    return [tuple(t.value for t in row) for row in result.rows]


def test_example_queries_match_oracle_on_both_backends(graph, backends) -> None:
    for name, bindings in cases(graph):
        text = sparql.example_queries()[name]
        by_rdflib = backends["rdflib"].query(text, bindings)
        by_oxigraph = backends["oxigraph"].query(text, bindings)
        assert by_rdflib == by_oxigraph, name
        assert values(by_oxigraph) == oracle(graph, name, bindings), name
        assert by_oxigraph.rows or name == "shared_concepts", f"{name} {bindings} returned no rows on the seeds"


def test_exact_rows_hardware_per_paper(backends) -> None:
    rows = values(backends["oxigraph"].query(sparql.example_queries()["hardware_per_paper"]))
    assert [(r[0], r[2], r[3]) for r in rows] == [
        ("linear-recurrent-neural-networks-enable-powerful-long-range-51e00bdc", "Intel Loihi 2", "1"),
        ("linear-recurrent-neural-networks-enable-powerful-long-range-51e00bdc", "edge GPU", "1"),
        ("linear-recurrent-neural-networks-enable-powerful-long-range-51e00bdc", "neuromorphic chip", "1"),
        ("sqaoa-sub-problem-quantum-alternating-operator-ansatz-5679726b", "NISQ device", "2"),
        ("tetrajet-a-novel-training-method-b1a1bc96", "NVIDIA Blackwell", "1"),
    ]
    assert rows[-1][1] == "TetraJet: A novel training method"


def test_exact_rows_papers_using_dataset(backends) -> None:
    rows = values(backends["rdflib"].query(sparql.example_queries()["papers_using_dataset"], {"dataset": "MIMIC-III"}))
    assert rows == [("MIMIC-III", "medtok-a-multimodal-medical-code-tokenizer-b8a3a2ed", "MedTok: A multimodal medical code tokenizer", "1")]
    every = values(backends["oxigraph"].query(sparql.example_queries()["papers_using_dataset"]))
    assert ("MIMIC-IV", "medtok-a-multimodal-medical-code-tokenizer-b8a3a2ed", "MedTok: A multimodal medical code tokenizer", "1") in every


def test_exact_rows_related_to_hipporag2(backends) -> None:
    rows = values(backends["oxigraph"].query(sparql.example_queries()["related_shared_concepts"], {"paperId": HIPPORAG2}))
    assert [(r[1], r[3]) for r in rows] == [
        ("ctrl-a-framework-for-critic-training-via-reinforcement-8b9a4767", "1"),
        ("decomposing-hard-problems-into-subproblems-often-makes-them-2bf4adfa", "1"),
        ("halos-a-hierarchical-asynchronous-optimization-framework-07afb5cc", "1"),
        ("methods-with-adaptive-stepsizes-such-as-adagrad-and-adam-are-4ba77812", "1"),
        ("patients-have-long-sought-health-information-online-and-b6923f6d", "1"),
        ("the-use-of-large-language-models-llms-as-feature-enhancers-9d2f1e90", "1"),
        ("tsv-truthfulness-separator-vector-9600a01c", "1"),
        ("xlstm-7b-a-7-billion-parameter-llm-dde0c7e6", "1"),
    ]


def test_every_annotation_carries_its_mention_score(turtle, out) -> None:
    """kg:score on each oa:Annotation is the score entities.jsonl gives that mention."""
    import json

    oa, kg_ns = rdflib.Namespace("http://www.w3.org/ns/oa#"), rdflib.Namespace("https://w3id.org/kg-ml/ontology#")
    annotations = set(turtle.subjects(rdflib.RDF.type, oa.Annotation))
    scores = {a: turtle.value(a, kg_ns.score) for a in annotations}
    assert annotations and all(s is not None and 0 <= float(s) <= 1 for s in scores.values())
    written = {(r["id"], e["concept"], e["start"], e["end"]): e["score"] for r in map(json.loads, (out / "entities.jsonl").read_text().splitlines()) for e in r["entities"]}
    by_iri = {str(a).rsplit("/annotation/", 1)[1]: float(s) for a, s in scores.items()}
    sample = next(iter(written.items()))
    (pid, cid, start, end), score = sample
    key = next(k for k in by_iri if k.endswith(f"/{start}-{end}") and k.startswith(pid))
    assert abs(by_iri[key] - score) < 1e-9


def test_paper_counts_are_the_links_counted(graph, backends) -> None:
    """kg:paperCount (stored so idf needs no count over the graph) equals what a count of the
    links gives, on every concept, and on the scheme the number of papers."""
    counted = """SELECT ?c (COUNT(DISTINCT ?p) AS ?n) WHERE { ?c a skos:Concept . OPTIONAL { ?p kg:hasConceptLink/kg:linkedConcept ?c } } GROUP BY ?c"""
    stored = "SELECT ?c ?n WHERE { ?c a skos:Concept ; kg:paperCount ?n }"
    for backend in backends.values():
        by_count = sorted(values(backend.query(counted)))
        assert by_count == sorted(values(backend.query(stored)))
        assert len(by_count) == sum(1 for _, d in graph.nodes(data=True) if d.get("kind") == "concept")
        assert any(int(n) > 1 for _, n in by_count)  # a concept several papers share
        papers = values(backend.query("SELECT ?n WHERE { ?s a skos:ConceptScheme ; kg:paperCount ?n }"))
        assert papers == [(str(sum(1 for _, d in graph.nodes(data=True) if d.get("kind") == "paper")),)]
