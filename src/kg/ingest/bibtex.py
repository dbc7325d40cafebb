"""BibTeX with ``abstract`` fields, parsed by bibtexparser 2; LaTeX decoded with pylatexenc.

The entry key is the paper's given id. ``journal``/``booktitle`` give the venue, ``eprint`` with
``archivePrefix = arXiv`` (or an arXiv URL/DOI/journal) the arXiv id. Titles, authors and
abstracts are decoded from LaTeX (``{\\"u}`` → ü, ``{BERT}`` → BERT) with math kept verbatim.

A field's value is read as BibTeX reads it (`Macros.value`): ``{…}`` and ``"…"`` text (``\"``
inside ``"…"`` is an escaped quote, as bibtexparser reads it), numbers and ``@string`` macros
(and the month names ``jan`` … ``dec``), joined by ``#``. bibtexparser leaves any value that is
more than one macro as written, so ``abstract = intro # {We propose …}`` became the abstract
``intro # We propose …``: in a value joined by ``#``, a macro that is not defined, or macros that
refer to each other in a loop, make the entry a malformed record naming the field (exit 6), never
text glued into the abstract. A bare value with no ``#`` (``doi = 10.1000/xyz``, ``year = -2020``,
``keywords = transformers``) is a macro if one of that name is defined, else its text as written,
as bibtexparser kept it.

Macros multiply text: every entry may name the same long macro. A value may expand to at most
ten times its field's limit (`kg.ingest.records`), and what macros add to the values kg reads is
capped per file (`MAX_MACRO_CHARS` plus twice the file's length), both checked on the lengths
before any text is made, so reading takes time in proportion to the file; past either, the
entry is a malformed record (exit 6).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from functools import cache
from typing import TYPE_CHECKING, Any

from kg.errors import MalformedRecord
from kg.ingest.records import MAX_ABSTRACT_CHARS, MAX_FIELD_CHARS, RawRecord

if TYPE_CHECKING:
    from bibtexparser.library import Library
    from bibtexparser.model import Entry

_LATEX_MARKERS = ("\\", "{", "}", "~")
# The fields kg reads: only their values need be understood (an undefined macro in `note` costs nothing).
READ_FIELDS = ("title", "abstract", "author", "year", "journal", "booktitle", "venue", "url", "doi", "eprint", "archiveprefix", "eprinttype", "keywords")
MONTHS = {m[:3].lower(): m for m in ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December")}
# A value expanded from macros: past this it is refused while expanding (`a = b # b`, `b = c # c`,
# … doubles); an abstract's, and any other field's (ten times the limits records then apply).
MAX_VALUE_CHARS = 10 * MAX_ABSTRACT_CHARS
MAX_OTHER_VALUE_CHARS = 10 * MAX_FIELD_CHARS
MAX_MACRO_CHARS = MAX_VALUE_CHARS  # what macros may add in one file, beyond twice its length
MAX_MACRO_DEPTH = 64
_WORD = re.compile(r'[^\s#{}"]+')


def read_bibtex(text: str, *, path: str) -> Iterator[RawRecord | MalformedRecord]:
    import bibtexparser
    from bibtexparser.model import DuplicateBlockKeyBlock

    _quiet_bibtexparser()
    try:  # no middleware: field values come as written, read by `Macros.value`
        library = bibtexparser.parse_string(text, parse_stack=[])  # type: ignore[attr-defined]  # exported, but imported without `as` or __all__
    except Exception as error:  # the parser is tolerant, but if it gives up, say so in one line
        raise MalformedRecord(f"cannot parse BibTeX: {_reason(error)}", path=path) from None
    for block in library.failed_blocks:
        line = (block.start_line or 0) + 1
        if isinstance(block, DuplicateBlockKeyBlock):
            yield MalformedRecord(f"duplicate BibTeX key {block.key!r}", path=path, line=line)
        else:
            yield MalformedRecord(f"bad BibTeX entry: {_reason(block.error)}", path=path, line=line)
    macros = Macros(library, budget=MAX_MACRO_CHARS + 2 * len(text))
    for entry in library.entries:
        line = (entry.start_line or 0) + 1
        try:
            yield RawRecord(line, _entry_fields(entry, macros))
        except BadValue as error:
            yield MalformedRecord(str(error), path=path, line=line)


class BadValue(ValueError):
    """A field value that BibTeX could not read: an undefined macro, a loop, a missing ``#``, or
    one that expands past its limit or the file's budget."""


