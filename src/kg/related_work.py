"""Related work: rank papers by the concepts they share with a query paper, with reasons.

Scoring: the weighted overlap (dot product) of two papers' concept vectors, where a
paper's weight for a concept is

    role × (1 + ln m) × idf,   role = 1.5 if the paper proposes the concept, 1 if it uses it,
                               m = mentions of the concept in the paper's abstract,
                               idf = ln(1 + N / df)   (N papers, df of them linked to the concept)

so rare concepts count more than ubiquitous ones, a concept an abstract keeps returning to
counts more than one it names in passing, and what a paper *proposes* counts more than what
it merely uses. Each shared concept's product is its contribution; the contributions of a
result add up to its score and are its reasons, strongest first. Ties are broken by paper
id, so the ranking is deterministic. The choices (no length normalisation, log mentions,
1.5 for proposed) come from ``bench/related_eval.py``, which prints the alternatives.
Everything but ln is SPARQL 1.1 arithmetic, and ``schemas/queries/related_weighted.rq``
computes ln by a series: it ranks identically.

The ranking runs on a `RelatedIndex`: compact posting lists (concept → papers and paper →
concepts) built from the networkx graph. `kg build` also writes the index next to
graph.json (``related.idx``: a versioned JSON header, then packed arrays) so that `kg related`
answers without loading the whole graph — or networkx, or spaCy. A missing or stale
index falls back to the graph; both paths run the same code on the same numbers, so they
return the identical ranking.

Paper author keywords are deliberately *not* used: they are the relevance judgments of
``bench/related_eval.py``.
"""

from __future__ import annotations

import array
import heapq
import json
import math
import mmap
import os
import sys
import weakref
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg.atomic import atomic_open
from kg.errors import GraphNotFound
from kg.generations import GraphFolder, resolve
from kg.graph import GRAPH_FILE, graph_stamp  # kg.graph imports networkx only to make graphs
from kg.lookup import PaperLookup, fold_titles, one_line, paper_id
from kg.model import parse_types

if TYPE_CHECKING:  # networkx is imported only by the graph fallback: it costs ~0.4 s
    import networkx as nx

INDEX_FILE = "related.idx"
INDEX_FORMAT = "kg-related-index"
INDEX_VERSION = 3  # bump when the layout or the scoring formula changes: older indexes are then stale
MAGIC = b"KGRELIDX"

# Scoring parameters. They are stored in the index; an index written with other values is stale.
SCORING: dict[str, float] = {"proposed": 1.5, "used": 1.0}

Numbers = array.array | memoryview  # packed ints: built in memory, or viewed in a mapped file


@dataclass(frozen=True, slots=True)
class Reason:
    """One shared concept and how much it adds to a result's score."""

    concept: str  # concept id
    label: str
    type: str
    contribution: float
    query_role: str  # "proposed" | "used": the query paper's role for the concept
    candidate_role: str  # the related paper's role


@dataclass(frozen=True, slots=True)
class RelatedPaper:
    id: str
    title: str
    score: float
    reasons: tuple[Reason, ...]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class RelatedResult:
    """What `kg related` shows: the resolved query paper and its ranked related papers."""

    query_id: str
    query_title: str
    results: tuple[RelatedPaper, ...]
    source: str  # "index" (related.idx) or "graph" (graph.json, the fallback)

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": {"id": self.query_id, "title": self.query_title},
            "results": [result.to_dict() for result in self.results],
        }


# A posting's code packs the role and the mention count into one int: mentions * 2 + proposed.
def _code(role: str, mentions: int) -> int:
    return max(int(mentions), 1) * 2 + (role == "proposed")


def _role(code: int) -> str:
    return "proposed" if code & 1 else "used"


def _idf(papers: int, df: int) -> float:
    return math.log(1.0 + papers / df)


def _term(code: int, idf: float, scoring: dict[str, float]) -> float:
    role_weight = scoring["proposed"] if code & 1 else scoring["used"]
    return role_weight * (1.0 + math.log(code >> 1)) * idf  # role × (1 + ln mentions) × idf


