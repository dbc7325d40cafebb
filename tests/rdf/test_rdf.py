"""kg.rdf and kg.rdf.store: the RDF model, IRIs, serialisations, ontology and SHACL shapes.

`sample_graph()` (a conftest.py fixture, shared with the other RDF/SPARQL test modules) is a
hand-made graph with every concept type, a proposed concept, a broader link, awkward ids and text.
"""

from __future__ import annotations

import hashlib
import io
import json

import networkx as nx
import pyoxigraph as ox
import pytest
import rdflib
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rdflib import Literal, URIRef
from rdflib.compare import isomorphic
from rdflib.namespace import RDF, RDFS

from kg.graph import build_graph, write_graphml
from kg.model import Concept, Mention, Paper, PaperEntities
from kg.rdf import convert, terms, triples, writers
from kg.rdf.store import to_store

KG = rdflib.Namespace(terms.KG)
DCT = rdflib.Namespace("http://purl.org/dc/terms/")
SKOS = rdflib.Namespace("http://www.w3.org/2004/02/skos/core#")
DCTERMS = rdflib.Namespace("http://purl.org/dc/terms/")
OA = rdflib.Namespace("http://www.w3.org/ns/oa#")
PROV = rdflib.Namespace("http://www.w3.org/ns/prov#")
BASE = terms.DEFAULT_BASE


def turtle_of(graph: nx.DiGraph, fmt: str = "ttl") -> bytes:
    buffer = io.BytesIO()
    writers.serialize(graph, buffer, format=fmt)
    return buffer.getvalue()


def parse(data: bytes, fmt: str = "turtle") -> rdflib.Graph:
    return rdflib.Graph().parse(data=data.decode("utf-8"), format=fmt)


P1 = URIRef(BASE + "paper/p1")
P2 = URIRef(BASE + "paper/p2")
P3 = URIRef(BASE + "paper/p3%2Fx%20y")
HIPPORAG = URIRef(BASE + "concept/method%2Fhipporag")


# --- IRIs ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "segment"),
    [
        ("p1", "p1"),
        ("method/bert", "method%2Fbert"),
        ("a b", "a%20b"),
        ('<x> "q"', "%3Cx%3E%20%22q%22"),
        ("é", "%C3%A9"),
        ("a~b", "a%7Eb"),
        ("", "~empty"),
        (".", "%2E"),
        ("..", "%2E%2E"),
        ("50%", "50%25"),
    ],
)
def test_iri_segment_examples(text: str, segment: str) -> None:
    assert terms.iri_segment(text) == segment


def test_long_ids_are_cut_and_hashed_deterministically() -> None:
    long_a, long_b = "x" * 500, "x" * 499 + "y"
    seg_a, seg_b = terms.iri_segment(long_a), terms.iri_segment(long_b)
    assert seg_a == "x" * 80 + "~" + hashlib.sha256(long_a.encode()).hexdigest()[:32]
    assert seg_a != seg_b and seg_a[:81] == seg_b[:81]
    assert terms.iri_segment(long_a) == seg_a  # stable
    # a %XX triplet is never split at the cut
    accented = terms.iri_segment("é" * 100)
    assert accented.split("~")[0].endswith("%A9") and len(accented.split("~")[0]) % 6 == 0


def test_every_iri_is_valid_for_awkward_text() -> None:
    for text in ["", " ", "a/b/c", "<>\"{}|\\^`", "\n\t", "日本語", "\ud800", "x" * 5000, "?#[]@!$&'()*+,;="]:
        ox.NamedNode(triples.Iris().paper(text).value)  # raises ValueError on an invalid IRI
        ox.NamedNode(triples.Iris().concept(text).value)


def test_lone_surrogates_become_replacement_characters() -> None:
    # JSON can carry "\ud800"; RDF literals must be valid Unicode, IRIs stay injective.
    papers = [Paper(id="s\ud800", title="bad \ud800 title", abstract="text")]
    graph = build_graph(papers, [], [])
    parsed = parse(turtle_of(graph))
    paper = URIRef(BASE + "paper/s%ED%A0%80")
    assert parsed.value(paper, DCT.title) == Literal("bad \ufffd title")
    assert parsed.value(paper, DCT.identifier) == Literal("s\ufffd")


