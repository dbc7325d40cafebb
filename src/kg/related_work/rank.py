"""Related work: rank papers by the concepts they share with a query paper and, when the
build embedded the papers (`kg build --embed`), by how close their abstracts are in meaning.

Two signals:

* **concepts** (`kg.related_work.index`): shared concepts weighted by role, saturating mentions,
  rarity and length, shared broader concepts at a lower weight. They explain: each shared
  concept is a reason with its share of the score.
* **embedding** (`kg.related_work.embed`): the cosine of the two papers' sentence embeddings. It recalls
  related work worded differently, and ranks papers sharing no concept at all.

With both, a candidate's score is  (1 - α) · concepts / best concepts  +  α · cosine,  the
concept score scaled by the best candidate's so the two are on one scale, α =
``SCORING["embed"]`` (chosen by ``bench/related_eval.py``). Ties are broken by paper id.

Paper author keywords are deliberately *not* used: they are the relevance judgments of
``bench/related_eval.py``.
"""

from __future__ import annotations

import heapq
import os
import weakref
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg.errors import GraphNotFound
from kg.generations import GraphFolder, resolve
from kg.graph import GRAPH_FILE, graph_stamp  # kg.graph imports networkx only to make graphs
from kg.model import parse_types
from kg.related_work.index import INDEX_FILE, SCORING, RelatedIndex, is_broader, role_of
from kg.related_work.lookup import PaperLookup

if TYPE_CHECKING:
    import networkx as nx
    import numpy as np

EMBED_META_FILE = "embeddings.json"  # kg.related_work.embed.EMBED_META_FILE, named here so numpy loads only when needed

__all__ = ["INDEX_FILE", "SCORING", "Reason", "RelatedIndex", "RelatedPaper", "RelatedResult", "find_related", "related"]


@dataclass(frozen=True, slots=True)
class Reason:
    """One shared concept and how much it adds to a result's concept score."""

    concept: str  # concept id
    label: str
    type: str
    contribution: float
    query_role: str  # "proposed" | "used": the query paper's role for the concept
    candidate_role: str  # the related paper's role
    broader: bool = False  # shared as a broader concept (one side names a narrower one)


@dataclass(frozen=True, slots=True)
class RelatedPaper:
    id: str
    title: str
    score: float  # what the ranking sorts by (the concept score alone without embeddings)
    reasons: tuple[Reason, ...]
    concepts: float = 0.0  # the concept score (the sum of the reasons' contributions)
    similarity: float | None = None  # cosine of the embeddings, when used

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["signals"] = {"concepts": self.concepts, "embedding": self.similarity}
        del data["concepts"], data["similarity"]
        return data


@dataclass(frozen=True, slots=True)
class RelatedResult:
    """What `kg related` shows: the resolved query paper and its ranked related papers."""

    query_id: str
    query_title: str
    results: tuple[RelatedPaper, ...]
    source: str  # "index" (related.idx) or "graph" (graph.json, the fallback)
    signals: tuple[str, ...] = ("concepts",)  # "concepts", and "embedding" when used

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": {"id": self.query_id, "title": self.query_title},
            "signals": list(self.signals),
            "results": [result.to_dict() for result in self.results],
        }


def rank(
    index: RelatedIndex,
    paper: int,
    *,
    top: int = 10,
    types: Iterable[str] | None = None,
    embeddings: np.ndarray | None = None,
) -> list[RelatedPaper]:
    """The `top` papers most related to paper number `paper`; `types` restricts which shared
    concepts count; `embeddings` (rows in the index's paper order) adds semantic similarity."""
    if top < 1:
        return []
    terms = index.query_terms(paper, parse_types(types) or None)
    concept_scores = index.concept_scores(paper, terms)
    ids = index.paper_ids
    if embeddings is None:
        best = heapq.nsmallest(top, ((-score, ids[c], c) for c, score in concept_scores.items()))
        return [related_paper(index, n, -negative, terms, -negative, None) for negative, _, n in best]

    import numpy as np

    candidates = np.fromiter(concept_scores.keys(), dtype=np.int64, count=len(concept_scores))
    values = np.fromiter(concept_scores.values(), dtype=np.float64, count=len(concept_scores))
    return fused(index, paper, terms, candidates, values, embeddings, top)


def fused(index: RelatedIndex, paper: int, terms: dict, candidates: Any, values: Any, embeddings: Any, top: int) -> list[RelatedPaper]:
    """The top papers by α · cosine + (1 − α) · concept score / the best one, where `candidates`
    (paper numbers) have concept scores `values` (numpy arrays): `rank` and the page's
    `kg.related_work.batch.Ranker` both end here, so they give the same list."""
    import numpy as np

    ids = index.paper_ids
    alpha = index.scoring["embed"]
    cosines = np.asarray(embeddings @ np.asarray(embeddings[paper], dtype=np.float32), dtype=np.float64)
    cosines[paper] = -np.inf
    scores = alpha * cosines
    concepts = np.zeros(len(ids))
    if len(candidates):
        concepts[candidates] = values
        scores[candidates] += (1 - alpha) * values / values.max()
    # Everything scoring at least the top-th best, then an exact sort with the id tie-break.
    head = min(top, len(ids) - 1)
    if head < 1:
        return []
    cut = -np.partition(-scores, head - 1)[head - 1]
    chosen = sorted((-float(scores[c]), ids[c], int(c)) for c in np.flatnonzero(scores >= cut))[:head]
    return [
        related_paper(index, n, -negative, terms, float(concepts[n]), float(cosines[n]))
        for negative, _, n in chosen
        if np.isfinite(negative)
    ]


