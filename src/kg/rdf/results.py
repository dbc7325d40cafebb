"""The RDF of result claims: each claim a paper's abstract states that can be stated (offsets
inside the abstract, a finite number) is a ``kg:Result`` node of the paper (``kg:hasResult``): its
value, unit and kind, the concepts it is linked to and the words that named them, its score, and
the sentence stating it as a quote and a position in the abstract. `kg.rdf.triples` yields these
triples after each paper's own; the claims come from `kg.results` (graph.json's ``results``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import pyoxigraph as ox

from kg.rdf.vocab import KG_SCORE, OA_END, OA_EXACT, OA_POSITION, OA_QUOTE, OA_SELECTOR, OA_SOURCE, OA_SPECIFIC, OA_START, PROV_GENERATED_BY, RDF_TYPE, Iris, decimal_literal, text_literal, vocab_iri

KG_RESULT = vocab_iri("kg", "Result")
KG_HAS_RESULT = vocab_iri("kg", "hasResult")
KG_VALUE = vocab_iri("kg", "value")
KG_VALUE_TEXT = vocab_iri("kg", "valueText")
KG_VALUE_START = vocab_iri("kg", "valueStart")
KG_VALUE_END = vocab_iri("kg", "valueEnd")
KG_UNIT = vocab_iri("kg", "unit")
KG_RESULT_KIND = vocab_iri("kg", "resultKind")
KG_PROPOSED = vocab_iri("kg", "proposed")
KG_STATED_IN = vocab_iri("kg", "statedIn")
# A result's links: (graph.json field, object property to the concept, datatype property for the words)
RESULT_LINKS = tuple(
    (field, vocab_iri("kg", "result" + field.capitalize()), vocab_iri("kg", field + "Text")) for field in ("metric", "dataset", "task", "method", "baseline")
)


RESULT_TYPES = {"metric": "METRIC", "dataset": "DATASET", "task": "TASK", "method": "METHOD", "baseline": "METHOD"}


def result_concepts(result: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for field in RESULT_TYPES:
        cid = result.get(field + "_concept")
        if isinstance(cid, str):
            yield field, cid


def stated_results(data: dict[str, Any], concepts_known: frozenset[tuple[str, str]]) -> list[dict[str, Any]]:
    """The paper's result claims that can be stated: offsets inside its abstract, a finite number;
    one per value span (the first), sorted; a link to a concept the graph lacks keeps only its words."""
    abstract = str(data.get("abstract") or "")
    seen: dict[tuple[int, int], dict[str, Any]] = {}
    for result in data.get("results") or ():
        if not isinstance(result, dict):
            continue
        try:
            start, end, sent_start, sent_end = (int(result[k]) for k in ("start", "end", "sent_start", "sent_end"))
            number = float(result["number"])
        except (KeyError, TypeError, ValueError):
            continue
        if not (0 <= sent_start <= start < end <= sent_end <= len(abstract)) or not math.isfinite(number):
            continue
        links = {f: (result.get(f + "_concept") if (f, result.get(f + "_concept")) in concepts_known else None) for f in RESULT_TYPES}
        seen.setdefault((start, end), {**result, "start": start, "end": end, "sent_start": sent_start, "sent_end": sent_end, "number": number, "links": links})
    return [seen[key] for key in sorted(seen)]


def result_triples(iris: Iris, iri: str, paper: ox.NamedNode, run: ox.NamedNode, result: dict[str, Any], abstract: str) -> Iterator[ox.Triple]:
    """A kg:Result: the value, its unit and kind, the linked concepts and the words they were named
    with, the score, and the sentence stating it as a quote and a position in the paper's abstract."""
    T = ox.Triple
    node, target = ox.NamedNode(iri), ox.NamedNode(iri + "#sentence")
    quote, position = ox.NamedNode(iri + "#quote"), ox.NamedNode(iri + "#position")
    yield T(node, RDF_TYPE, KG_RESULT)
    yield T(node, KG_VALUE, decimal_literal(result["number"]))
    yield T(node, KG_VALUE_TEXT, text_literal(result.get("value") or abstract[result["start"] : result["end"]]))
    if result.get("unit"):
        yield T(node, KG_UNIT, text_literal(result["unit"]))
    yield T(node, KG_RESULT_KIND, text_literal(result.get("kind") or "absolute"))
    for field, concept_link, words in RESULT_LINKS:
        concept = result["links"][field]
        if concept is not None:
            yield T(node, concept_link, iris.concept(concept))
        if result.get(field):
            yield T(node, words, text_literal(result[field]))
    yield T(node, KG_PROPOSED, ox.Literal(bool(result.get("proposed"))))
    if isinstance(result.get("score"), (int, float)) and math.isfinite(result["score"]):
        yield T(node, KG_SCORE, decimal_literal(min(max(float(result["score"]), 0.0), 1.0)))
    yield T(node, KG_VALUE_START, ox.Literal(result["start"]))
    yield T(node, KG_VALUE_END, ox.Literal(result["end"]))
    yield T(node, KG_STATED_IN, target)
    yield T(node, PROV_GENERATED_BY, run)
    yield T(target, RDF_TYPE, OA_SPECIFIC)
    yield T(target, OA_SOURCE, paper)
    yield T(target, OA_SELECTOR, quote)
    yield T(target, OA_SELECTOR, position)
    yield T(quote, RDF_TYPE, OA_QUOTE)
    yield T(quote, OA_EXACT, text_literal(abstract[result["sent_start"] : result["sent_end"]]))
    yield T(position, RDF_TYPE, OA_POSITION)
    yield T(position, OA_START, ox.Literal(result["sent_start"]))
    yield T(position, OA_END, ox.Literal(result["sent_end"]))