# A value as parts: (True, macro name) or (False, text as written).
Parts = list[tuple[bool, str]]


class Macros:
    """The ``@string`` macros of one file and what reads a field's value. Lazily: a value's
    length is worked out from its parts' lengths (each macro's once) and checked against its
    limit and the file's `budget` (the characters macros may add to the values read, each use
    counting its length) before any text is built; each macro's text is then built once."""

    def __init__(self, library: Library, *, budget: int = MAX_MACRO_CHARS) -> None:
        self._defined: dict[str, tuple[str, str]] = {}  # lower-case name -> (name as written, raw value)
        for block in library.strings:
            self._defined.setdefault(str(block.key).lower(), (str(block.key), str(block.value)))
        self._sizes: dict[str, int] = {}
        self._expanded: dict[str, str] = {}
        self.budget = budget
        self.spent = 0  # characters macros added to the values read so far

    def value(self, raw: str, *, limit: int = MAX_VALUE_CHARS) -> str:
        """`raw` (a field's value as written) as text, after `BadValue` if it cannot be read or
        expands to more than `limit` characters or past the file's budget."""
        parts = self.parts(raw)
        size = made = 0
        for macro, item in parts:
            length = self.size(item) if macro else len(item)
            size += length
            made += length if macro else 0
            if size > limit:
                raise BadValue(f"the value expands to more than {limit:,} characters")
        if self.spent + made > self.budget:
            raise BadValue(f"the file's @string macros expand to more than {self.budget:,} characters in all")
        self.spent += made
        return self._build(parts)

    def parts(self, raw: str) -> Parts:
        """The parts of `raw`: each ``{…}``, ``"…"``, number or macro name, joined by ``#``. Bare
        text with no ``#`` (a DOI, a URL, ``-2020``, a name no macro has) is kept as written, as
        bibtexparser kept it; a bare word that names a macro or a month is that macro."""
        stripped = raw.strip()
        if stripped and stripped[0] not in '{"' and "#" not in stripped:
            named = _WORD.fullmatch(stripped) and (stripped.lower() in self._defined or stripped.lower() in MONTHS)
            return [(True, stripped)] if named else [(False, stripped)]
        parts: Parts = []
        at, wants_part = 0, True
        while (at := _skip_space(raw, at)) < len(raw):
            if not wants_part:
                if raw[at] != "#":
                    raise BadValue(f"expected # between the parts of the value, found {raw[at:at + 20]!r}")
                at, wants_part = at + 1, True
                continue
            if raw[at] in '{"':
                end = _closing(raw, at)
                parts.append((False, raw[at + 1 : end]))
                at = end + 1
            else:
                word = _WORD.match(raw, at)
                if word is None:
                    raise BadValue(f"unexpected {raw[at]!r} in the value")
                parts.append((not word.group().isdigit(), word.group()))
                at = word.end()
            wants_part = False
        if wants_part and parts:
            raise BadValue("the value ends with #")
        return parts

    def size(self, name: str, within: tuple[str, ...] = ()) -> int:
        """The length of macro `name`'s text (nothing built), after `BadValue` if it is not
        defined, in a loop, nested too deep or longer than `MAX_VALUE_CHARS`."""
        key = name.lower()
        if key in self._sizes:
            return self._sizes[key]
        if key not in self._defined:
            if key in MONTHS:
                return len(MONTHS[key])
            raise BadValue(f"undefined @string macro {name!r}")
        if key in within:
            loop = [*within[within.index(key) :], key]
            raise BadValue("@string macros refer to each other in a loop: " + " → ".join(self._defined[k][0] for k in loop))
        if len(within) >= MAX_MACRO_DEPTH:
            raise BadValue(f"@string macros nested more than {MAX_MACRO_DEPTH} deep")
        size = 0
        for macro, item in self.parts(self._defined[key][1]):
            size += self.size(item, (*within, key)) if macro else len(item)
            if size > MAX_VALUE_CHARS:  # `a = b # b`, `b = c # c`, … doubles: stop before the numbers grow
                raise BadValue(f"the value expands to more than {MAX_VALUE_CHARS:,} characters")
        self._sizes[key] = size
        return size

    def _build(self, parts: Parts) -> str:
        return "".join(self._text(item) if macro else item for macro, item in parts)

    def _text(self, name: str) -> str:
        """Macro `name`'s text (its size already checked), built once."""
        key = name.lower()
        if key not in self._expanded:
            self._expanded[key] = self._build(self.parts(self._defined[key][1])) if key in self._defined else MONTHS[key]
        return self._expanded[key]


