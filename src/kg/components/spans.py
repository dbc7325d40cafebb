"""Fast character → token mapping (``Doc.char_span`` scans every token on each call)."""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from spacy.tokens import Doc, Span


class CharIndex:
    """Token boundaries of one doc, for many char-offset look-ups."""

    def __init__(self, doc: Doc) -> None:
        self.doc = doc
        self.starts = [token.idx for token in doc]
        self.ends = [token.idx + len(token) for token in doc]

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
