"""The graph's RDF form as one stream of pyoxigraph triples, in a deterministic order.

`triples(graph)` walks the networkx graph (format in `kg.graph`) sorted, grouped by subject;
every sink (`kg.rdf.writers`, `kg.rdf.store`, `kg.rdf.convert`) consumes this one stream, so
every format and both SPARQL backends hold exactly the same triples. The model is described
in `kg.rdf`; `Iris` mints the data IRIs, one percent-encoded segment per id (`iri_segment`).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache, partial
from importlib import metadata
from typing import TYPE_CHECKING, Any

import pyoxigraph as ox

from kg.rdf.terms import DEFAULT_BASE, PREFIXES, TYPE_TERMS, iri_segment
from kg.text.vocab import normalize_key

if TYPE_CHECKING:  # only the graph's methods are used: no networkx import needed here
    import networkx as nx

_SURROGATES = re.compile("[\ud800-\udfff]")
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


def _vocab_iri(prefix: str, local: str) -> ox.NamedNode:
    """The IRI of a vocabulary's term from its prefix (`kg.rdf.terms.PREFIXES`) and local name: ("rdf", "type") → rdf:type."""
    return ox.NamedNode(PREFIXES[prefix] + local)


RDF_TYPE = _vocab_iri("rdf", "type")
RDFS_LABEL = _vocab_iri("rdfs", "label")
XSD_STRING = _vocab_iri("xsd", "string")
XSD_DECIMAL = _vocab_iri("xsd", "decimal")
XSD_GYEAR = _vocab_iri("xsd", "gYear")
XSD_ANYURI = _vocab_iri("xsd", "anyURI")
FABIO_PAPER = _vocab_iri("fabio", "ResearchPaper")
SCHEMA_ARTICLE = _vocab_iri("schema", "ScholarlyArticle")
SCHEMA_URL = _vocab_iri("schema", "url")
SCHEMA_KEYWORDS = _vocab_iri("schema", "keywords")
DC_IDENTIFIER = _vocab_iri("dcterms", "identifier")
DC_TITLE = _vocab_iri("dcterms", "title")
DC_ABSTRACT = _vocab_iri("dcterms", "abstract")
DC_ISSUED = _vocab_iri("dcterms", "issued")
DC_CREATOR = _vocab_iri("dcterms", "creator")
DC_SUBJECT = _vocab_iri("dcterms", "subject")
PRISM_DOI = _vocab_iri("prism", "doi")
FOAF_AGENT = _vocab_iri("foaf", "Agent")
FOAF_NAME = _vocab_iri("foaf", "name")
SKOS_CONCEPT = _vocab_iri("skos", "Concept")
SKOS_SCHEME = _vocab_iri("skos", "ConceptScheme")
SKOS_IN_SCHEME = _vocab_iri("skos", "inScheme")
SKOS_PREF = _vocab_iri("skos", "prefLabel")
SKOS_ALT = _vocab_iri("skos", "altLabel")
SKOS_BROADER = _vocab_iri("skos", "broader")
OA_ANNOTATION = _vocab_iri("oa", "Annotation")
OA_SPECIFIC = _vocab_iri("oa", "SpecificResource")
OA_POSITION = _vocab_iri("oa", "TextPositionSelector")
OA_QUOTE = _vocab_iri("oa", "TextQuoteSelector")
OA_EXACT = _vocab_iri("oa", "exact")
OA_BODY = _vocab_iri("oa", "hasBody")
OA_TARGET = _vocab_iri("oa", "hasTarget")
OA_SOURCE = _vocab_iri("oa", "hasSource")
OA_SELECTOR = _vocab_iri("oa", "hasSelector")
OA_START = _vocab_iri("oa", "start")
OA_END = _vocab_iri("oa", "end")
OA_MOTIVATED = _vocab_iri("oa", "motivatedBy")
OA_IDENTIFYING = _vocab_iri("oa", "identifying")
PROV_ACTIVITY = _vocab_iri("prov", "Activity")
PROV_GENERATED_BY = _vocab_iri("prov", "wasGeneratedBy")
PROV_ENDED = _vocab_iri("prov", "endedAtTime")
XSD_DATETIME = _vocab_iri("xsd", "dateTime")
_DATETIME = re.compile(r"-?\d{4,}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?")
KG_PROPOSES = _vocab_iri("kg", "proposes")
KG_VENUE = _vocab_iri("kg", "venue")
KG_ARXIV = _vocab_iri("kg", "arxivId")
KG_TITLE_DERIVED = _vocab_iri("kg", "titleDerived")
KG_HAS_LINK = _vocab_iri("kg", "hasConceptLink")
KG_LINK = _vocab_iri("kg", "ConceptLink")
KG_LINKED_CONCEPT = _vocab_iri("kg", "linkedConcept")
KG_ROLE = _vocab_iri("kg", "role")
KG_MENTIONS = _vocab_iri("kg", "mentionCount")
KG_WEIGHT = _vocab_iri("kg", "weight")
KG_SCORE = _vocab_iri("kg", "score")
KG_SIMILARITY = _vocab_iri("kg", "Similarity")
KG_HAS_SIMILAR = _vocab_iri("kg", "hasSimilarPaper")
KG_SIMILAR_PAPER = _vocab_iri("kg", "similarPaper")
KG_COSINE = _vocab_iri("kg", "cosine")
KG_RANK = _vocab_iri("kg", "rank")
KG_SIMILAR_TO = _vocab_iri("kg", "similarTo")
KG_KEY = _vocab_iri("kg", "key")
KG_TEXT_FIELD = _vocab_iri("kg", "textField")
KG_PAPER_COUNT = _vocab_iri("kg", "paperCount")
KG_PIPELINE_NAME = _vocab_iri("kg", "pipelineName")
KG_PIPELINE_VERSION = _vocab_iri("kg", "pipelineVersion")
KG_RESULT = _vocab_iri("kg", "Result")
KG_HAS_RESULT = _vocab_iri("kg", "hasResult")
KG_VALUE = _vocab_iri("kg", "value")
KG_VALUE_TEXT = _vocab_iri("kg", "valueText")
KG_VALUE_START = _vocab_iri("kg", "valueStart")
KG_VALUE_END = _vocab_iri("kg", "valueEnd")
KG_UNIT = _vocab_iri("kg", "unit")
KG_RESULT_KIND = _vocab_iri("kg", "resultKind")
KG_PROPOSED = _vocab_iri("kg", "proposed")
KG_STATED_IN = _vocab_iri("kg", "statedIn")
# A result's links: (graph.json field, object property to the concept, datatype property for the words)
RESULT_LINKS = tuple(
    (field, _vocab_iri("kg", "result" + field.capitalize()), _vocab_iri("kg", field + "Text")) for field in ("metric", "dataset", "task", "method", "baseline")
)
KG_CLASS = {t: _vocab_iri("kg", cls) for t, (cls, _) in TYPE_TERMS.items()}
KG_USES = {t: _vocab_iri("kg", link) for t, (_, link) in TYPE_TERMS.items()}

