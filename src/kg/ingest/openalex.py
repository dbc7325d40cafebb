"""OpenAlex works: the records of the OpenAlex API and of its exports, in JSON, JSON Lines or an
API page (``{"meta": …, "results": [work, …]}``; `kg.ingest.jsonl` unpacks it).

A record is read as a work when it has an ``abstract_inverted_index`` or an OpenAlex id
(``https://openalex.org/W…``), or always with ``--format openalex``. OpenAlex gives no abstract
text: ``abstract_inverted_index`` maps each word to its positions, and the abstract is the words
in position order, joined by spaces. A work with neither (many have none) is a record without an
abstract, reported and skipped like any other.

Fields: ``title`` (else ``display_name``); ``authorships[].author.display_name``;
``publication_year``; ``primary_location.source.display_name`` as venue; ``doi`` (kg keeps DOIs
bare: ``https://doi.org/10.7717/PeerJ.4375`` → ``10.7717/peerj.4375``); the URL from
``primary_location.landing_page_url``; ``keywords[].display_name``, else
``concepts[].display_name``; ``id`` as the W-id (``https://openalex.org/W2741809807`` → ``W2741809807``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from kg.errors import InputError, MalformedRecord
from kg.ingest.records import RawRecord

INDEX = "abstract_inverted_index"
NO_ABSTRACT = f"no abstract (neither abstract nor {INDEX})"
_WORK_ID = re.compile(r"^\s*(?:https?://(?:api\.)?openalex\.org/(?:works/)?)?(W\d+)\s*$", re.IGNORECASE)


def is_work(fields: Mapping[str, Any]) -> bool:
    work_id = fields.get("id")
    return INDEX in fields or (isinstance(work_id, str) and work_id.startswith(("https://openalex.org/W", "https://openalex.org/w")))


def works(records: Iterable[RawRecord | InputError], *, path: str, always: bool = False) -> Iterator[RawRecord | InputError]:
    """`records` with each OpenAlex work (every record, when `always`) turned into kg's fields."""
    for record in records:
        if isinstance(record, RawRecord) and (always or is_work(record.fields)):
            try:
                yield RawRecord(record.line, work_fields(record.fields, path=path, line=record.line), no_abstract=NO_ABSTRACT)
            except MalformedRecord as error:
                yield error
        else:
            yield record


def work_fields(work: Mapping[str, Any], *, path: str, line: int) -> dict[str, Any]:
    abstract = work.get("abstract")
    if not (isinstance(abstract, str) and abstract.strip()):
        abstract = rebuild_abstract(work.get(INDEX), path=path, line=line)
    location = _get(work, "primary_location")
    fields = {
        "id": _work_id(work.get("id")),
        "title": work.get("title") or work.get("display_name"),
        "abstract": abstract or None,
        "authors": _authors(work.get("authorships"), path=path, line=line),
        "year": work.get("publication_year") or work.get("publication_date"),
        "venue": _get(location, "source", "display_name") or _get(work, "host_venue", "display_name"),
        "url": _get(location, "landing_page_url") or _get(work, "open_access", "oa_url"),
        "doi": work.get("doi"),
        "keywords": _names(work.get("keywords"), "keywords", path=path, line=line) or _names(work.get("concepts"), "concepts", path=path, line=line),
    }
    return {name: value for name, value in fields.items() if value not in (None, "", [])}


def rebuild_abstract(index: Any, *, path: str, line: int) -> str | None:
    """{"Deep": [0], "nets": [1, 4], "overfit;": [2], "small": [3]} → "Deep nets overfit; small nets"."""
    if index is None:
        return None
    if not isinstance(index, Mapping):
        raise MalformedRecord(f"field {INDEX!r} should map words to lists of positions, not {_kind(index)}", path=path, line=line)
    placed: list[tuple[int, str]] = []
    for word, positions in index.items():
        if not isinstance(positions, list) or not all(isinstance(p, int) and not isinstance(p, bool) and p >= 0 for p in positions):
            raise MalformedRecord(f"field {INDEX!r}: the positions of {_short(word)} should be a list of whole numbers ≥ 0", path=path, line=line)
        placed.extend((position, word) for position in positions)
    placed.sort(key=lambda item: item[0])  # stable: words sharing a position keep the index's order
    return " ".join(word for _, word in placed) or None


def _work_id(value: Any) -> Any:
    if isinstance(value, str) and (match := _WORK_ID.match(value)):
        return match.group(1).upper()
    return value


def _authors(authorships: Any, *, path: str, line: int) -> list[Any] | None:
    if authorships is None:
        return None
    if not isinstance(authorships, list):
        raise MalformedRecord(f"field 'authorships' should be a list, not {_kind(authorships)}", path=path, line=line)
    names = []
    for authorship in authorships:
        name = _get(authorship, "author", "display_name") or _get(authorship, "raw_author_name")
        if name is not None:
            names.append(name)  # not text: to_paper says so
    return names


def _names(items: Any, field: str, *, path: str, line: int) -> list[Any]:
    """``[{"display_name": "Open access", "score": 0.6}, …]`` → ["Open access", …] (older exports: ``keyword``)."""
    if items is None:
        return []
    if not isinstance(items, list):
        raise MalformedRecord(f"field {field!r} should be a list, not {_kind(items)}", path=path, line=line)
    names = []
    for item in items:
        name = (_get(item, "display_name") or _get(item, "keyword")) if isinstance(item, Mapping) else item
        if name is not None:
            names.append(name)
    return names


def _get(value: Any, *keys: str) -> Any:
    """value[k1][k2]…, or None where a step is missing or not an object."""
    for key in keys:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _short(word: Any) -> str:
    text = repr(word)
    return text if len(text) <= 40 else text[:39] + "…"


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return {str: "text", bool: "a boolean"}.get(type(value), "a number")