class RelatedIndex:
    """Posting lists of the paper–concept graph, ready for ranking.

    Papers and concepts are numbered in sorted-id order; ``concept_ptr``/``concept_papers``/
    ``concept_codes`` list each concept's papers (CSR), ``paper_ptr``/``paper_concepts``/
    ``paper_codes`` each paper's concepts.
    """

    def __init__(
        self,
        *,
        paper_ids: list[str],
        titles: list[str],
        concept_ids: list[str],
        concept_labels: list[str],
        concept_types: list[str],
        paper_ptr: Numbers,
        paper_concepts: Numbers,
        paper_codes: Numbers,
        concept_ptr: Numbers,
        concept_papers: Numbers,
        concept_codes: Numbers,
        scoring: dict[str, float],
        folded_titles: str | None = None,
    ) -> None:
        self.paper_ids = paper_ids
        self.titles = titles
        self.concept_ids = concept_ids
        self.concept_labels = concept_labels
        self.concept_types = concept_types
        self.paper_ptr = paper_ptr
        self.paper_concepts = paper_concepts
        self.paper_codes = paper_codes
        self.concept_ptr = concept_ptr
        self.concept_papers = concept_papers
        self.concept_codes = concept_codes
        self.scoring = dict(scoring)
        # Stored with the index so that `kg.lookup` need not fold every title on each query.
        self.folded_titles = fold_titles(titles) if folded_titles is None else folded_titles

    # -- construction -------------------------------------------------------------------

    @classmethod
    def from_graph(cls, graph: nx.DiGraph, *, scoring: dict[str, float] | None = None) -> RelatedIndex:
        scoring = dict(SCORING if scoring is None else scoring)
        papers = sorted((key, data) for key, data in graph.nodes(data=True) if data.get("kind") == "paper")
        concepts = sorted((key, data) for key, data in graph.nodes(data=True) if data.get("kind") == "concept")
        paper_number = {key: number for number, (key, _) in enumerate(papers)}
        concept_number = {key: number for number, (key, _) in enumerate(concepts)}

        by_paper: list[list[tuple[int, int]]] = [[] for _ in papers]
        by_concept: list[list[tuple[int, int]]] = [[] for _ in concepts]
        for source, target, edge in graph.edges(data=True):
            if edge.get("kind") != "mentions" or source not in paper_number or target not in concept_number:
                continue
            p, c = paper_number[source], concept_number[target]
            code = _code(edge.get("role", "used"), edge.get("mentions", 1))
            by_paper[p].append((c, code))
            by_concept[c].append((p, code))

        paper_ptr, paper_concepts, paper_codes = _csr(by_paper)
        concept_ptr, concept_papers, concept_codes = _csr(by_concept)
        return cls(
            paper_ids=[paper_id(key, data) for key, data in papers],
            titles=[one_line(data.get("title")) for _, data in papers],
            concept_ids=[data.get("id") or key.removeprefix("concept:") for key, data in concepts],
            concept_labels=[data.get("label") or "" for _, data in concepts],
            concept_types=[data.get("type") or "" for _, data in concepts],
            paper_ptr=paper_ptr,
            paper_concepts=paper_concepts,
            paper_codes=paper_codes,
            concept_ptr=concept_ptr,
            concept_papers=concept_papers,
            concept_codes=concept_codes,
            scoring=scoring,
        )

    # -- on disk ---------------------------------------------------------------------------
    # related.idx = MAGIC, an 8-byte little-endian header length, a UTF-8 JSON header (format,
    # version, graph stamp, scoring, ids, titles, labels, where each array lies), then the
    # arrays as raw little-endian bytes. Loading maps the file and views the arrays in place,
    # so a query reads only the postings it touches.

    _ARRAYS = ("paper_ptr", "paper_concepts", "paper_codes", "concept_ptr", "concept_papers", "concept_codes")

    def save(self, path: str | os.PathLike[str], *, graph_stamp: dict[str, Any] | None = None) -> Path:
        """Write the index atomically. `graph_stamp` (graph.json's content id) marks what it indexes."""
        layout, blobs, offset = {}, [], 0
        for name in self._ARRAYS:
            source = getattr(self, name)  # an array, or a memoryview of a loaded index
            values = array.array(getattr(source, "typecode", None) or source.format, source)
            if sys.byteorder == "big":
                values.byteswap()
            data = values.tobytes()
            layout[name] = {"type": values.typecode, "offset": offset, "count": len(values)}
            padding = -len(data) % 8  # keep every array 8-byte aligned
            blobs.append(data + bytes(padding))
            offset += len(data) + padding
        header = {
            "format": INDEX_FORMAT,
            "version": INDEX_VERSION,
            "graph": graph_stamp,
            "scoring": self.scoring,
            "papers": {"ids": self.paper_ids, "titles": self.titles, "folded_titles": self.folded_titles},
            "concepts": {"ids": self.concept_ids, "labels": self.concept_labels, "types": self.concept_types},
            "arrays": layout,
        }
        encoded = json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        encoded += b" " * (-(len(MAGIC) + 8 + len(encoded)) % 8)
        target = Path(path)
        with atomic_open(target, "wb") as handle:
            handle.write(MAGIC + len(encoded).to_bytes(8, "little") + encoded)
            for blob in blobs:
                handle.write(blob)
        return target

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> tuple[RelatedIndex, dict[str, Any] | None]:
        """Read an index; returns it with the graph stamp it was written for. ValueError if unusable."""
        with open(path, "rb") as handle:
            if handle.read(len(MAGIC)) != MAGIC:
                raise ValueError(f"{path}: not a version {INDEX_VERSION} related-papers index")
            size = int.from_bytes(handle.read(8), "little")
            header = json.loads(handle.read(size).decode("utf-8"))
            start = len(MAGIC) + 8 + size
            data = memoryview(mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ))[start:]
        if header.get("format") != INDEX_FORMAT or header.get("version") != INDEX_VERSION:
            raise ValueError(f"{path}: not a version {INDEX_VERSION} related-papers index")
        arrays = {}
        for name in cls._ARRAYS:
            spec = header["arrays"][name]
            width = array.array(spec["type"]).itemsize
            chunk = data[spec["offset"] : spec["offset"] + width * spec["count"]]
            if len(chunk) != width * spec["count"]:
                raise ValueError(f"{path}: truncated index")
            if sys.byteorder == "little":
                arrays[name] = chunk.cast(spec["type"])  # a view into the mapped file: no copy
            else:
                arrays[name] = array.array(spec["type"], chunk.tobytes())
                arrays[name].byteswap()
        index = cls(
            paper_ids=header["papers"]["ids"],
            titles=header["papers"]["titles"],
            folded_titles=header["papers"]["folded_titles"],
            concept_ids=header["concepts"]["ids"],
            concept_labels=header["concepts"]["labels"],
            concept_types=header["concepts"]["types"],
            scoring=header["scoring"],
            **arrays,
        )
        return index, header.get("graph")

    # -- ranking ---------------------------------------------------------------------------

    def rank(self, paper: int, *, top: int = 10, types: Iterable[str] | None = None) -> list[RelatedPaper]:
        """The `top` papers sharing most weighted concepts with paper number `paper`.

        `types` restricts which shared concepts count (e.g. {"METHOD", "TASK"}).
        """
        allowed = None if types is None else set(types)
        start, end = self.paper_ptr[paper], self.paper_ptr[paper + 1]
        if start == end or top < 1:
            return []
        total = len(self.paper_ids)
        scoring, types_of = self.scoring, self.concept_types
        dots: dict[int, float] = {}  # candidate -> dot product with the query vector
        query_terms: dict[int, tuple[float, int, float]] = {}  # concept -> (query weight, code, idf)
        for concept, code in zip(self.paper_concepts[start:end], self.paper_codes[start:end]):
            if allowed is not None and types_of[concept] not in allowed:
                continue
            c_start, c_end = self.concept_ptr[concept], self.concept_ptr[concept + 1]
            idf = _idf(total, c_end - c_start)
            query_weight = _term(code, idf, scoring)
            query_terms[concept] = (query_weight, code, idf)
            products: dict[int, float] = {}  # candidate's posting code -> weight product (few codes)
            get = dots.get
            # The hot loop (a common concept has thousands of papers): keep it minimal.
            for candidate, candidate_code in zip(self.concept_papers[c_start:c_end], self.concept_codes[c_start:c_end]):
                product = products.get(candidate_code)
                if product is None:
                    product = products[candidate_code] = query_weight * _term(candidate_code, idf, scoring)
                dots[candidate] = get(candidate, 0.0) + product
        dots.pop(paper, None)
        ids = self.paper_ids
        scores = [(-dot, ids[candidate], candidate) for candidate, dot in dots.items()]
        best = heapq.nsmallest(top, scores)  # score descending, then paper id: deterministic
        return [RelatedPaper(ids[n], self.titles[n], -negative, self._reasons(n, query_terms)) for negative, _, n in best]

    def _reasons(self, candidate: int, query_terms: dict[int, tuple[float, int, float]]) -> tuple[Reason, ...]:
        reasons = []
        for i in range(self.paper_ptr[candidate], self.paper_ptr[candidate + 1]):
            concept = self.paper_concepts[i]
            term = query_terms.get(concept)
            if term is None:
                continue
            query_weight, query_code, idf = term
            code = self.paper_codes[i]
            contribution = query_weight * _term(code, idf, self.scoring)  # its share of the score
            reasons.append(
                Reason(
                    concept=self.concept_ids[concept],
                    label=self.concept_labels[concept],
                    type=self.concept_types[concept],
                    contribution=contribution,
                    query_role=_role(query_code),
                    candidate_role=_role(code),
                )
            )
        reasons.sort(key=lambda reason: (-reason.contribution, reason.concept))
        return tuple(reasons)


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


