"""Namespaces, formats and id → IRI-segment encoding: the RDF names, without pyoxigraph.

Standard library only, so the CLI can offer ``--base`` and ``--format`` (and `kg sparql`
shorten IRIs) without importing pyoxigraph or networkx.
"""

from __future__ import annotations

import hashlib
from typing import Literal, get_args
from urllib.parse import quote

RdfFormat = Literal["ttl", "nt", "jsonld"]
ExportFormat = Literal["ttl", "nt", "jsonld", "graphml"]
EXPORT_FORMATS: tuple[ExportFormat, ...] = get_args(ExportFormat)

KG = "https://w3id.org/kg-ml/ontology#"
DEFAULT_BASE = "https://w3id.org/kg-ml/resource/"
# Bump when the RDF produced for the same graph changes (invalidates cached stores).
RDF_MODEL_VERSION = 4  # 2: kg:key on every concept; 3: kg:paperCount; 4: kg:Result (a store without them is stale)

PREFIXES: dict[str, str] = {
    "kg": KG,
    "fabio": "http://purl.org/spar/fabio/",
    "schema": "http://schema.org/",
    "dcterms": "http://purl.org/dc/terms/",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "oa": "http://www.w3.org/ns/oa#",
    "prov": "http://www.w3.org/ns/prov#",
    "foaf": "http://xmlns.com/foaf/0.1/",
    "prism": "http://prismstandard.org/namespaces/basic/2.0/",
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
}

# Entity type (kg.model.EntityType) → (class local name, typed paper→concept link local name).
TYPE_TERMS: dict[str, tuple[str, str]] = {
    "METHOD": ("Method", "usesMethod"),
    "DATASET": ("Dataset", "usesDataset"),
    "TASK": ("Task", "addressesTask"),
    "METRIC": ("Metric", "reportsMetric"),
    "HARDWARE": ("Hardware", "usesHardware"),
    "TERM": ("Term", "mentionsTerm"),
}

_MAX_SEGMENT = 120  # longer encoded ids are cut and suffixed with a hash of the full text
_KEEP_SEGMENT = 80


def iri_segment(text: str) -> str:
    """Encode any id as one IRI path segment: injective, deterministic, always valid.

    UTF-8 percent-encoding of everything but ``A-Z a-z 0-9 - . _`` (``~`` too, so that
    ``~`` is free to mark the two special forms): ``~empty`` for the empty id, and for
    ids whose encoding exceeds 120 characters the first 80 encoded characters, ``~`` and
    32 hex digits of the text's SHA-256. ``.`` and ``..`` are encoded so no tool ever
    treats them as dot-segments. Lone surrogates (possible from JSON) are encoded as the
    bytes Python would write with ``surrogatepass``.
    """
    encoded = quote(text, safe="", encoding="utf-8", errors="surrogatepass").replace("~", "%7E")
    if not encoded:
        return "~empty"
    if encoded in (".", ".."):
        return encoded.replace(".", "%2E")
    if len(encoded) > _MAX_SEGMENT:
        cut = _KEEP_SEGMENT
        percent = encoded.rfind("%", cut - 2, cut)
        if percent != -1:  # never split a %XX triplet
            cut = percent
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        return f"{encoded[:cut]}~{digest}"
    return encoded

