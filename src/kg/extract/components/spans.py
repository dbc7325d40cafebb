"""Cheap per-doc helpers: character → token mapping and annotation checks.

``Doc.char_span`` and ``Doc.has_annotation`` walk every token on each call; these don't.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from spacy.attrs import IDX, LENGTH
from spacy.tokens import Doc, Span


def has_pos(doc: Doc) -> bool:
    """Tagged (the statistical pipeline ran): every token then has a POS."""
    return len(doc) > 0 and doc[0].pos != 0


def has_dep(doc: Doc) -> bool:
    """Parsed: every token then has a dependency label."""
    return len(doc) > 0 and doc[0].dep != 0


class CharIndex:
    """Token boundaries of one doc, for many char-offset look-ups."""

    def __init__(self, doc: Doc) -> None:
        self.doc = doc
        array = doc.to_array([IDX, LENGTH]).tolist() if len(doc) else []
        self.starts = [start for start, _ in array]
        self.ends = [start + length for start, length in array]

    def span(self, start: int, end: int, *, expand: bool = False) -> Span | None:
        """Tokens covering [start, end): exactly aligned, or (expand) every token touching it."""
        if expand:
            first = bisect_right(self.ends, start)  # first token ending after `start`
            last = bisect_left(self.starts, end)  # tokens starting before `end`
        else:
            first = bisect_left(self.starts, start)
            last = bisect_right(self.ends, end)
            if first >= len(self.starts) or self.starts[first] != start or last == 0 or self.ends[last - 1] != end:
                return self.contract(start, end)
        if first >= last:
            return None
        return self.doc[first:last]

    def contract(self, start: int, end: int) -> Span | None:
        """Tokens wholly inside [start, end)."""
        first = bisect_left(self.starts, start)
        last = bisect_right(self.ends, end)
        return self.doc[first:last] if first < last else None