def related_paper(index: RelatedIndex, candidate: int, score: float, terms: dict, concepts: float, similarity: float | None) -> RelatedPaper:
    reasons = tuple(
        Reason(
            concept=index.concept_ids[shared.concept],
            label=index.concept_labels[shared.concept],
            type=index.concept_types[shared.concept],
            contribution=shared.contribution,
            query_role=role_of(shared.query_code),
            candidate_role=role_of(shared.candidate_code),
            broader=is_broader(shared.query_code) or is_broader(shared.candidate_code),
        )
        for shared in index.shared(candidate, terms)
    )
    return RelatedPaper(index.paper_ids[candidate], index.titles[candidate], score, reasons, concepts, similarity)


# -- public functions ----------------------------------------------------------------------

_GRAPH_INDEXES: weakref.WeakKeyDictionary[Any, tuple[tuple[int, int], RelatedIndex]] = weakref.WeakKeyDictionary()


def index_of(graph: nx.DiGraph) -> RelatedIndex:
    """The index of an in-memory graph, cached while the graph's size is unchanged."""
    fingerprint = (graph.number_of_nodes(), graph.number_of_edges())
    cached = _GRAPH_INDEXES.get(graph)
    if cached is not None and cached[0] == fingerprint:
        return cached[1]
    index = RelatedIndex.from_graph(graph)
    _GRAPH_INDEXES[graph] = (fingerprint, index)
    return index


def related(
    graph: nx.DiGraph, paper: str, *, top: int = 10, types: Iterable[str] | None = None, use_embeddings: bool = True
) -> list[RelatedPaper]:
    """Papers related to `paper` (an id, a title or a title fragment) in a loaded graph, ranked
    as `kg related` ranks them: by shared concepts, fused with the embeddings the build wrote
    beside the graph `kg.load` read (unless not `use_embeddings`).

    >>> g = kg.load("out")
    >>> [(r.id, round(r.score, 3)) for r in kg.related(g, "HippoRAG", top=3)]
    """
    index = index_of(graph)
    vectors = graph_embeddings(graph, index) if use_embeddings else None
    return rank(index, lookup_of(index).find(paper), top=top, types=types, embeddings=vectors)


def graph_embeddings(graph: nx.DiGraph, index: RelatedIndex) -> Any:
    """The vectors stored beside the graph's folder (`kg.graph.loaded_from`) if they belong to
    exactly the index's papers, else None (a graph built in memory has none)."""
    from kg.graph import loaded_from

    folder = loaded_from(graph)
    return None if folder is None else stored_embeddings(folder, index)


def stored_embeddings(folder: Path, index: RelatedIndex) -> Any:
    """The vectors a build stored in `folder` if they belong to exactly the index's papers, else None."""
    if not (folder / EMBED_META_FILE).is_file():  # numpy is imported only when there are vectors
        return None
    from kg.related_work import embed

    return embed.load(folder, index.paper_ids)


def find_related(
    directory: str | os.PathLike[str],
    paper: str,
    *,
    top: int = 10,
    types: Iterable[str] | None = None,
    use_embeddings: bool = True,
) -> RelatedResult:
    """`kg related`: ``DIR/related.idx`` when it matches ``DIR/graph.json`` (else the graph),
    with ``DIR/embeddings.npy`` when the build wrote it and `use_embeddings`."""
    view = resolve(directory)  # one generation for the index, the graph and the vectors
    index, source = open_index(view)
    number = lookup_of(index).find(paper)
    vectors = stored_embeddings(view.folder, index) if use_embeddings else None
    results = rank(index, number, top=top, types=types, embeddings=vectors)
    signals = ("concepts", "embedding") if vectors is not None else ("concepts",)
    return RelatedResult(index.paper_ids[number], index.titles[number], tuple(results), source, signals)


def lookup_of(index: RelatedIndex) -> PaperLookup:
    """Look-up over the index's papers, numbered as the index numbers them."""
    return PaperLookup(index.paper_ids, index.titles, folded_titles=index.folded_titles)


def open_index(directory: str | os.PathLike[str] | GraphFolder) -> tuple[RelatedIndex, str]:
    """The saved index if it is fresh, else one built from graph.json; with "index" or "graph".
    Both files are read from one generation of the folder (`kg.generations.resolve`)."""
    view = resolve(directory)
    if not view.graph.is_file():
        raise GraphNotFound(f"no graph at {view.graph}", folder=str(view.root))
    index_path = view.file(INDEX_FILE)
    if index_path.is_file():
        try:
            index, stamp = RelatedIndex.load(index_path)
        except (ValueError, KeyError, TypeError, OSError):
            index, stamp = None, None  # unreadable or older format: rebuild from the graph below
        if index is not None and stamp == graph_stamp(view.graph) and index.scoring == SCORING:
            return index, "index"
    from kg.graph import load  # imports networkx: only on this slow path

    return RelatedIndex.from_graph(load(view.graph)), "graph"


def write_index(graph: nx.DiGraph, directory: str | os.PathLike[str]) -> Path:
    """Write ``DIR/related.idx`` for the graph just saved as ``DIR/graph.json`` (called by `kg build`)."""
    folder = Path(directory)
    return index_of(graph).save(folder / INDEX_FILE, graph_stamp=graph_stamp(folder / GRAPH_FILE))
