"""Result claims in the RDF (issue 37, item 1): each claim of graph.json a kg:Result with its value,
unit, kind, linked concepts, score and sentence (oa:TextQuoteSelector + oa:TextPositionSelector);
the SHACL shapes check them; schemas/queries/leaderboard.rq ranks them. On the hand-made sample
graph (tests/conftest.py): p2 states 61.2 F1 on MuSiQue (score 0.8) and a gain of 3.5 points over
BERT (score 0.3, below the default threshold)."""

from __future__ import annotations

import io

import pytest
import rdflib
from rdflib import Literal, URIRef
from rdflib.namespace import RDF, XSD

from kg.rdf import writers
from kg.results import MIN_RESULT_SCORE
from kg.sparql import engine as sparql

BASE = "https://w3id.org/kg-ml/resource/"
KG = rdflib.Namespace("https://w3id.org/kg-ml/ontology#")
OA = rdflib.Namespace("http://www.w3.org/ns/oa#")
P2 = URIRef(BASE + "paper/p2")
CLAIM = URIRef(BASE + "result/p2/58-62")
GAIN = URIRef(BASE + "result/p2/64-67")
SENTENCE = "We evaluate BERT and HippoRAG on MuSiQue and report F1 of 61.2, 3.5 points over BERT."


def rdf_of(graph) -> rdflib.Graph:
    buffer = io.BytesIO()
    writers.serialize(graph, buffer, format="ttl")
    return rdflib.Graph().parse(data=buffer.getvalue().decode("utf-8"), format="turtle")


@pytest.fixture(scope="module")
def data(sample_graph) -> rdflib.Graph:
    return rdf_of(sample_graph())


def test_every_claim_is_a_result_of_its_paper(data: rdflib.Graph) -> None:
    assert set(data.objects(P2, KG.hasResult)) == {CLAIM, GAIN}
    assert set(data.subjects(RDF.type, KG.Result)) == {CLAIM, GAIN}


def test_a_claim_states_its_value_links_and_score(data: rdflib.Graph) -> None:
    one = {p: o for p, o in data.predicate_objects(CLAIM) if p not in (KG.statedIn,)}
    assert one[KG.value] == Literal("61.2", datatype=XSD.decimal)
    assert (one[KG.valueText], one[KG.resultKind], float(one[KG.score])) == (Literal("61.2"), Literal("absolute"), 0.8)
    assert one[KG.resultMetric] == URIRef(BASE + "concept/metric%2Ff1") and one[KG.metricText] == Literal("F1")
    assert one[KG.resultDataset] == URIRef(BASE + "concept/dataset%2Fmusique")
    assert one[KG.resultMethod] == URIRef(BASE + "concept/method%2Fhipporag")
    assert KG.unit not in one  # the claim states none
    gain = {p: o for p, o in data.predicate_objects(GAIN)}
    assert (gain[KG.resultKind], gain[KG.unit], float(gain[KG.score])) == (Literal("improvement"), Literal("points"), 0.3)
    assert gain[KG.resultBaseline] == URIRef(BASE + "concept/method%2Fbert") and gain[KG.baselineText] == Literal("BERT")
    assert KG.resultMetric not in gain and KG.resultDataset not in gain  # low-scored claims stay, with their score


def test_the_sentence_is_a_quote_and_a_position_on_the_paper(data: rdflib.Graph) -> None:
    target = data.value(CLAIM, KG.statedIn)
    assert data.value(target, OA.hasSource) == P2
    selectors = {data.value(s, RDF.type): s for s in data.objects(target, OA.hasSelector)}
    assert data.value(selectors[OA.TextQuoteSelector], OA.exact) == Literal(SENTENCE)
    position = selectors[OA.TextPositionSelector]
    assert (data.value(position, OA.start).toPython(), data.value(position, OA.end).toPython()) == (0, len(SENTENCE))


def test_results_validate_and_the_shapes_catch_a_broken_one(data: rdflib.Graph, shacl_shapes) -> None:
    import pyshacl

    conforms, _, report = pyshacl.validate(data, shacl_graph=shacl_shapes)
    assert conforms, report
    broken = rdflib.Graph()
    for triple in data:
        broken.add(triple)
    broken.remove((CLAIM, KG.value, None))  # a result without its value
    broken.add((GAIN, KG.resultDataset, URIRef(BASE + "concept/method%2Fbert")))  # a method as a dataset
    conforms, results, _ = pyshacl.validate(broken, shacl_graph=shacl_shapes)
    sh = rdflib.Namespace("http://www.w3.org/ns/shacl#")
    assert not conforms
    assert {results.value(r, sh.focusNode) for r in results.subjects(RDF.type, sh.ValidationResult)} == {CLAIM, GAIN}


def test_leaderboard_query_threshold_is_kgs() -> None:
    assert f"FILTER (?score >= {MIN_RESULT_SCORE:g})" in sparql.example_queries()["leaderboard"]


@pytest.mark.parametrize("backend", ["rdflib", "oxigraph"])
@pytest.mark.parametrize("name", ["musique", "MuSiQue", "MUSIQUES"])
def test_leaderboard_query(sparql_backends, plain_rows, backend: str, name: str) -> None:
    result = sparql_backends[backend].query(sparql.example_queries()["leaderboard"], {"dataset": name})
    assert result.variables == ("dataset", "metric", "value", "unit", "method", "paperId", "year", "score", "sentence")
    assert plain_rows(result) == [("MuSiQue", "F1", "61.2", None, "HippoRAG", "p2", "2025", "0.8", SENTENCE)]  # the gain is not ranked
