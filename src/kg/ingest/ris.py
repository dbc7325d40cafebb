"""RIS, as Zotero, Mendeley, EndNote, Web of Science and most publishers export it, read with rispy.

rispy (MIT, pure Python, no dependencies of its own, maintained, also used by ASReview) knows the
RIS tags and their names, which tags repeat (``AU``, ``KW``, ``UR``, …), ``UR`` values joined with
``;`` and values continued on the next line; the other RIS packages on PyPI are unmaintained
(risparser, last release 2021) or plugins of a whole bibliography system (pybtexris).

kg splits the file into records itself (``TY  - `` … ``ER  - ``), with rispy's own test of a tag
line, and hands each record to rispy: so every record knows the line of its ``TY`` for messages,
and what rispy would pass over silently is an error instead: a record whose ``ER`` is missing
before the next ``TY`` (rispy merges the two), a last record without ``ER`` (a file cut short;
rispy drops it), text outside a record.

Fields: ``TI``/``T1`` title; ``AU``/``A1`` authors (``Last, First``); ``PY``/``Y1``/``DA`` year
(``2017``, ``2017///``, ``2017/06/12/``); ``JF``/``T2``/``JO``/``BT``/``SO`` venue (the full journal
name first; an empty tag is passed over); ``DO`` DOI; ``UR`` URL (the first); ``KW`` keywords (one
a line, or several split on ``;``); ``AB``/``N2`` abstract; ``ID`` id. The first tag that has a value wins.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from typing import Any

from kg.errors import MalformedRecord
from kg.ingest.records import RawRecord

START, END = "TY", "ER"
NO_ABSTRACT = "no abstract (no AB or N2 tag)"
_BOM = "\ufeff"
SNIPPET = 40

# rispy's field names (its TAG_KEY_MAPPING) for the tags kg reads; BT and SO are not in its RIS map.
_TITLE = ("title", "primary_title")  # TI, T1
_AUTHORS = ("first_authors", "authors")  # A1, AU
_YEAR = ("year", "publication_year", "date")  # PY, Y1, DA
# JF (the journal's full name), T2 (the journal or proceedings in RIS as Zotero and EndNote write it),
# JO (a journal name, often abbreviated), BT, SO (Web of Science's source); the first non-empty one.
_VENUE = ("alternate_title3", "secondary_title", "journal_name", "book_title", "source_name")
_ABSTRACT = ("abstract", "notes_abstract")  # AB, N2


def read_ris(text: str, *, path: str) -> Iterator[RawRecord | MalformedRecord]:
    """One record per ``TY  - `` … ``ER  - ``; a bad record is yielded as an error (`--skip-invalid` goes on)."""
    parser = _parser()
    lines: list[str] | None = None
    start = 0
    stray = False  # inside a run of text outside any record (reported once, at its first line)
    for number, line in enumerate(text.split("\n"), 1):
        line = line.lstrip(_BOM)  # exports joined with `cat`, each starting with a byte-order mark
        tag, _ = parser.parse_line(line.rstrip("\r"))
        if tag == START:
            if lines is not None:
                yield MalformedRecord("RIS record not closed with 'ER  - ' before the next 'TY  - '", path=path, line=start)
            lines, start, stray = [line], number, False
        elif lines is None:
            if line.strip() and not stray:
                yield MalformedRecord(f"text outside a RIS record (a record starts with 'TY  - '): {_snippet(line)}", path=path, line=number)
            stray = bool(line.strip())
        elif tag == END:
            yield RawRecord(start, _fields(parser.parse_lines(iter([*_folded(lines, parser), "ER  - "]))[0]), no_abstract=NO_ABSTRACT)
            lines = None
        else:
            lines.append(line)
    if lines is not None:
        yield MalformedRecord("the last RIS record is not closed with 'ER  - ' (is the file cut short?)", path=path, line=start)


def _folded(lines: list[str], parser: Any) -> Iterator[str]:
    """The `lines` of one record with the continuation lines of each single-valued tag (``AB``
    over many lines) joined to it at once, as rispy would join them: rispy joins one line at a
    time, copying the value so far each time (400,000 lines of one ``AB`` took 43 s). List tags
    (a continued ``KW`` is one more keyword) and the rest go to rispy as they are."""
    tag = ""  # the single-valued tag being continued …
    parts: list[str] = []  # … and its contents so far
    for line in lines:
        line_tag, content = parser.parse_line(line.rstrip("\r"))
        if line_tag is None and parts:
            parts.append(content)
            continue
        if parts:
            yield f"{tag}  - {' '.join(parts)}"
            parts = []
        if line_tag is not None and line_tag != START and line_tag in parser.mapping and line_tag not in parser.list_tags and line_tag not in parser.delimiter_map:
            tag, parts = line_tag, [content]
        else:
            yield line
    if parts:
        yield f"{tag}  - {' '.join(parts)}"


@cache
def _parser() -> Any:  # rispy's RisParser (untyped)
    import rispy

    mapping = {**rispy.TAG_KEY_MAPPING, "BT": "book_title", "SO": "source_name"}
    return rispy.RisParser(mapping=mapping, skip_unknown_tags=True)


def _fields(entry: dict[str, Any]) -> dict[str, Any]:
    authors = [name for key in _AUTHORS for name in entry.get(key) or [] if name]
    fields = {
        "id": _first(entry, "id"),
        "title": _first(entry, *_TITLE),
        "abstract": _first(entry, *_ABSTRACT),
        "authors": list(dict.fromkeys(authors)) or None,  # AU and A1 both given: each name once
        "year": _first(entry, *_YEAR),
        "venue": _first(entry, *_VENUE),
        "doi": _first(entry, "doi"),
        "url": _first(entry, "urls"),
        "keywords": [part for keyword in entry.get("keywords") or [] for part in keyword.split(";") if part.strip()] or None,
    }
    return {name: value for name, value in fields.items() if value is not None}


def _first(entry: dict[str, Any], *keys: str) -> str | None:
    """The first non-empty value of `keys` (a list-valued tag gives its first item)."""
    for key in keys:
        value = entry.get(key)
        if isinstance(value, list):
            value = next((item for item in value if item), None)
        if isinstance(value, str) and value.strip():
            return value
    return None


def _snippet(line: str) -> str:
    line = line.strip()
    return repr(line if len(line) <= SNIPPET else line[: SNIPPET - 1] + "…")
