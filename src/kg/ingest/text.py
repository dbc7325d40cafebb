"""The seed text format: a collection header line, then one abstract per blank-line-separated paragraph.

    ICML 2025 Papers            ← header: venue "ICML", year 2025 ("ICML 2025 论文列表" too)

    We study universal …        ← abstract (a paragraph may span several lines)

    Time series anomaly …       ← abstract

Any "<VENUE> <YEAR> …" (or "… <VENUE> <YEAR>", "<YEAR> <VENUE> …") header gives venue and year.
A first paragraph that is one short line is a header even without a year (a list's name);
otherwise the file has no header and every paragraph is an abstract.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from kg.ingest.records import RawRecord

HEADER_MAX = 120  # longer first lines are abstracts, not headers

_VENUE_THEN_YEAR = re.compile(r"(?P<venue>[A-Za-z][\w&\-]*)\s*['’]?\s+(?P<year>(?:19|20)\d\d)\b")
_YEAR_THEN_VENUE = re.compile(r"\b(?P<year>(?:19|20)\d\d)\s+(?P<venue>[A-Z][\w&\-]*)")


def parse_header(line: str) -> tuple[str | None, int | None]:
    """"ICML 2025 Papers" → ("ICML", 2025); "2025 ICML papers" → ("ICML", 2025); "Reading list" → (None, None)."""
    match = _VENUE_THEN_YEAR.search(line) or _YEAR_THEN_VENUE.search(line)
    if not match:
        return None, None
    return match.group("venue"), int(match.group("year"))


def paragraphs(text: str) -> Iterator[tuple[int, str]]:
    """(first line number, text joined by spaces) for each blank-line-separated paragraph."""
    start = 0
    lines: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            if not lines:
                start = number
            lines.append(line.strip())
        elif lines:
            yield start, " ".join(lines)
            lines = []
    if lines:
        yield start, " ".join(lines)


def looks_like_header(first_line: str, paragraph: str) -> bool:
    if first_line != paragraph or len(paragraph) > HEADER_MAX:
        return False
    return parse_header(paragraph) != (None, None) or not paragraph.rstrip().endswith((".", "!", "?"))


def read_text(text: str) -> Iterator[RawRecord]:
    venue: str | None = None
    year: int | None = None
    first_line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    for index, (line, paragraph) in enumerate(paragraphs(text)):
        if index == 0 and looks_like_header(first_line, paragraph):
            venue, year = parse_header(paragraph)
            continue
        yield RawRecord(line, {"abstract": paragraph, "venue": venue, "year": year})