def _skip_space(raw: str, at: int) -> int:
    while at < len(raw) and raw[at].isspace():
        at += 1
    return at


def _closing(raw: str, start: int) -> int:
    """Where the ``{…}`` or ``"…"`` opened at `start` ends (braces nest; a quote inside braces,
    or after a backslash, does not end a quoted value)."""
    depth = 0
    for at in range(start + 1, len(raw)):
        char = raw[at]
        if char == "{":
            depth += 1
        elif char == "}":
            if depth == 0:
                if raw[start] == "{":
                    return at
                raise BadValue("unbalanced } in the value")
            depth -= 1
        elif char == '"' and raw[start] == '"' and depth == 0 and raw[at - 1] != "\\":  # \" is a quote inside, as bibtexparser reads it
            return at
    raise BadValue(f"unterminated {raw[start]} in the value")


def _entry_fields(entry: Entry, macros: Macros) -> dict[str, object]:
    raw: dict[str, str] = {}
    for field in entry.fields:
        key = field.key.lower()
        if key in READ_FIELDS and isinstance(field.value, str):  # a repeated field: the last one, as before
            try:
                raw[key] = macros.value(field.value, limit=MAX_VALUE_CHARS if key == "abstract" else MAX_OTHER_VALUE_CHARS)
            except BadValue as error:
                raise BadValue(f"field {key!r}: {error}") from None
    arxiv = None
    if raw.get("archiveprefix", raw.get("eprinttype", "")).lower() == "arxiv":
        arxiv = raw.get("eprint")
    venue = raw.get("journal") or raw.get("booktitle") or raw.get("venue")
    fields = {
        "id": entry.key,
        "title": latex_to_text(raw["title"]) if "title" in raw else None,
        "abstract": latex_to_text(raw["abstract"]) if "abstract" in raw else None,
        "authors": bibtex_names(raw.get("author", "")),
        "year": raw.get("year"),
        "venue": latex_to_text(venue) if venue else None,
        "url": raw.get("url"),
        "doi": raw.get("doi"),
        "arxiv_id": arxiv,
        "keywords": latex_to_text(raw["keywords"]) if "keywords" in raw else None,
    }
    return {name: value for name, value in fields.items() if value is not None}  # absent stays absent


def _reason(error: BaseException | None) -> str:
    """bibtexparser's exceptions keep their message in `abort_reason`, not in str()."""
    reason = getattr(error, "abort_reason", None) or (str(error) if error else "")
    return " ".join(reason.split()) or "cannot parse this entry"


def bibtex_names(value: str) -> list[str]:
    """"Smith, John and M{\\"u}ller, J{\\"o}rg and {van der Berg}, Jan" → first-name-first, decoded."""
    from bibtexparser.middlewares.names import InvalidNameError, parse_single_name_into_parts, split_multiple_persons_names

    names = []
    for name in split_multiple_persons_names(value):
        try:
            merged = parse_single_name_into_parts(name, strict=False).merge_first_name_first
        except InvalidNameError:
            merged = name
        names.append(latex_to_text(merged))
    return names


def latex_to_text(value: str) -> str:
    if not any(marker in value for marker in _LATEX_MARKERS):
        return value
    try:
        text: str = _converter().latex_to_text(value)
        return text
    except Exception:  # pylatexenc is tolerant, but a decoding failure must not lose the record
        return value


@cache
def _converter() -> Any:  # pylatexenc's LatexNodes2Text (untyped)
    from pylatexenc.latex2text import LatexNodes2Text

    return LatexNodes2Text(math_mode="verbatim")


def _quiet_bibtexparser() -> None:
    """bibtexparser logs parse failures itself; kg reports them as records, so keep the log quiet."""
    logger = logging.getLogger("bibtexparser")
    if not logger.handlers:
        logger.addHandler(logging.NullHandler())