def _text(value: Any) -> ox.Literal:
    """A plain string literal; lone surrogates (invalid Unicode) become U+FFFD."""
    text = str(value)
    try:
        return ox.Literal(text)
    except ValueError:
        return ox.Literal(_SURROGATES.sub("\ufffd", text))


def _decimal(value: float) -> ox.Literal:
    # repr gives the shortest round-trip form; Decimal turns 1e-06 into 0.000001.
    lexical = format(Decimal(repr(float(value))), "f")
    if "." not in lexical:
        lexical += ".0"
    return ox.Literal(lexical, datatype=XSD_DECIMAL)


# Percent-encoding is the costliest part of minting an IRI, and the same ids recur in every
# link and annotation IRI of a paper (and a concept's in every paper naming it).
_segment = lru_cache(maxsize=1 << 18)(iri_segment)


class Iris:
    """Mints the data IRIs under one base (default `DEFAULT_BASE`)."""

    def __init__(self, base: str = DEFAULT_BASE) -> None:
        if not base.endswith(("/", "#")):
            base += "/"
        ox.NamedNode(base)  # raises ValueError early for an invalid base
        self.base = base

    def paper(self, paper_id: str) -> ox.NamedNode:
        return ox.NamedNode(f"{self.base}paper/{_segment(paper_id)}")

    def concept(self, concept_id: str) -> ox.NamedNode:
        return ox.NamedNode(f"{self.base}concept/{_segment(concept_id)}")

    def author(self, name: str) -> ox.NamedNode:
        return ox.NamedNode(f"{self.base}author/{_segment(name)}")

    def link(self, paper_id: str, concept_id: str) -> ox.NamedNode:
        return ox.NamedNode(f"{self.base}link/{_segment(paper_id)}/{_segment(concept_id)}")

    def annotation(self, paper_id: str, concept_id: str, start: int, end: int, where: str = "abstract") -> str:
        """A mention's annotation; one in the title has "title-" before its offsets."""
        offsets = f"{int(start)}-{int(end)}" if where == "abstract" else f"{where}-{int(start)}-{int(end)}"
        return f"{self.base}annotation/{_segment(paper_id)}/{_segment(concept_id)}/{offsets}"

    def result(self, paper_id: str, start: int, end: int) -> str:
        return f"{self.base}result/{_segment(paper_id)}/{int(start)}-{int(end)}"

    def similarity(self, paper_id: str, other_id: str) -> ox.NamedNode:
        return ox.NamedNode(f"{self.base}similarity/{_segment(paper_id)}/{_segment(other_id)}")

    def run(self, name: str, version: str) -> ox.NamedNode:
        return ox.NamedNode(f"{self.base}run/{_segment(name)}/{_segment(version)}")

    def scheme(self) -> ox.NamedNode:
        return ox.NamedNode(f"{self.base}concepts")


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
            {(field, cid) for result in data.get("results") or () if isinstance(result, dict) for field, cid in _result_concepts(result)
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
    yield T(run, RDFS_LABEL, _text(f"kg extraction with {name} {version}"))
    yield T(run, KG_PIPELINE_NAME, _text(name))
    yield T(run, KG_PIPELINE_VERSION, _text(version))
    if created is not None:
        yield T(run, PROV_ENDED, ox.Literal(created, datatype=XSD_DATETIME))
    scheme = iris.scheme()
    yield T(scheme, RDF_TYPE, SKOS_SCHEME)
    yield T(scheme, RDFS_LABEL, _text("kg concepts"))
    yield T(scheme, KG_PAPER_COUNT, ox.Literal(papers))


def _concept_triples(iris: Iris, cid: str, data: dict[str, Any], broader: list[str], papers: int) -> Iterator[ox.Triple]:
    T = ox.Triple
    node = iris.concept(cid)
    ctype = data.get("type")
    if ctype in KG_CLASS:
        yield T(node, RDF_TYPE, KG_CLASS[ctype])
    yield T(node, RDF_TYPE, SKOS_CONCEPT)
    yield T(node, DC_IDENTIFIER, _text(cid))
    label = data.get("label") or cid
    yield T(node, SKOS_PREF, _text(label))
    alts = sorted(set(data.get("alt_labels") or ()) - {data.get("label")})
    for alt in alts:
        yield T(node, SKOS_ALT, _text(alt))
    for lookup in lookup_keys(label, alts) or [cid]:
        yield T(node, KG_KEY, _text(lookup))
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
    yield T(paper, DC_IDENTIFIER, _text(pid))
    if data.get("title") is not None:
        yield T(paper, DC_TITLE, _text(data["title"]))
    if data.get("title_derived"):
        yield T(paper, KG_TITLE_DERIVED, ox.Literal(True))
    if data.get("abstract") is not None:
        yield T(paper, DC_ABSTRACT, _text(data["abstract"]))
    if isinstance(data.get("year"), int):
        yield T(paper, DC_ISSUED, ox.Literal(f"{data['year']:04d}", datatype=XSD_GYEAR))
    for author in sorted({a for a in data.get("authors") or () if str(a).strip()}):
        yield T(paper, DC_CREATOR, iris.author(author))
    if data.get("venue"):
        yield T(paper, KG_VENUE, _text(data["venue"]))
    if data.get("url"):
        yield T(paper, SCHEMA_URL, ox.Literal(_text(data["url"]).value, datatype=XSD_ANYURI))
    if data.get("doi"):
        yield T(paper, PRISM_DOI, _text(data["doi"]))
    if data.get("arxiv_id"):
        yield T(paper, KG_ARXIV, _text(data["arxiv_id"]))
    for keyword in sorted(set(data.get("keywords") or ())):
        yield T(paper, SCHEMA_KEYWORDS, _text(keyword))
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
    results = _results(data, concepts_known)
    for result in results:
        yield T(paper, KG_HAS_RESULT, ox.NamedNode(iris.result(pid, result["start"], result["end"])))
    for cid, _ctype, role, count, weight, spans in mentions:
        concept = concepts[cid]
        link = iris.link(pid, cid)
        yield T(link, RDF_TYPE, KG_LINK)
        yield T(link, KG_LINKED_CONCEPT, concept)
        yield T(link, KG_ROLE, _text(role))
        yield T(link, KG_MENTIONS, ox.Literal(count))
        yield T(link, KG_WEIGHT, _decimal(weight))
        for start, end, score, where in spans:
            yield from _annotation(iris.annotation(pid, cid, start, end, where), paper, concept, start, end, run, score, where)
    for rank, other_id, cosine in similar:
        node = iris.similarity(pid, other_id)
        yield T(node, RDF_TYPE, KG_SIMILARITY)
        yield T(node, KG_SIMILAR_PAPER, iris.paper(other_id))
        yield T(node, KG_COSINE, _decimal(cosine))
        yield T(node, KG_RANK, ox.Literal(rank))
    abstract = str(data.get("abstract") or "")
    for result in results:
        yield from _result_triples(iris, iris.result(pid, result["start"], result["end"]), paper, run, result, abstract)


RESULT_TYPES = {"metric": "METRIC", "dataset": "DATASET", "task": "TASK", "method": "METHOD", "baseline": "METHOD"}


def _result_concepts(result: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for field in RESULT_TYPES:
        cid = result.get(field + "_concept")
        if isinstance(cid, str):
            yield field, cid


def _results(data: dict[str, Any], concepts_known: frozenset[tuple[str, str]]) -> list[dict[str, Any]]:
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


def _result_triples(iris: Iris, iri: str, paper: ox.NamedNode, run: ox.NamedNode, result: dict[str, Any], abstract: str) -> Iterator[ox.Triple]:
    """A kg:Result: the value, its unit and kind, the linked concepts and the words they were named
    with, the score, and the sentence stating it as a quote and a position in the paper's abstract."""
    T = ox.Triple
    node, target = ox.NamedNode(iri), ox.NamedNode(iri + "#sentence")
    quote, position = ox.NamedNode(iri + "#quote"), ox.NamedNode(iri + "#position")
    yield T(node, RDF_TYPE, KG_RESULT)
    yield T(node, KG_VALUE, _decimal(result["number"]))
    yield T(node, KG_VALUE_TEXT, _text(result.get("value") or abstract[result["start"] : result["end"]]))
    if result.get("unit"):
        yield T(node, KG_UNIT, _text(result["unit"]))
    yield T(node, KG_RESULT_KIND, _text(result.get("kind") or "absolute"))
    for field, concept_link, words in RESULT_LINKS:
        concept = result["links"][field]
        if concept is not None:
            yield T(node, concept_link, iris.concept(concept))
        if result.get(field):
            yield T(node, words, _text(result[field]))
    yield T(node, KG_PROPOSED, ox.Literal(bool(result.get("proposed"))))
    if isinstance(result.get("score"), (int, float)) and math.isfinite(result["score"]):
        yield T(node, KG_SCORE, _decimal(min(max(float(result["score"]), 0.0), 1.0)))
    yield T(node, KG_VALUE_START, ox.Literal(result["start"]))
    yield T(node, KG_VALUE_END, ox.Literal(result["end"]))
    yield T(node, KG_STATED_IN, target)
    yield T(node, PROV_GENERATED_BY, run)
    yield T(target, RDF_TYPE, OA_SPECIFIC)
    yield T(target, OA_SOURCE, paper)
    yield T(target, OA_SELECTOR, quote)
    yield T(target, OA_SELECTOR, position)
    yield T(quote, RDF_TYPE, OA_QUOTE)
    yield T(quote, OA_EXACT, _text(abstract[result["sent_start"] : result["sent_end"]]))
    yield T(position, RDF_TYPE, OA_POSITION)
    yield T(position, OA_START, ox.Literal(result["sent_start"]))
    yield T(position, OA_END, ox.Literal(result["sent_end"]))


def _author_triples(iris: Iris, author: str) -> Iterator[ox.Triple]:
    node = iris.author(author)
    yield ox.Triple(node, RDF_TYPE, FOAF_AGENT)
    yield ox.Triple(node, FOAF_NAME, _text(author))


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
        yield T(annotation, KG_SCORE, _decimal(score))
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
