"""The graph's RDF form as one stream of pyoxigraph triples, in a deterministic order.

`triples(graph)` walks the networkx graph (format in `kg.graph`) sorted, grouped by subject;
every sink (`kg.rdf.writers`, `kg.rdf.store`, `kg.rdf.convert`) consumes this one stream, so
every format and both SPARQL backends hold exactly the same triples. The model is described
in `kg.rdf`; the vocabulary's terms and `Iris`, which mints the data IRIs, are in `kg.rdf.vocab`,
the triples of result claims in `kg.rdf.results`.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from importlib import metadata
from typing import TYPE_CHECKING, Any

import pyoxigraph as ox

from kg.rdf.results import KG_HAS_RESULT, RESULT_TYPES, result_concepts, result_triples, stated_results
from kg.rdf.terms import DEFAULT_BASE
from kg.rdf.vocab import (
    DC_ABSTRACT,
    DC_CREATOR,
    DC_IDENTIFIER,
    DC_ISSUED,
    DC_SUBJECT,
    DC_TITLE,
    FABIO_PAPER,
    FOAF_AGENT,
    FOAF_NAME,
    KG_ARXIV,
    KG_CLASS,
    KG_COSINE,
    KG_HAS_LINK,
    KG_HAS_SIMILAR,
    KG_KEY,
    KG_LINK,
    KG_LINKED_CONCEPT,
    KG_MENTIONS,
    KG_PAPER_COUNT,
    KG_PIPELINE_NAME,
    KG_PIPELINE_VERSION,
    KG_PROPOSES,
    KG_RANK,
    KG_ROLE,
    KG_SCORE,
    KG_SIMILAR_PAPER,
    KG_SIMILAR_TO,
    KG_SIMILARITY,
    KG_TEXT_FIELD,
    KG_TITLE_DERIVED,
    KG_USES,
    KG_VENUE,
    KG_WEIGHT,
    OA_ANNOTATION,
    OA_BODY,
    OA_END,
    OA_IDENTIFYING,
    OA_MOTIVATED,
    OA_POSITION,
    OA_SELECTOR,
    OA_SOURCE,
    OA_SPECIFIC,
    OA_START,
    OA_TARGET,
    PRISM_DOI,
    PROV_ACTIVITY,
    PROV_ENDED,
    PROV_GENERATED_BY,
    RDF_TYPE,
    RDFS_LABEL,
    SCHEMA_ARTICLE,
    SCHEMA_KEYWORDS,
    SCHEMA_URL,
    SKOS_ALT,
    SKOS_BROADER,
    SKOS_CONCEPT,
    SKOS_IN_SCHEME,
    SKOS_PREF,
    SKOS_SCHEME,
    XSD_ANYURI,
    XSD_DATETIME,
    XSD_GYEAR,
    Iris,
    decimal_literal,
    text_literal,
)
from kg.text.vocab import normalize_key

if TYPE_CHECKING:  # only the graph's methods are used: no networkx import needed here
    import networkx as nx

# Bump by hand whenever a code change alters the Turtle written for the same inputs (triples,
# their order, IRIs, literals): a build then makes every fragment anew instead of copying it
# from the replaced build. tests/rdf/test_turtle_version.py fails until it is bumped.
TURTLE_VERSION = 5  # 4: mentions in titles (kg:textField on their selectors); 5: kg:Result claims
# Everything besides a fragment's inputs that shapes its Turtle bytes, keyed into every digest:
# that version, the serializer, and Unicode's tables (kg:key values fold with NFKC).
_CODE = hashlib.blake2b(
    f"kg-turtle {TURTLE_VERSION} pyoxigraph {metadata.version('pyoxigraph')} unicode {unicodedata.unidata_version}".encode(),
    digest_size=32,
).digest()


_DATETIME = re.compile(r"-?\d{4,}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?")


def pipeline_of(meta: dict[str, Any]) -> tuple[str, str]:
    """(name, version) of the extraction pipeline recorded in the graph's meta."""
    pipeline = meta.get("pipeline")
    if isinstance(pipeline, dict):
        name, version = pipeline.get("name"), pipeline.get("version")
    else:
        name = pipeline if isinstance(pipeline, str) else meta.get("pipeline_name")
        version = meta.get("pipeline_version")
    return str(name or "unknown"), str(version or "unknown")