def related(graph: nx.DiGraph, paper: str, *, top: int = 10, types: Iterable[str] | None = None) -> list[RelatedPaper]:
    """Papers related to `paper` (an id, a title or a title fragment) in a loaded graph.

    >>> g = kg.load("out")
    >>> [(r.id, round(r.score, 3)) for r in kg.related(g, "HippoRAG", top=3)]
    """
    index = index_of(graph)
    return index.rank(lookup_of(index).find(paper), top=top, types=parse_types(types) or None)


def find_related(
    directory: str | os.PathLike[str], paper: str, *, top: int = 10, types: Iterable[str] | None = None
) -> RelatedResult:
    """`kg related`: use ``DIR/related.idx`` when it matches ``DIR/graph.json``, else the graph."""
    index, source = open_index(directory)
    number = lookup_of(index).find(paper)
    results = index.rank(number, top=top, types=parse_types(types) or None)
    return RelatedResult(index.paper_ids[number], index.titles[number], tuple(results), source)


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


def _csr(rows: list[list[tuple[int, int]]]) -> tuple[array.array, array.array, array.array]:
    ptr, items, codes = array.array("q", [0]), array.array("i"), array.array("i")
    for row in rows:
        for item, code in sorted(row):
            items.append(item)
            codes.append(code)
        ptr.append(len(items))
    return ptr, items, codes
