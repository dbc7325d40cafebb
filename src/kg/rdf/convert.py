"""The triple stream as rdflib terms: the small-graph SPARQL backend and the tests.

The one pyoxigraph → rdflib term conversion, keeping datatypes and language tags. Import
this module only where rdflib is wanted: rdflib takes a while to import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyoxigraph as ox
import rdflib

from kg.rdf.terms import DEFAULT_BASE, PREFIXES
from kg.rdf.triples import triples
from kg.rdf.vocab import XSD_STRING

if TYPE_CHECKING:
    import networkx as nx


def to_rdflib(graph: nx.DiGraph[str], *, base: str = DEFAULT_BASE, into: rdflib.Graph | None = None) -> rdflib.Graph:
    """An rdflib Graph holding the same triples as every other sink (added to `into`, e.g.
    a Dataset's default graph, when given)."""
    result = rdflib.Graph() if into is None else into
    for prefix, namespace in PREFIXES.items():
        result.bind(prefix, namespace, override=True)
    context = result
    convert = to_rdflib_term
    result.addN((convert(t.subject), convert(t.predicate), convert(t.object), context) for t in triples(graph, base=base))
    return result


def to_rdflib_term(term: Any) -> rdflib.URIRef | rdflib.Literal:
    """A pyoxigraph IRI or literal as rdflib's, with its datatype or language tag."""
    if isinstance(term, ox.NamedNode):
        return rdflib.URIRef(term.value)
    if isinstance(term, ox.Literal):
        if term.language:
            return rdflib.Literal(term.value, lang=term.language)
        if term.datatype == XSD_STRING:
            return rdflib.Literal(term.value)  # rdflib parses "x" with no datatype
        return rdflib.Literal(term.value, datatype=rdflib.URIRef(term.datatype.value), normalize=False)
    raise TypeError(f"unexpected term {term!r}")