@dataclass(frozen=True, slots=True)
class Fragment:
    """The triples of one subject group: the build's head (run and concept scheme), a concept,
    a paper with its link, annotation and similarity nodes, or an author. No two fragments
    share a subject, so Turtle written fragment by fragment is the Turtle of the whole stream,
    and a store can drop or add one fragment alone (`kg.rdf.fragments`)."""

    key: bytes  # digest of this module's code, the base and every input the triples are made from
    make: Callable[[], Iterator[ox.Triple]]


def _digest(*inputs: Any) -> bytes:
    text = json.dumps(inputs, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16, key=_CODE).digest()


def triples(graph: nx.DiGraph[str], *, base: str = DEFAULT_BASE) -> Iterator[ox.Triple]:
    """Every triple of the graph's RDF form, in a deterministic order (grouped by subject)."""
    for fragment in fragments(graph, base=base):
        yield from fragment.make()


def fragments(graph: nx.DiGraph[str], *, base: str = DEFAULT_BASE) -> Iterator[Fragment]:
    """The graph's triples as fragments, in `triples` order: head, concepts, papers, authors.

    Each fragment's triples are made from exactly the inputs its key digests, so a fragment
    with a key seen before has the same triples."""
    iris = Iris(base)
    name, version = pipeline_of(graph.graph)
    created = graph.graph.get("created")
    created = created if isinstance(created, str) and _DATETIME.fullmatch(created) else None
    nodes = graph.nodes
    paper_keys = sorted(k for k, d in nodes(data=True) if d.get("kind") == "paper")
    yield Fragment(
        _digest(iris.base, "head", name, version, created, len(paper_keys)),
        partial(_head_triples, iris, name, version, created, len(paper_keys)),
    )

    concept_keys = sorted(k for k, d in nodes(data=True) if d.get("kind") == "concept")
    concept_ids = {key: str(nodes[key]["id"]) for key in concept_keys}
    for key in concept_keys:
        data = nodes[key]
        broader = [concept_ids[v] for v in sorted(v for _, v, d in graph.out_edges(key, data=True) if d.get("kind") == "broader" and v in concept_ids)]
        # df, stored so that idf and "how many papers" need no count over the whole graph
        papers = sum(1 for _, _, d in graph.in_edges(key, data=True) if d.get("kind") == "mentions")
        yield Fragment(
            _digest(iris.base, "concept", concept_ids[key], data, broader, papers),
            partial(_concept_triples, iris, concept_ids[key], data, broader, papers),
        )

    concept_types = {concept_ids[key]: nodes[key].get("type") for key in concept_keys}
    authors: set[str] = set()
    for key in paper_keys:
        data = nodes[key]
        authors.update(a for a in data.get("authors") or () if str(a).strip())
        edges = sorted((v, d) for _, v, d in graph.out_edges(key, data=True) if d.get("kind") == "mentions" and v in concept_ids)
        mentions = [
            (concept_ids[v], nodes[v].get("type"), d.get("role", "used"), int(d.get("mentions", 0)), float(d.get("weight", 0.0)),
             _spans(d.get("spans") or ()))
            for v, d in edges
        ]
        similar = sorted(
            (int(d.get("rank", 0)), str(nodes[v]["id"]), float(d.get("similarity", 0.0)))
            for _, v, d in graph.out_edges(key, data=True)
            if d.get("kind") == "similar"
        )
        # the concepts the paper's results link to that the graph holds with the linked type
        linked = sorted(
            {(field, cid) for result in data.get("results") or () if isinstance(result, dict) for field, cid in result_concepts(result)
             if concept_types.get(cid) == RESULT_TYPES[field]}
        )  # fmt: skip
        yield Fragment(
            _digest(iris.base, "paper", name, version, data, mentions, similar, linked),
            partial(_paper_triples, iris, iris.run(name, version), data, mentions, similar, frozenset(linked)),
        )
    for author in sorted(authors):
        yield Fragment(_digest(iris.base, "author", author), partial(_author_triples, iris, author))


def _head_triples(iris: Iris, name: str, version: str, created: str | None, papers: int) -> Iterator[ox.Triple]:
    T = ox.Triple
    run = iris.run(name, version)
    yield T(run, RDF_TYPE, PROV_ACTIVITY)
    yield T(run, RDFS_LABEL, text_literal(f"kg extraction with {name} {version}"))
    yield T(run, KG_PIPELINE_NAME, text_literal(name))
    yield T(run, KG_PIPELINE_VERSION, text_literal(version))
    if created is not None:
        yield T(run, PROV_ENDED, ox.Literal(created, datatype=XSD_DATETIME))
    scheme = iris.scheme()
    yield T(scheme, RDF_TYPE, SKOS_SCHEME)
    yield T(scheme, RDFS_LABEL, text_literal("kg concepts"))
    yield T(scheme, KG_PAPER_COUNT, ox.Literal(papers))


