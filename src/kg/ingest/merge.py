"""Exact-duplicate abstracts become one paper; ids are made unique. Both independent of input order.

Which record of a duplicate group speaks for the paper is decided by a total order on the
records themselves (never by reading order): a record with a real title before one with a
derived title, a published venue before a preprint server before none, a given id before a
DOI, an arXiv id and a made-up slug, more metadata before less, then the smaller id and source. Metadata the winner lacks (authors, year, DOI, arXiv id…)
is filled from the others in that order.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterable

from kg.ingest.ids import content_hash, slugify
from kg.ingest.records import is_preprint
from kg.model import Paper

FILLABLE = ("authors", "year", "venue", "url", "doi", "arxiv_id", "keywords")


@dataclasses.dataclass(frozen=True, slots=True)
class Candidate:
    """A paper as read from one record, with where it was read (for a stable tie-break)."""

    paper: Paper
    path: str
    line: int


def merge_duplicates(candidates: Iterable[Candidate]) -> tuple[list[Paper], int]:
    """Papers with unique abstracts (and unique ids), sorted by id, and how many records were merged."""
    groups: dict[str, list[Candidate]] = defaultdict(list)
    for candidate in candidates:
        groups[candidate.paper.abstract].append(candidate)
    papers = []
    merged = 0
    for group in groups.values():
        if len(group) == 1:
            papers.append(group[0].paper)
            continue
        group.sort(key=_rank)
        papers.append(_merge(group))
        merged += len(group) - 1
    return sorted(_unique_ids(papers), key=lambda p: p.id), merged


def _rank(candidate: Candidate) -> tuple[bool, int, int, int, str, str, int]:
    paper = candidate.paper
    venue_rank = 2 if not paper.venue else 1 if is_preprint(paper.venue) else 0
    filled = sum(1 for name in FILLABLE if getattr(paper, name))
    return (paper.title_derived, venue_rank, _id_rank(paper), -filled, paper.id, candidate.path, candidate.line)


def _id_rank(paper: Paper) -> int:
    """An id someone gave (0) before a DOI (1), an arXiv id (2) and a made-up slug (3)."""
    if paper.id.startswith("doi:"):
        return 1
    if paper.id.startswith("arXiv:"):
        return 2
    if paper.id == f"{slugify(paper.title)}-{content_hash(paper.abstract)}":
        return 3
    return 0


def _merge(group: list[Candidate]) -> Paper:
    winner = group[0].paper
    others = [c.paper for c in group[1:]]
    filled = {}
    for name in FILLABLE:
        if not getattr(winner, name):
            value = next((getattr(p, name) for p in others if getattr(p, name)), None)
            if value:
                filled[name] = value
    return dataclasses.replace(
        winner,
        **filled,
        duplicate_sources=tuple(f"{c.path}:{c.line}" for c in sorted(group[1:], key=lambda c: (c.path, c.line))),
        alt_ids=tuple(sorted({p.id for p in others} - {winner.id})),
    )


def _unique_ids(papers: list[Paper]) -> list[Paper]:
    """Different papers that were given the same id (two .bib files both using `smith2020`) each get
    ``<id>-<hash of abstract>``, keeping the given id in `alt_ids`: nothing is lost or overwritten."""
    by_id: dict[str, list[Paper]] = defaultdict(list)
    for paper in papers:
        by_id[paper.id].append(paper)
    unique = []
    for paper_id, same in by_id.items():
        if len(same) == 1:
            unique.extend(same)
            continue
        for paper in same:
            alt_ids = tuple(sorted({*paper.alt_ids, paper_id}))
            unique.append(dataclasses.replace(paper, id=f"{paper_id}-{content_hash(paper.abstract)}", alt_ids=alt_ids))
    return unique
