"""kg's RDF vocabulary as pyoxigraph terms, shared by the modules that make triples
(`kg.rdf.triples`, `kg.rdf.results`): the IRIs of the classes and properties kg states (terms in
``schemas/kg.ttl``, prefixes in `kg.rdf.terms`), the literals (`text_literal`, `decimal_literal`)
and `Iris`, which mints the data IRIs, one percent-encoded segment per id (`iri_segment`).
"""

from __future__ import annotations

import re
from decimal import Decimal
from functools import lru_cache
from typing import Any

import pyoxigraph as ox

from kg.rdf.terms import DEFAULT_BASE, PREFIXES, TYPE_TERMS, iri_segment

_SURROGATES = re.compile("[\ud800-\udfff]")


def vocab_iri(prefix: str, local: str) -> ox.NamedNode:
    """The IRI of a vocabulary's term from its prefix (`kg.rdf.terms.PREFIXES`) and local name: ("rdf", "type") → rdf:type."""
    return ox.NamedNode(PREFIXES[prefix] + local)


RDF_TYPE = vocab_iri("rdf", "type")
RDFS_LABEL = vocab_iri("rdfs", "label")
XSD_STRING = vocab_iri("xsd", "string")
XSD_DECIMAL = vocab_iri("xsd", "decimal")
XSD_GYEAR = vocab_iri("xsd", "gYear")
XSD_ANYURI = vocab_iri("xsd", "anyURI")
FABIO_PAPER = vocab_iri("fabio", "ResearchPaper")
SCHEMA_ARTICLE = vocab_iri("schema", "ScholarlyArticle")
SCHEMA_URL = vocab_iri("schema", "url")
SCHEMA_KEYWORDS = vocab_iri("schema", "keywords")
DC_IDENTIFIER = vocab_iri("dcterms", "identifier")
DC_TITLE = vocab_iri("dcterms", "title")
DC_ABSTRACT = vocab_iri("dcterms", "abstract")
DC_ISSUED = vocab_iri("dcterms", "issued")
DC_CREATOR = vocab_iri("dcterms", "creator")
DC_SUBJECT = vocab_iri("dcterms", "subject")
PRISM_DOI = vocab_iri("prism", "doi")
FOAF_AGENT = vocab_iri("foaf", "Agent")
FOAF_NAME = vocab_iri("foaf", "name")
SKOS_CONCEPT = vocab_iri("skos", "Concept")
SKOS_SCHEME = vocab_iri("skos", "ConceptScheme")
SKOS_IN_SCHEME = vocab_iri("skos", "inScheme")
SKOS_PREF = vocab_iri("skos", "prefLabel")
SKOS_ALT = vocab_iri("skos", "altLabel")
SKOS_BROADER = vocab_iri("skos", "broader")
OA_ANNOTATION = vocab_iri("oa", "Annotation")
OA_SPECIFIC = vocab_iri("oa", "SpecificResource")
OA_POSITION = vocab_iri("oa", "TextPositionSelector")
OA_QUOTE = vocab_iri("oa", "TextQuoteSelector")
OA_EXACT = vocab_iri("oa", "exact")
OA_BODY = vocab_iri("oa", "hasBody")
OA_TARGET = vocab_iri("oa", "hasTarget")
OA_SOURCE = vocab_iri("oa", "hasSource")
OA_SELECTOR = vocab_iri("oa", "hasSelector")
OA_START = vocab_iri("oa", "start")
OA_END = vocab_iri("oa", "end")
OA_MOTIVATED = vocab_iri("oa", "motivatedBy")
OA_IDENTIFYING = vocab_iri("oa", "identifying")
PROV_ACTIVITY = vocab_iri("prov", "Activity")
PROV_GENERATED_BY = vocab_iri("prov", "wasGeneratedBy")
PROV_ENDED = vocab_iri("prov", "endedAtTime")
XSD_DATETIME = vocab_iri("xsd", "dateTime")
KG_PROPOSES = vocab_iri("kg", "proposes")
KG_VENUE = vocab_iri("kg", "venue")
KG_ARXIV = vocab_iri("kg", "arxivId")
KG_TITLE_DERIVED = vocab_iri("kg", "titleDerived")
KG_HAS_LINK = vocab_iri("kg", "hasConceptLink")
KG_LINK = vocab_iri("kg", "ConceptLink")
KG_LINKED_CONCEPT = vocab_iri("kg", "linkedConcept")
KG_ROLE = vocab_iri("kg", "role")
KG_MENTIONS = vocab_iri("kg", "mentionCount")
KG_WEIGHT = vocab_iri("kg", "weight")
KG_SCORE = vocab_iri("kg", "score")
KG_SIMILARITY = vocab_iri("kg", "Similarity")
KG_HAS_SIMILAR = vocab_iri("kg", "hasSimilarPaper")
KG_SIMILAR_PAPER = vocab_iri("kg", "similarPaper")
KG_COSINE = vocab_iri("kg", "cosine")
KG_RANK = vocab_iri("kg", "rank")
KG_SIMILAR_TO = vocab_iri("kg", "similarTo")
KG_KEY = vocab_iri("kg", "key")
KG_TEXT_FIELD = vocab_iri("kg", "textField")
KG_PAPER_COUNT = vocab_iri("kg", "paperCount")
KG_PIPELINE_NAME = vocab_iri("kg", "pipelineName")
KG_PIPELINE_VERSION = vocab_iri("kg", "pipelineVersion")
KG_CLASS = {t: vocab_iri("kg", cls) for t, (cls, _) in TYPE_TERMS.items()}
KG_USES = {t: vocab_iri("kg", link) for t, (_, link) in TYPE_TERMS.items()}


def text_literal(value: Any) -> ox.Literal:
    """A plain string literal; lone surrogates (invalid Unicode) become U+FFFD."""
    text = str(value)
    try:
        return ox.Literal(text)
    except ValueError:
        return ox.Literal(_SURROGATES.sub("\ufffd", text))


def decimal_literal(value: float) -> ox.Literal:
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