def test_base_is_configurable_and_checked() -> None:
    assert triples.Iris("https://example.org/kg").paper("p1").value == "https://example.org/kg/paper/p1"
    with pytest.raises(ValueError):
        triples.Iris("not an iri/")


# --- the model ---------------------------------------------------------------------------


def test_paper_triples(sample_graph) -> None:
    g = parse(turtle_of(sample_graph()))
    assert set(g.objects(P1, RDF.type)) == {URIRef("http://purl.org/spar/fabio/ResearchPaper"), URIRef("http://schema.org/ScholarlyArticle")}
    assert g.value(P1, DCT.identifier) == Literal("p1")
    assert g.value(P1, DCT.title) == Literal("HippoRAG: memory")
    assert g.value(P1, DCT.issued) == Literal("2024", datatype=rdflib.XSD.gYear)
    assert g.value(P1, URIRef("http://schema.org/url")) == Literal("https://example.org/p1", datatype=rdflib.XSD.anyURI)
    assert g.value(P1, URIRef("http://prismstandard.org/namespaces/basic/2.0/doi")) == Literal("10.1/abc")
    assert g.value(P1, KG.venue) == Literal("NeurIPS")
    creators = {g.value(a, URIRef("http://xmlns.com/foaf/0.1/name")) for a in g.objects(P1, DCT.creator)}
    assert creators == {Literal("Ada Lovelace"), Literal("Alan Turing")}
    assert g.value(P3, KG.titleDerived) == Literal(True)
    assert g.value(P1, KG.titleDerived) is None
    assert g.value(P2, DCT.title) == Literal('A study of <b>BERT</b> & "friends"')


def test_links_typed_generic_proposed_and_qualified(sample_graph) -> None:
    g = parse(turtle_of(sample_graph()))
    # proposed: kg:proposes AND the typed link AND dcterms:subject
    assert (P1, KG.proposes, HIPPORAG) in g
    assert (P1, KG.usesMethod, HIPPORAG) in g
    assert (P1, DCT.subject, HIPPORAG) in g
    assert (P2, KG.usesMethod, HIPPORAG) in g and (P2, KG.proposes, HIPPORAG) not in g
    typed = {p for p in (KG.usesMethod, KG.usesDataset, KG.addressesTask, KG.reportsMetric, KG.usesHardware) for _ in g.triples((None, p, None))}
    assert typed == {KG.usesMethod, KG.usesDataset, KG.addressesTask, KG.reportsMetric, KG.usesHardware}
    # every typed link has its dcterms:subject twin, and nothing else does
    typed_pairs = {(s, o) for p in typed for s, o in g.subject_objects(p)}
    assert typed_pairs == set(g.subject_objects(DCT.subject))
    link = URIRef(BASE + "link/p2/method%2Fhipporag")
    assert (P2, KG.hasConceptLink, link) in g
    assert g.value(link, KG.linkedConcept) == HIPPORAG
    assert g.value(link, KG.role) == Literal("used")
    assert g.value(link, KG.mentionCount) == Literal(1)
    assert g.value(link, KG.weight) == Literal("0.7", datatype=rdflib.XSD.decimal)


def test_concepts_skos(sample_graph) -> None:
    g = parse(turtle_of(sample_graph()))
    rag = URIRef(BASE + "concept/method%2Frag")
    assert set(g.objects(rag, RDF.type)) == {KG.Method, SKOS.Concept}
    assert list(g.objects(rag, SKOS.prefLabel)) == [Literal("retrieval-augmented generation")]
    assert list(g.objects(rag, SKOS.altLabel)) == [Literal("RAG")]
    assert (HIPPORAG, SKOS.broader, rag) in g
    assert len(set(g.subjects(RDF.type, SKOS.Concept))) == 7