def _concept_triples(iris: Iris, cid: str, data: dict[str, Any], broader: list[str], papers: int) -> Iterator[ox.Triple]:
    T = ox.Triple
    node = iris.concept(cid)
    ctype = data.get("type")
    if ctype in KG_CLASS:
        yield T(node, RDF_TYPE, KG_CLASS[ctype])
    yield T(node, RDF_TYPE, SKOS_CONCEPT)
    yield T(node, DC_IDENTIFIER, text_literal(cid))
    label = data.get("label") or cid
    yield T(node, SKOS_PREF, text_literal(label))
    alts = sorted(set(data.get("alt_labels") or ()) - {data.get("label")})
    for alt in alts:
        yield T(node, SKOS_ALT, text_literal(alt))
    for lookup in lookup_keys(label, alts) or [cid]:
        yield T(node, KG_KEY, text_literal(lookup))
    yield T(node, SKOS_IN_SCHEME, iris.scheme())
    for other in broader:
        yield T(node, SKOS_BROADER, iris.concept(other))
    yield T(node, KG_PAPER_COUNT, ox.Literal(papers))


def _paper_triples(
    iris: Iris, run: ox.NamedNode, data: dict[str, Any], mentions: list[tuple[str, str | None, str, int, float, list[tuple[int, int, float | None, str]]]],
    similar: list[tuple[int, str, float]], concepts_known: frozenset[tuple[str, str]] = frozenset(),
) -> Iterator[ox.Triple]:
    T = ox.Triple
    pid = str(data["id"])
    paper = iris.paper(pid)
    yield T(paper, RDF_TYPE, FABIO_PAPER)
    yield T(paper, RDF_TYPE, SCHEMA_ARTICLE)
    yield T(paper, DC_IDENTIFIER, text_literal(pid))
    if data.get("title") is not None:
        yield T(paper, DC_TITLE, text_literal(data["title"]))
    if data.get("title_derived"):
        yield T(paper, KG_TITLE_DERIVED, ox.Literal(True))
    if data.get("abstract") is not None:
        yield T(paper, DC_ABSTRACT, text_literal(data["abstract"]))
    if isinstance(data.get("year"), int):
        yield T(paper, DC_ISSUED, ox.Literal(f"{data['year']:04d}", datatype=XSD_GYEAR))
    for author in sorted({a for a in data.get("authors") or () if str(a).strip()}):
        yield T(paper, DC_CREATOR, iris.author(author))
    if data.get("venue"):
        yield T(paper, KG_VENUE, text_literal(data["venue"]))
    if data.get("url"):
        yield T(paper, SCHEMA_URL, ox.Literal(text_literal(data["url"]).value, datatype=XSD_ANYURI))
    if data.get("doi"):
        yield T(paper, PRISM_DOI, text_literal(data["doi"]))
    if data.get("arxiv_id"):
        yield T(paper, KG_ARXIV, text_literal(data["arxiv_id"]))
    for keyword in sorted(set(data.get("keywords") or ())):
        yield T(paper, SCHEMA_KEYWORDS, text_literal(keyword))
    concepts = {cid: iris.concept(cid) for cid, *_ in mentions}
    # The paper's own triples first (one Turtle block), then its link and annotation nodes.
    for cid, ctype, role, _count, _weight, _spans in mentions:
        concept = concepts[cid]
        if ctype in KG_USES:
            yield T(paper, KG_USES[ctype], concept)
        yield T(paper, DC_SUBJECT, concept)
        if role == "proposed":
            yield T(paper, KG_PROPOSES, concept)
        yield T(paper, KG_HAS_LINK, iris.link(pid, cid))
    # Semantic neighbours (kg build --embed): a plain kg:similarTo for simple queries, and a
    # score node (as SemOpenAlex does for weighted links) with the cosine and the rank.
    for _, other_id, _cosine in similar:
        yield T(paper, KG_SIMILAR_TO, iris.paper(other_id))
        yield T(paper, KG_HAS_SIMILAR, iris.similarity(pid, other_id))
    results = stated_results(data, concepts_known)
    for result in results:
        yield T(paper, KG_HAS_RESULT, ox.NamedNode(iris.result(pid, result["start"], result["end"])))
    for cid, _ctype, role, count, weight, spans in mentions:
        concept = concepts[cid]
        link = iris.link(pid, cid)
        yield T(link, RDF_TYPE, KG_LINK)
        yield T(link, KG_LINKED_CONCEPT, concept)
        yield T(link, KG_ROLE, text_literal(role))
        yield T(link, KG_MENTIONS, ox.Literal(count))
        yield T(link, KG_WEIGHT, decimal_literal(weight))
        for start, end, score, where in spans:
            yield from _annotation(iris.annotation(pid, cid, start, end, where), paper, concept, start, end, run, score, where)
    for rank, other_id, cosine in similar:
        node = iris.similarity(pid, other_id)
        yield T(node, RDF_TYPE, KG_SIMILARITY)
        yield T(node, KG_SIMILAR_PAPER, iris.paper(other_id))
        yield T(node, KG_COSINE, decimal_literal(cosine))
        yield T(node, KG_RANK, ox.Literal(rank))
    abstract = str(data.get("abstract") or "")
    for result in results:
        yield from result_triples(iris, iris.result(pid, result["start"], result["end"]), paper, run, result, abstract)


