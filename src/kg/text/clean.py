"""Text as a reader sees it: PDF debris repaired and citations dropped, before spaCy reads it.

Abstracts extracted from PDFs carry debris: ``(cid:173)`` (a soft hyphen the extractor could not
map) and U+00AD soft hyphens inside words ("prob(cid:173) lems"), words split at line ends
("recog- nition"), ligature characters ("classiﬁcation"). Inline citations ("[Le Cun, Denker and
Solla, 1990]", "Smith et al. (2019)", "[3]") name no entity a graph should hold.

`clean_text` returns the repaired text and, for each of its characters, the offset in the given
text it came from, so every span found in the clean text maps back onto the abstract as given:
the paper record keeps its text, and ``abstract[start:end]`` of a mapped span is what the reader
sees there, debris included.
"""

from __future__ import annotations

import re
from typing import NamedTuple

LIGATURES = {"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl", "\ufb05": "st", "\ufb06": "st"}
# Words that keep their hyphen when a line break split after them ("self- supervised" → "self-supervised").
HYPHEN_PREFIXES = frozenset(
    """self non multi semi co cross pre post re sub inter intra anti well high low large small real long
    short state data model task time domain end two three one first second top bottom fine coarse""".split()
)

_YEAR = r"(?:1[89]|20)\d\d[a-z]?"
_NAME = r"[A-Z][\w'’.-]*(?: [A-Z][\w'’.-]*)?"
_DEBRIS = re.compile(
    r"(?P<cid>\(cid:\d+\)\s*)"  # (cid:173) and the break after it
    r"|(?P<shy>\u00ad\s*)"  # a soft hyphen and the break after it
    r"|(?P<split>(?<=[a-z])- (?=[a-z]))"  # "recog- nition"
    r"|(?P<lig>[\ufb00-\ufb06])"
    # [Le Cun, Denker and Solla, 1990], [Smith 1989; Jones et al. 1991]
    rf"|(?P<bracket> ?\[(?:{_NAME}[^\[\]]{{0,80}}?,? {_YEAR}[;,]? ?)+\])"
    # (Smith et al., 2019), (Smith and Jones 2019; Lee, 2020)
    rf"|(?P<paren> ?\((?:(?:see |e\.g\.,? )?{_NAME}(?: et al\.?| and {_NAME}| & {_NAME})?,? {_YEAR}[;,]? ?)+\))"
    rf"|(?P<etal>(?<= et al\.) \({_YEAR}\))"  # Smith et al. (2019): the year goes, the names stay words
    r"|(?P<numbered> ?\[\d+(?:\s?[,–-]\s?\d+)*\])"  # [3], [1, 4-6]
)


class CleanText(NamedTuple):
    text: str
    origin: list[int]  # origin[i]: offset in the given text of text[i]; one more entry: its length

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The given text's offsets of clean text[start:end] (a non-empty span)."""
        return self.origin[start], self.origin[end - 1] + 1


def clean_text(text: str) -> CleanText:
    """`text` with PDF debris repaired and citations dropped, and where each character came from."""
    pieces: list[str] = []
    origin: list[int] = []
    done = 0
    for match in _DEBRIS.finditer(text):
        start, end = match.span()
        pieces.append(text[done:start])
        origin.extend(range(done, start))
        kind = match.lastgroup
        if kind == "lig":
            pieces.append(LIGATURES[match.group()])
            origin.extend([start] * len(LIGATURES[match.group()]))
        elif kind == "split":
            word = re.search(r"[A-Za-z]+$", text[max(0, start - 30) : start])
            if word is not None and word.group().lower() in HYPHEN_PREFIXES:
                pieces.append("-")  # "self- supervised": a hyphenated word
                origin.append(start)
        done = end
    pieces.append(text[done:])
    origin.extend(range(done, len(text) + 1))
    return CleanText("".join(pieces), origin)
