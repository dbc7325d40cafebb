"""From one raw record (a dict of whatever fields a file had) to a `Paper`.

Readers only split files into records; this module knows the field names and their aliases,
normalises values (whitespace, authors, years, DOIs, arXiv ids) and applies the identity rule.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from kg.errors import DecodeFailed, EmptyAbstract, MalformedRecord, RecordTooLarge
from kg.ingest import ids
from kg.ingest.titles import derive_title
from kg.model import Paper


@dataclass(frozen=True, slots=True)
class RawRecord:
    """One record as a reader found it: its first line in the file and its fields; `no_abstract`
    is the reason to give when it has none, in the terms of its format (None: kg's field names)."""

    line: int
    fields: Mapping[str, Any]
    no_abstract: str | None = None


# Canonical field → accepted names, first non-empty one wins. Names are compared after
# lower-casing and turning spaces/hyphens into underscores ("Abstract Note" → abstract_note).
# CSL-JSON (Zotero's "CSL JSON" export) fits: container-title, issued {"date-parts"}, keyword.
ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("id", "paper_id", "key"),
    "title": ("title", "paper_title"),
    "abstract": ("abstract", "summary", "text", "abstract_note"),
    "authors": ("authors", "author", "creators"),
    "year": ("year", "publication_year", "date", "published", "issued"),
    "venue": ("venue", "journal", "booktitle", "publication_title", "conference", "container_title"),
    "url": ("url", "link"),
    "doi": ("doi",),
    "arxiv_id": ("arxiv_id", "arxiv", "eprint"),
    "keywords": ("keywords", "tags", "manual_tags", "keyword"),
}
ABSTRACT_NAMES = ALIASES["abstract"]

# Length limits, in characters after whitespace is collapsed. The longest abstract in the shared
# 65k-paper corpus has 16,205; spaCy refuses texts over 1,000,000 (and its parser needs about
# 1 GB per 100,000). A longer field is not an abstract (a whole paper, a log pasted by mistake):
# the record is refused (skippable) before anything is written.
MAX_ABSTRACT_CHARS = 100_000
MAX_FIELD_CHARS = 10_000  # every other text: title, id, venue, URL, DOI, each author and keyword
# spaCy's tokenizer takes time quadratic in the length of a word (a run without spaces), worst on
# runs of punctuation: 20,000 of "a-" or 4,000 of "<" take seconds each. The corpus's longest word
# has 176 characters and its longest run of symbols 12; an abstract beyond these is refused.
MAX_WORD_CHARS = 500
MAX_SYMBOL_RUN = 50  # characters that are neither letters, digits nor spaces, in a row

# Venues that are preprint servers, not where a paper was published (used to rank duplicates).
PREPRINT_VENUES = frozenset({"arxiv", "corr", "biorxiv", "medrxiv", "ssrn", "techrxiv", "preprint"})

_KEY_SEPARATORS = re.compile(r"[\s\-]+")
# C0 controls except whitespace, DEL and C1 controls: never useful in a title or abstract.
_CONTROLS = dict.fromkeys([*range(0x00, 0x09), *range(0x0E, 0x1C), 0x7F, *range(0x80, 0xA0)])
_HAS_CONTROL = re.compile("[\x00-\x08\x0e-\x1b\x7f-\x9f]")
_YEAR = re.compile(r"\b(1[89]\d\d|2[01]\d\d)\b")
_VENUE_WITH_YEAR = re.compile(r"^(?P<venue>.*?\S)\s*['’]?\s*(?P<year>(?:19|20)\d\d)$")
_ARXIV_VENUE = re.compile(r"^(?:arxiv|corr)\b", re.IGNORECASE)
_NAME_SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv"})
_SYMBOL_RUN = re.compile(r"[^\w\s]{%d,}" % (MAX_SYMBOL_RUN + 1))
_SURROGATES = re.compile("[\udc80-\udcff]")  # undecodable bytes, as ``surrogateescape`` decodes them
_ANY_SURROGATE = re.compile("[\ud800-\udfff]")  # also lone surrogate escapes in JSON ("\\ud800")


@lru_cache(maxsize=4096)  # the same few column names, hundreds of thousands of times
def normalise_key(name: str) -> str:
    return _KEY_SEPARATORS.sub("_", name.strip().lower())


def clean_text(text: str) -> str:
    """Control characters removed and whitespace runs collapsed to one space (offsets refer to this)."""
    if _HAS_CONTROL.search(text):  # rare; translate() is slow, so only when needed
        text = text.translate(_CONTROLS)
    return " ".join(text.split())