def _author_triples(iris: Iris, author: str) -> Iterator[ox.Triple]:
    node = iris.author(author)
    yield ox.Triple(node, RDF_TYPE, FOAF_AGENT)
    yield ox.Triple(node, FOAF_NAME, text_literal(author))


def _spans(spans: Any) -> list[tuple[int, int, float | None, str]]:
    """(start, end, score, where) of each distinct span, sorted (the abstract's first); a span given
    twice keeps its highest score. ``where`` is "title" for a span marked so (`kg.graph`), else "abstract"."""
    best: dict[tuple[str, int, int], float | None] = {}
    for span in spans:
        where = "title" if len(span) > 3 and span[3] == "title" else "abstract"
        key, score = (where, int(span[0]), int(span[1])), (float(span[2]) if len(span) > 2 and span[2] is not None else None)
        old = best.get(key)
        best[key] = score if old is None or (score is not None and score > old) else old
    return [(start, end, score, where) for (where, start, end), score in sorted(best.items())]


def _annotation(
    iri: str, paper: ox.NamedNode, concept: ox.NamedNode, start: int, end: int, run: ox.NamedNode, score: float | None = None,
    where: str = "abstract",
) -> Iterator[ox.Triple]:
    T = ox.Triple
    annotation, target, selector = ox.NamedNode(iri), ox.NamedNode(iri + "#target"), ox.NamedNode(iri + "#selector")
    yield T(annotation, RDF_TYPE, OA_ANNOTATION)
    yield T(annotation, OA_MOTIVATED, OA_IDENTIFYING)
    yield T(annotation, OA_BODY, concept)
    yield T(annotation, OA_TARGET, target)
    yield T(annotation, PROV_GENERATED_BY, run)
    if score is not None:  # the chance a reader accepts the mention with its type
        yield T(annotation, KG_SCORE, decimal_literal(score))
    yield T(target, RDF_TYPE, OA_SPECIFIC)
    yield T(target, OA_SOURCE, paper)
    yield T(target, OA_SELECTOR, selector)
    yield T(selector, RDF_TYPE, OA_POSITION)
    yield T(selector, OA_START, ox.Literal(start))
    yield T(selector, OA_END, ox.Literal(end))
    if where == "title":  # offsets into the paper's title; a selector without kg:textField indexes its abstract
        yield T(selector, KG_TEXT_FIELD, DC_TITLE)


def lookup_keys(label: str, alt_labels: Any = ()) -> list[str]:
    """The concept's ``kg:key`` values: `normalize_key` of its label and alt labels, distinct,
    sorted (a bound label is normalised the same way before it is matched, `kg.sparql.engine`)."""
    return sorted({normalize_key(str(text)) for text in (label, *alt_labels)} - {""})


def estimated_triples(graph: nx.DiGraph[str]) -> int:
    """A cheap upper-bound-ish estimate of the triple count (used to pick a SPARQL backend)."""
    spans = sum(len(d.get("spans") or ()) for _, _, d in graph.edges(data=True))
    return 14 * graph.number_of_nodes() + 9 * graph.number_of_edges() + 11 * spans
