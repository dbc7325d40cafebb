"""BibTeX with ``abstract`` fields, parsed by bibtexparser 2; LaTeX decoded with pylatexenc.

The entry key is the paper's given id. ``journal``/``booktitle`` give the venue, ``eprint`` with
``archivePrefix = arXiv`` (or an arXiv URL/DOI/journal) the arXiv id. Titles, authors and
abstracts are decoded from LaTeX (``{\\"u}`` → ü, ``{BERT}`` → BERT) with math kept verbatim.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from functools import cache
from typing import TYPE_CHECKING, Any

from kg.errors import MalformedRecord
from kg.ingest.records import RawRecord

if TYPE_CHECKING:
    from bibtexparser.model import Entry

_LATEX_MARKERS = ("\\", "{", "}", "~")


def read_bibtex(text: str, *, path: str) -> Iterator[RawRecord | MalformedRecord]:
    import bibtexparser
    from bibtexparser.model import DuplicateBlockKeyBlock

    _quiet_bibtexparser()
    try:
        library = bibtexparser.parse_string(text)  # type: ignore[attr-defined]  # exported, but imported without `as` or __all__
    except Exception as error:  # the parser is tolerant, but if it gives up, say so in one line
        raise MalformedRecord(f"cannot parse BibTeX: {_reason(error)}", path=path) from None
    for block in library.failed_blocks:
        line = (block.start_line or 0) + 1
        if isinstance(block, DuplicateBlockKeyBlock):
            yield MalformedRecord(f"duplicate BibTeX key {block.key!r}", path=path, line=line)
        else:
            yield MalformedRecord(f"bad BibTeX entry: {_reason(block.error)}", path=path, line=line)
    for entry in library.entries:
        yield RawRecord((entry.start_line or 0) + 1, _entry_fields(entry))


def _entry_fields(entry: Entry) -> dict[str, object]:
    raw = {field.key.lower(): field.value for field in entry.fields if isinstance(field.value, str)}
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