def test_every_concept_has_the_lookup_keys_of_its_labels(sample_graph) -> None:
    """kg:key: normalize_key of the prefLabel and of each altLabel, distinct (what a bound
    label is matched against)."""
    g = parse(turtle_of(sample_graph()))
    keys = lambda cid: sorted(str(k) for k in g.objects(URIRef(BASE + "concept/" + cid.replace("/", "%2F")), KG.key))  # noqa: E731
    assert keys("method/rag") == ["rag", "retrieval augmented generation"]
    assert keys("method/bert") == ["bert", "bidirectional encoder representations from transformer"]
    assert keys("dataset/musique") == ["musique"]
    assert all(keys(str(g.value(c, DCTERMS.identifier))) for c in g.subjects(RDF.type, SKOS.Concept))


def test_lookup_keys_fold_case_plural_and_hyphens() -> None:
    assert triples.lookup_keys("Large Language Models", ["LLMs", "LLM", "large-language model"]) == ["large language model", "llm"]
    assert triples.lookup_keys("ImageNet", ["ImageNets", "imagenet"]) == ["imagenet"]
    assert triples.lookup_keys("()", []) == []  # nothing left: the concept id stands in (see triples)


def test_mention_provenance(sample_graph) -> None:
    g = parse(turtle_of(sample_graph()))
    annotation = URIRef(BASE + "annotation/p1/method%2Fhipporag/11-19")
    assert g.value(annotation, RDF.type) == OA.Annotation
    assert g.value(annotation, OA.hasBody) == HIPPORAG
    target = g.value(annotation, OA.hasTarget)
    assert g.value(target, RDF.type) == OA.SpecificResource
    assert g.value(target, OA.hasSource) == P1
    selector = g.value(target, OA.hasSelector)
    assert g.value(selector, RDF.type) == OA.TextPositionSelector
    assert (g.value(selector, OA.start), g.value(selector, OA.end)) == (Literal(11), Literal(19))
    run = g.value(annotation, PROV.wasGeneratedBy)
    assert set(g.subjects(RDF.type, PROV.Activity)) == {run}
    assert (g.value(run, KG.pipelineName), g.value(run, KG.pipelineVersion)) == (Literal("kg-extract"), Literal("1.0"))
    assert len(set(g.subjects(RDF.type, OA.Annotation))) == 9  # one per mention


def test_triple_count(sample_graph) -> None:
    # 246 + 9 kg:key (7 labels, 2 altLabels) + 9 kg:score (one per annotation) + 8 kg:paperCount (7 concepts, the scheme)
    # + 50 for two kg:Result (2 kg:hasResult, 16 + 14 on the results, 9 on each sentence)
    assert sum(1 for _ in triples.triples(sample_graph())) == 322


# --- serialisations ----------------------------------------------------------------------


def test_turtle_is_deterministic_and_parses_back_isomorphic(sample_graph) -> None:
    graph = sample_graph()
    first, second = turtle_of(graph), turtle_of(sample_graph())
    assert first == second
    parsed = parse(first)
    expected = convert.to_rdflib(graph)
    assert len(parsed) == len(expected) == 322
    assert isomorphic(parsed, expected)
    assert set(parsed) == set(expected)  # no blank nodes: plain set equality


@pytest.mark.parametrize(("fmt", "rdflib_format"), [("nt", "nt"), ("jsonld", "json-ld")])
def test_other_formats_hold_the_same_triples(sample_graph, fmt: str, rdflib_format: str) -> None:
    graph = sample_graph()
    assert set(parse(turtle_of(graph, fmt), rdflib_format)) == set(convert.to_rdflib(graph))


def test_store_holds_the_same_triples(sample_graph) -> None:
    graph = sample_graph()
    store = to_store(graph)
    assert len(store) == 322
    assert {(q.subject, q.predicate, q.object) for q in store} == {(t.subject, t.predicate, t.object) for t in triples.triples(graph)}


def test_nt_shards_partition_by_subject(sample_graph, tmp_path) -> None:
    graph = sample_graph()
    count = writers.write_nt_shards(graph, tmp_path / "graph.nt", shards=3)
    paths = sorted(tmp_path.iterdir())
    assert [p.name for p in paths] == ["graph-00000-of-00003.nt", "graph-00001-of-00003.nt", "graph-00002-of-00003.nt"]
    parts = [parse(p.read_bytes(), "nt") for p in paths]
    assert count == 322 == sum(len(part) for part in parts)
    union = set().union(*(set(part) for part in parts))
    assert union == set(convert.to_rdflib(graph))
    subjects = [set(part.subjects()) for part in parts]
    assert all(not (a & b) for i, a in enumerate(subjects) for b in subjects[i + 1 :])  # a subject lives in one shard
    assert all(len(part) > 0 for part in parts)


