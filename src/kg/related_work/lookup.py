"""Finding a paper the way a person names it: by id, by title, or by a few words of the title.

`kg related`, `kg html --focus` and the library's `kg.related` all find their paper here,
so one query means the same paper everywhere and a miss gets the same suggestions.
Papers are numbered in sorted-id order (the order `kg.related_work.rank.RelatedIndex` uses).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from kg.errors import AmbiguousPaper, PaperNotFound

if TYPE_CHECKING:
    import networkx as nx

CANDIDATES_SHOWN = 10  # ambiguity / not-found messages list at most this many papers


class PaperLookup:
    """Paper ids and titles (one line each, in paper-number order), ready for look-up."""

    def __init__(self, paper_ids: Sequence[str], titles: Sequence[str], *, folded_titles: str | None = None) -> None:
        self.paper_ids = paper_ids
        self.titles = titles
        # All titles case-folded, one per line: a lookup is one C-speed scan of one string.
        self.folded_titles = fold_titles(titles) if folded_titles is None else folded_titles
        self._number = {paper_id: number for number, paper_id in enumerate(paper_ids)}

    @classmethod
    def from_graph(cls, graph: nx.DiGraph[str]) -> PaperLookup:
        """The papers of a kg graph, numbered as the related-work index numbers them."""
        papers = sorted((key, data) for key, data in graph.nodes(data=True) if data.get("kind") == "paper")
        return cls([paper_id(key, data) for key, data in papers], [one_line(data.get("title")) for _, data in papers])

    def find(self, query: str) -> int:
        """Find one paper: exact id > exact title > a fragment matching exactly one title.

        Titles compare case-insensitively with whitespace collapsed. A fragment matches a
        title when each of its words starts a word of the title, in any order ("anomaly
        detection KAN" finds "KAN-AD: Time Series Anomaly Detection …").
        Raises AmbiguousPaper (candidates listed) or PaperNotFound (closest titles listed).
        """
        text = query.strip()
        number = self._number.get(text.removeprefix("paper:"))
        if number is not None:
            return number
        folded = _fold(text)
        exact = self._exact_title_matches(folded)
        if len(exact) == 1:
            return exact[0]
        if exact:
            raise AmbiguousPaper(
                self._list_message(f"{len(exact)} papers are titled {text!r}; give an id", exact),
                candidates=tuple(self.paper_ids[n] for n in exact),
            )
        matches = self._fragment_matches(_words(folded))
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise AmbiguousPaper(
                self._list_message(f"{text!r} matches {len(matches)} papers; give an id or more of the title", matches),
                candidates=tuple(self.paper_ids[n] for n in matches),
            )
        closest = self._closest(text)
        if not closest:
            raise PaperNotFound(f"no paper matches {text!r}, and no title is close to it")
        raise PaperNotFound(
            self._list_message(f"no paper matches {text!r}; closest titles", closest),
            suggestions=tuple(self.paper_ids[n] for n in closest),
        )

    def _exact_title_matches(self, folded: str) -> list[int]:
        """Papers whose folded title is exactly `folded`."""
        text, found = self.folded_titles, []
        for at, line in _lines_of(text, _occurrences(text, folded)):
            end = at + len(folded)
            if folded and (at == 0 or text[at - 1] == "\n") and (end == len(text) or text[end] == "\n"):
                found.append(line)
        return found

    def _fragment_matches(self, words: list[str]) -> list[int]:
        """Papers whose title has, for each word, a word starting with it (in any order)."""
        if not words:
            return []
        text, found, checked = self.folded_titles, [], -1
        longest, *others = sorted(set(words), key=lambda word: (-len(word), word))  # longest narrows fastest
        for at, line in _lines_of(text, _word_starts(text, longest, 0, len(text))):
            if line == checked:
                continue
            checked = line
            start, end = text.rfind("\n", 0, at) + 1, text.find("\n", at)
            end = len(text) if end < 0 else end
            if all(next(_word_starts(text, word, start, end), None) is not None for word in others):  # 0 is a position
                found.append(line)
        return found

    def _closest(self, text: str) -> list[int]:
        """Up to five titles most like `text`: rapidfuzz partial_ratio ≥ 60 (the best-matching
        stretch of the title, so a misspelt fragment still finds its paper)."""
        from rapidfuzz import fuzz, process  # only on the not-found path

        found = process.extract(_fold(text), self.folded_titles.split("\n"), scorer=fuzz.partial_ratio, limit=5, score_cutoff=60)
        return [number for _, _, number in found]  # equal scores keep title (id) order

    def _list_message(self, head: str, numbers: Sequence[int]) -> str:
        """One line, then the candidates (id and title) in the given order, one per line."""
        lines = [f"{head}:"] + [f"  {self.paper_ids[n]}  {self.titles[n]}" for n in numbers[:CANDIDATES_SHOWN]]
        if len(numbers) > CANDIDATES_SHOWN:
            lines.append(f"  … and {len(numbers) - CANDIDATES_SHOWN} more")
        return "\n".join(lines)


def paper_id(key: str, data: dict[str, Any]) -> str:
    """The id of a paper node (its ``id`` attribute, else the node key without ``paper:``)."""
    return data.get("id") or key.removeprefix("paper:")


def one_line(title: str | None) -> str:
    """A title with its whitespace collapsed, so every title is one line of `folded_titles`."""
    return " ".join((title or "").split())


def fold_titles(titles: Iterable[str]) -> str:
    return "\n".join(titles).casefold()


_WORD = re.compile(r"\w+")


def _fold(text: str) -> str:
    return " ".join(text.casefold().split())


def _words(text: str) -> list[str]:
    return _WORD.findall(text)


def _occurrences(text: str, needle: str) -> Iterator[int]:
    at = text.find(needle) if needle else -1
    while at >= 0:
        yield at
        at = text.find(needle, at + 1)


def _lines_of(text: str, positions: Iterable[int]) -> Iterator[tuple[int, int]]:
    """(position, line number) for increasing positions, counting newlines as it goes."""
    line, counted = 0, 0
    for at in positions:
        line += text.count("\n", counted, at)
        counted = at
        yield at, line


def _word_starts(text: str, word: str, start: int, end: int) -> Iterator[int]:
    """Positions in text[start:end] where `word` begins a word (str.find, then a boundary check)."""
    at = text.find(word, start, end)
    while at >= 0:
        if at == 0 or not _WORD.match(text, at - 1):
            yield at
        at = text.find(word, at + 1, end)
