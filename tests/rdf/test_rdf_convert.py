"""kg.rdf.convert: the one pyoxigraph → rdflib term conversion keeps datatypes and language tags."""

from __future__ import annotations

import pyoxigraph as ox
import pytest
import rdflib

from kg.rdf.convert import to_rdflib, to_rdflib_term
from kg.rdf.terms import DEFAULT_BASE, KG

DCT = rdflib.Namespace("http://purl.org/dc/terms/")
XSD = rdflib.Namespace("http://www.w3.org/2001/XMLSchema#")
P1 = rdflib.URIRef(DEFAULT_BASE + "paper/p1")  # paper p1 of the sample graph


@pytest.mark.parametrize(
    ("term", "expected"),
    [
        (ox.Literal("0.9", datatype=ox.NamedNode(str(XSD.decimal))), rdflib.Literal("0.9", datatype=XSD.decimal)),
        (ox.Literal("2024", datatype=ox.NamedNode(str(XSD.gYear))), rdflib.Literal("2024", datatype=XSD.gYear)),
        (ox.Literal("7"), rdflib.Literal("7")),  # xsd:string: rdflib's plain literal
        (ox.Literal("chat", language="fr"), rdflib.Literal("chat", lang="fr")),
        (ox.NamedNode("https://example.org/a"), rdflib.URIRef("https://example.org/a")),
    ],
)
def test_terms_keep_datatype_and_language(term, expected) -> None:
    converted = to_rdflib_term(term)
    assert converted == expected
    assert getattr(converted, "datatype", None) == getattr(expected, "datatype", None)
    assert getattr(converted, "language", None) == getattr(expected, "language", None)


def test_decimal_keeps_its_lexical_form() -> None:
    assert str(to_rdflib_term(ox.Literal("1.50", datatype=ox.NamedNode(str(XSD.decimal))))) == "1.50"


def test_graph_literals_keep_their_datatypes(sample_graph) -> None:
    graph = to_rdflib(sample_graph())
    assert graph.value(P1, DCT.issued).datatype == XSD.gYear
    weights = {o.datatype for o in graph.objects(None, rdflib.URIRef(KG + "weight"))}
    assert weights == {XSD.decimal}


def test_other_terms_are_refused() -> None:
    with pytest.raises(TypeError):
        to_rdflib_term(ox.BlankNode())