def test_graphml_encodes_lists(sample_graph, tmp_path) -> None:
    graph = sample_graph()
    write_graphml(graph, tmp_path / "g.graphml")
    back = nx.read_graphml(tmp_path / "g.graphml")
    assert json.loads(back.nodes["paper:p1"]["authors"]) == ["Ada Lovelace", "Alan Turing"]
    assert json.loads(back.edges["paper:p1", "concept:method/hipporag"]["spans"]) == [[11, 19, 0.9]]
    assert back.edges["paper:p1", "concept:method/hipporag"]["role"] == "proposed"
    assert "url" not in back.nodes["paper:p3/x y"]  # None dropped
    assert back.number_of_nodes() == 10 and back.number_of_edges() == 10


# --- ontology and shapes -------------------------------------------------------------------


def test_ontology_declares_every_kg_term_used_with_label_and_comment(sample_graph, ontology) -> None:
    declared = {s for s in ontology.subjects(RDFS.label) if str(s).startswith(terms.KG)}
    data = parse(turtle_of(sample_graph()))
    used = {term for triple in data for term in triple if isinstance(term, URIRef) and str(term).startswith(terms.KG)}
    assert used and used <= declared, used - declared
    for term in declared:
        assert ontology.value(term, RDFS.comment) is not None, term
    for cls in ("Method", "Dataset", "Task", "Metric", "Hardware"):
        assert (KG[cls], RDFS.subClassOf, SKOS.Concept) in ontology
    for prop in ("proposes", "usesMethod", "usesDataset", "addressesTask", "reportsMetric", "usesHardware"):
        assert (KG[prop], RDFS.subPropertyOf, DCT.subject) in ontology


def test_graph_validates_against_shapes(sample_graph, shacl_shapes) -> None:
    import pyshacl

    conforms, _, report = pyshacl.validate(parse(turtle_of(sample_graph())), shacl_graph=shacl_shapes)
    assert conforms, report


def test_shapes_catch_a_broken_graph(sample_graph, shacl_shapes) -> None:
    import pyshacl

    data = parse(turtle_of(sample_graph()))
    data.remove((None, SKOS.prefLabel, Literal("BERT")))  # a concept without prefLabel
    data.add((HIPPORAG, SKOS.prefLabel, Literal("Hippo")))  # and one with two
    selector = URIRef(BASE + "annotation/p1/task%2Fqa/24-42#selector")
    data.set((selector, OA.end, Literal(500)))  # a span beyond the abstract
    data.add((P1, KG.usesDataset, HIPPORAG))  # a method used as a dataset
    conforms, results, _ = pyshacl.validate(data, shacl_graph=shacl_shapes)
    assert not conforms
    sh = rdflib.Namespace("http://www.w3.org/ns/shacl#")
    focus = {(results.value(r, sh.focusNode), results.value(r, sh.sourceConstraintComponent)) for r in results.subjects(RDF.type, sh.ValidationResult)}
    assert focus == {
        (URIRef(BASE + "concept/method%2Fbert"), sh.MinCountConstraintComponent),
        (HIPPORAG, sh.MaxCountConstraintComponent),
        (selector, sh.SPARQLConstraintComponent),
        (P1, sh.ClassConstraintComponent),
    }


def _title_mention_graph() -> nx.DiGraph:
    """One paper whose title and abstract both name HippoRAG."""
    paper = Paper("t1", "HippoRAG Helps", "We use HippoRAG here.")
    mentions = (
        Mention(0, 8, "HippoRAG", "METHOD", "method/hipporag", "proposed", "coinage", 0.8, 0, 14, where="title"),
        Mention(7, 15, "HippoRAG", "METHOD", "method/hipporag", "used", "coinage", 0.9, 0, 21),
    )
    return build_graph([paper], [PaperEntities("t1", mentions)], [Concept("method/hipporag", "METHOD", "HippoRAG")])