def to_paper(record: RawRecord, *, path: str, undecodable: bool = False) -> Paper:
    """Normalise one record; raise `EmptyAbstract`, `MalformedRecord`, `DecodeFailed` or
    `RecordTooLarge` (naming path:line) if unusable. `undecodable`: the file was decoded with
    ``surrogateescape`` (so a surrogate in a field stands for a byte that was not UTF-8)."""
    line = record.line
    fields = record.fields
    keys: dict[str, str] = {}
    for name in fields:
        keys.setdefault(normalise_key(str(name)), name)

    def get(canonical: str) -> Any:
        for alias in ALIASES[canonical]:
            name = keys.get(alias)
            if name is not None:
                value = fields[name]
                if value not in (None, "", [], ()):
                    _check_unicode(canonical, value, undecodable=undecodable, path=path, line=line)
                    return value
        return None

    def text(canonical: str) -> str | None:
        value = get(canonical)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise MalformedRecord(f"field {canonical!r} should be text, not {_json_type(value)}", path=path, line=line)
        return _check_length(canonical, clean_text(str(value)), path=path, line=line) or None

    abstract = text("abstract")
    title = text("title")
    if not abstract:
        if record.no_abstract and not any(alias in keys for alias in ABSTRACT_NAMES):
            reason = record.no_abstract
        elif not any(alias in keys for alias in ABSTRACT_NAMES):
            reason = f"no abstract (expected a field named {', '.join(ABSTRACT_NAMES)})"
        else:
            reason = "empty abstract"
        if title:
            reason += f" (title {_quote(title)})"
        raise EmptyAbstract(reason, path=path, line=line)

    year = parse_year(get("year"))
    venue = text("venue")
    if venue:
        bare_venue, venue_year = split_venue_year(venue)
        if venue_year is not None and year in (None, venue_year):
            venue, year = bare_venue, venue_year
    url = text("url")
    doi = ids.normalise_doi(text("doi")) or ids.doi_from_url(url)
    given_id = ids.tidy_id(text("id"))
    arxiv_id = (
        ids.find_arxiv_id(text("arxiv_id"), bare=True)
        or ids.find_arxiv_id(given_id)
        or ids.find_arxiv_id(url)
        or ids.find_arxiv_id(doi)
        or (ids.find_arxiv_id(venue) if venue else None)
    )
    if venue and _ARXIV_VENUE.match(venue):
        venue = "arXiv"  # "arXiv preprint arXiv:2001.00001" (Google Scholar BibTeX) says no more than that
    title_derived = not title
    if not title:
        title = derive_title(abstract)
    authors = split_authors(get("authors"), path=path, line=line)
    keywords = split_keywords(get("keywords"), path=path, line=line)
    for canonical, items in (("authors", authors), ("keywords", keywords)):
        for item in items:
            _check_length(canonical, item, path=path, line=line)
    return Paper(
        id=ids.paper_id(given=given_id, doi=doi, arxiv_id=arxiv_id, title=title, abstract=abstract),
        title=title,
        abstract=abstract,
        authors=authors,
        year=year,
        venue=venue,
        url=url,
        doi=doi,
        arxiv_id=arxiv_id,
        keywords=keywords,
        title_derived=title_derived,
        source=f"{path}:{line}",
    )


def _check_unicode(canonical: str, value: Any, *, undecodable: bool, path: str, line: int) -> None:
    """A string holding a surrogate cannot be written as UTF-8: refuse the record, saying why."""
    found = _first_surrogate(value)
    if found is None:
        return
    if undecodable and _SURROGATES.match(found):
        raise DecodeFailed("not valid UTF-8 (undecodable bytes in this record)", path=path, line=line)
    raise DecodeFailed(
        f"field {canonical!r} holds a lone surrogate \\u{ord(found):04x}, which is not a character "
        "(a JSON \\u escape of a surrogate must pair a high one with a low one)",
        path=path,
        line=line,
    )


def _first_surrogate(value: Any) -> str | None:
    """The first surrogate in a string, or in the strings of nested lists and objects (iterative:
    a deeply nested value must not exhaust the stack)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if match := _ANY_SURROGATE.search(item):
                return match.group()
        elif isinstance(item, Mapping):
            stack.extend(reversed([*item.keys(), *item.values()]))
        elif isinstance(item, (list, tuple)):
            stack.extend(reversed(item))
    return None


def _check_length(canonical: str, value: str, *, path: str, line: int) -> str:
    limit = MAX_ABSTRACT_CHARS if canonical == "abstract" else MAX_FIELD_CHARS
    what = "an author" if canonical == "authors" else "a keyword" if canonical == "keywords" else f"field {canonical!r}"
    if len(value) > limit:
        raise RecordTooLarge(f"{what} has {len(value):,} characters, over the limit of {limit:,}", path=path, line=line)
    if canonical == "abstract" and len(value) > MAX_SYMBOL_RUN:
        word = max(map(len, value.split(" ")))  # clean_text left single spaces only
        if word > MAX_WORD_CHARS:
            raise RecordTooLarge(f"{what} has a word of {word:,} characters (no space), over the limit of {MAX_WORD_CHARS:,}", path=path, line=line)
        if run := max(map(len, _SYMBOL_RUN.findall(value)), default=0):
            raise RecordTooLarge(
                f"{what} has a run of {run:,} symbols (no letter, digit or space), over the limit of {MAX_SYMBOL_RUN:,}", path=path, line=line
            )
    return value


def parse_year(value: Any) -> int | None:
    """2020, "2020", "2020-05-01", 2020.0, CSL's {"date-parts": [[2020, 5]]} → 2020; anything
    without a plausible year → None."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, Mapping):  # CSL-JSON dates: {"date-parts": [[2020, 5, 1]]} or {"raw": "2020-05-01"}
        parts = value.get("date-parts")
        if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]:
            value = parts[0][0]
        else:
            value = value.get("raw") or value.get("literal")
        return parse_year(value) if isinstance(value, (str, int)) else None
    if isinstance(value, int):
        return value if 1800 <= value <= 2199 else None
    if isinstance(value, float) and value.is_integer():
        return parse_year(int(value))
    match = _YEAR.search(str(value))
    return int(match.group(1)) if match else None