def test_a_mention_in_the_title_counts_and_its_selector_targets_the_title(shacl_shapes) -> None:
    import pyshacl

    graph = _title_mention_graph()
    edge = graph.edges["paper:t1", "concept:method/hipporag"]
    assert (edge["mentions"], edge["weight"], edge["role"], edge["spans"]) == (2, 1.7, "proposed", [[0, 8, 0.8, "title"], [7, 15, 0.9]])
    g = parse(turtle_of(graph))
    link = URIRef(BASE + "link/t1/method%2Fhipporag")
    assert g.value(link, KG.mentionCount) == Literal(2)
    selectors = {}
    for annotation in g.subjects(RDF.type, OA.Annotation):
        selector = g.value(g.value(annotation, OA.hasTarget), OA.hasSelector)
        selectors[str(annotation).rsplit("/", 1)[1]] = (g.value(selector, OA.start).toPython(), g.value(selector, OA.end).toPython(), g.value(selector, KG.textField))
    assert selectors == {"title-0-8": (0, 8, DCT.title), "7-15": (7, 15, None)}
    conforms, _, report = pyshacl.validate(g, shacl_graph=shacl_shapes)
    assert conforms, report
    title_selector = URIRef(BASE + "annotation/t1/method%2Fhipporag/title-0-8#selector")
    g.set((title_selector, OA.end, Literal(18)))  # beyond the title (14 characters), not beyond the abstract (21)
    conforms, results, _ = pyshacl.validate(g, shacl_graph=shacl_shapes)
    sh = rdflib.Namespace("http://www.w3.org/ns/shacl#")
    assert not conforms and {results.value(r, sh.focusNode) for r in results.subjects(RDF.type, sh.ValidationResult)} == {title_selector}


# --- any text round-trips (property test) -------------------------------------------------

texts = st.text(max_size=60)
ids = st.text(max_size=40)


@st.composite
def random_graphs(draw) -> nx.DiGraph:
    abstract = draw(st.text(min_size=1, max_size=120))
    concept_ids = draw(st.lists(ids, min_size=1, max_size=4, unique=True))
    concepts = [
        Concept(id=cid, type=draw(st.sampled_from(["METHOD", "DATASET", "TASK", "METRIC", "HARDWARE"])), pref_label=draw(texts) or "x", alt_labels=tuple(draw(st.lists(texts, max_size=2))))
        for cid in concept_ids
    ]
    paper_ids = draw(st.lists(ids, min_size=1, max_size=3, unique=True))
    papers, entities = [], []
    for pid in paper_ids:
        papers.append(Paper(id=pid, title=draw(texts), abstract=abstract, authors=tuple(draw(st.lists(texts, max_size=2))),
            venue=draw(st.none() | texts), url=draw(st.none() | texts), year=draw(st.none() | st.integers(1900, 2100))))
        mentions = []
        for cid in draw(st.lists(st.sampled_from(concept_ids), max_size=3)):
            start = draw(st.integers(0, len(abstract) - 1))
            end = draw(st.integers(start + 1, len(abstract)))
            role, score = draw(st.sampled_from(["used", "proposed"])), draw(st.floats(0, 1))
            mentions.append(Mention(start=start, end=end, text=abstract[start:end], label="METHOD", concept=cid, role=role, source="vocab", score=score, sent_start=0, sent_end=end))
        entities.append(PaperEntities(pid, tuple(mentions)))
    return build_graph(papers, entities, concepts, meta={"pipeline": {"name": draw(texts), "version": draw(texts)}})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_graphs())
def test_any_text_round_trips_through_turtle(graph: nx.DiGraph) -> None:
    data = turtle_of(graph)
    expected = convert.to_rdflib(graph)
    parsed = parse(data)
    assert set(parsed) == set(expected)
    assert isomorphic(parsed, expected)
    # and pyoxigraph (a second, independent Turtle parser) reads the same triples
    assert len(list(ox.parse(data, format=ox.RdfFormat.TURTLE))) == len(expected)
    assert turtle_of(graph) == data  # stable