def split_venue_year(venue: str) -> tuple[str, int | None]:
    """"ICML 2025" → ("ICML", 2025): the corpus files write venue and year together."""
    match = _VENUE_WITH_YEAR.match(venue)
    if not match:
        return venue, None
    return match.group("venue"), int(match.group("year"))


def split_authors(value: Any, *, path: str, line: int) -> tuple[str, ...]:
    """Authors as a list (of names or of {"name"}/{"given","family"} objects) or one string.

    Strings: "A; B" and "Last, First; Last, First" split on semicolons; "A and B" and
    "A, B and C" split on "and" and commas; BibTeX-style "Last, First and Last, First"
    (every part holding one comma) keeps each "Last, First" together; "A, B" splits on commas.
    "Last, First" becomes "First Last".
    """
    if value is None:
        return ()
    if isinstance(value, str):
        names = _split_author_string(value)
    elif isinstance(value, (list, tuple)):
        names = [_author_name(item, path=path, line=line) for item in value]
    else:
        raise MalformedRecord(f"field 'authors' should be a list or text, not {_json_type(value)}", path=path, line=line)
    return tuple(name for name in (clean_text(n) for n in names) if name and name.lower() not in {"others", "et al.", "et al"})


def _author_name(item: Any, *, path: str, line: int) -> str:
    if isinstance(item, str):
        return _first_last(item) if item.count(",") == 1 else item
    if isinstance(item, Mapping):
        name = item.get("name")
        if isinstance(name, str):
            return name
        parts = [item.get("given"), item.get("family")]
        if all(isinstance(p, str) or p is None for p in parts) and any(parts):
            return " ".join(p for p in parts if p)
    raise MalformedRecord(f"an author should be a name, not {_json_type(item)}", path=path, line=line)


def _split_author_string(value: str) -> list[str]:
    value = value.strip()
    if ";" in value:
        return [_first_last(part) for part in value.split(";")]
    by_and = [part for part in re.split(r"\s+and\s+|\s*&\s*", value) if part.strip()]
    if len(by_and) > 1 and all(part.count(",") == 1 for part in by_and):
        return [_first_last(part) for part in by_and]  # BibTeX style: "Smith, John and Doe, Jane"
    return [name for part in by_and for name in part.split(",")]


def _first_last(name: str) -> str:
    """"Smith, John" → "John Smith"; "Smith, Jr., John" → "John Smith Jr."; other names unchanged."""
    parts = [p.strip() for p in name.split(",")]
    if len(parts) == 2 and parts[1].lower().rstrip(".") in _NAME_SUFFIXES:
        return name  # "Martin Luther King, Jr." is already first-name-first
    if len(parts) == 2 and all(parts):
        return f"{parts[1]} {parts[0]}"
    if len(parts) == 3 and all(parts):
        return f"{parts[2]} {parts[0]} {parts[1]}"
    return name


def split_keywords(value: Any, *, path: str, line: int) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        items: Iterable[Any] = re.split(r"[;,]", value)
    elif isinstance(value, (list, tuple)):
        items = value
    else:
        raise MalformedRecord(f"field 'keywords' should be a list or text, not {_json_type(value)}", path=path, line=line)
    keywords = []
    for item in items:
        if not isinstance(item, (str, int, float)) or isinstance(item, bool):
            raise MalformedRecord(f"a keyword should be text, not {_json_type(item)}", path=path, line=line)
        keyword = clean_text(str(item))
        if keyword and keyword not in keywords:
            keywords.append(keyword)
    return tuple(keywords)


def is_preprint(venue: str | None) -> bool:
    return venue is not None and venue.lower() in PREPRINT_VENUES


def _json_type(value: Any) -> str:
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, bool):
        return "a boolean"
    return type(value).__name__


def _quote(title: str, limit: int = 60) -> str:
    return f"“{title if len(title) <= limit else title[: limit - 1] + '…'}”"
