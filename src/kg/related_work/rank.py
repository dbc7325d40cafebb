"""Related work: rank papers by what they share with a query paper (or a text), with reasons.

Three signals, each scaled to one scale and fused with the weights of `SCORING`:

* **concepts** (`kg.related_work.index`): shared concepts weighted by role, saturating mentions,
  rarity and length, shared broader concepts at a lower weight; divided by the best
  candidate's, so 1 for the best;
* **lexical** (`kg.related_work.lexical`): BM25 over the words and word pairs of title and
  abstract, stored in the index, so it needs no model; divided by the best candidate's;
* **embedding** (`kg.related_work.embed`): the cosine of the two papers' sentence embeddings,
  when the build stored them (`kg build --embed`).

    score = w_c · concepts / best concepts + w_l · lexical / best lexical + w_e · cosine

with the weights of the signals present, summing to 1 (without embeddings the other two keep
their ratio). ``bench/related_eval.py`` chose them on the tune half of its queries and prints
every signal alone and every fusion. Ties are broken by paper id.

Each result explains itself: the shared concepts (specific ones first: a generic concept such
as "neural network" is never the first reason), and the shared words and phrases that carried
the lexical score. Paper author keywords are deliberately *not* used: they are the relevance
judgments of ``bench/related_eval.py``.
"""

from __future__ import annotations

import os
import warnings
import weakref
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from kg.errors import EmbeddingsUnused, GraphNotFound
from kg.generations import GraphFolder, resolve
from kg.graph import GRAPH_FILE, graph_stamp  # kg.graph imports networkx only to make graphs
from kg.model import ENTITY_TYPES, parse_types
from kg.related_work import explain
from kg.related_work.index import INDEX_FILE, SCORING, RelatedIndex, is_broader, role_of
from kg.related_work.lexical import SIGNATURE as LEXICAL_RULES
from kg.related_work.lookup import PaperLookup

if TYPE_CHECKING:
    import networkx as nx
    import numpy as np
    import numpy.typing as npt

# Sentence embeddings (`kg.related_work.embed`): one unit vector a row, rows in the index's paper order.
PaperVectors: TypeAlias = "npt.NDArray[np.float32]"

EMBED_META_FILE = "embeddings.json"  # kg.related_work.embed.EMBED_META_FILE, named here so numpy loads only when needed
SIGNALS = ("concepts", "lexical", "embedding")
PHRASES = 4  # shared words shown per result

__all__ = ["INDEX_FILE", "SCORING", "SIGNALS", "NearConcept", "Query", "Reason", "RelatedIndex", "RelatedPaper", "RelatedResult", "find_related", "related"]


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
    generic: bool = False  # too common or vague to explain much (`kg.related_work.explain.is_generic_concept`): listed last


@dataclass(frozen=True, slots=True)
class NearConcept:
    """A concept of the query and a different one of the related paper whose labels share a
    telling word: shown as "≈" reasons (`kg.related_work.explain.near_concepts`)."""

    query_concept: str
    query_label: str
    concept: str
    label: str
    word: str


@dataclass(frozen=True, slots=True)
class RelatedPaper:
    id: str
    title: str
    score: float  # what the ranking sorts by: the fused score
    reasons: tuple[Reason, ...]  # shared concepts, specific ones first
    concepts: float = 0.0  # the concept score (the sum of the reasons' contributions)
    similarity: float | None = None  # cosine of the embeddings, when used
    lexical: float = 0.0  # the lexical (BM25) score
    words: tuple[str, ...] = ()  # shared words and phrases that carried the lexical score, strongest first
    lead: str = "concepts"  # the signal that added most to the score (of SIGNALS)
    near: tuple[NearConcept, ...] = ()  # near, not shared, concepts

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["signals"] = {"concepts": self.concepts, "lexical": self.lexical, "embedding": self.similarity}
        del data["concepts"], data["similarity"], data["lexical"]
        return data

    @property
    def specific_reasons(self) -> tuple[Reason, ...]:
        return tuple(reason for reason in self.reasons if not reason.generic)

    @property
    def by_similarity(self) -> bool:
        """Whether the abstracts' similarity explains this result: the embedding led its score,
        or it shares no specific concept (`kg related` and the page then say "similar abstract")."""
        return self.similarity is not None and (self.lead == "embedding" or not self.specific_reasons)


@dataclass(frozen=True, slots=True)
class RelatedResult:
    """What `kg related` shows: the resolved query (a paper, or a text) and its ranked related papers."""

    query_id: str  # "" for a text
    query_title: str
    results: tuple[RelatedPaper, ...]
    source: str  # "index" (related.idx) or "graph" (graph.json, the fallback)
    signals: tuple[str, ...] = ("concepts", "lexical")  # the signals fused, of SIGNALS
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": {"id": self.query_id or None, "title": self.query_title},
            "signals": list(self.signals),
            "warnings": list(self.warnings),
            "results": [result.to_dict() for result in self.results],
        }


@dataclass(frozen=True, slots=True)
class ConceptScores:
    """The candidates sharing a concept with the query and their concept scores, as two arrays
    (`RelatedIndex.concept_scores` gives a dict, `kg.related_work.batch.Ranker` the arrays)."""

    candidates: npt.NDArray[np.intp]  # paper numbers
    scores: npt.NDArray[np.float64]

    @classmethod
    def of(cls, scores: dict[int, float]) -> ConceptScores:
        import numpy as np

        count = len(scores)
        return cls(np.fromiter(scores.keys(), dtype=np.intp, count=count), np.fromiter(scores.values(), dtype=np.float64, count=count))


@dataclass(frozen=True, slots=True)
class Query:
    """What is ranked against: a paper of the index (`paper`), or a text's concepts and words."""

    concepts: dict[int, tuple[float, int, float]]  # `RelatedIndex.query_terms`
    words: list[int]  # lexical terms
    paper: int | None = None  # the query paper, never a result
    vector: npt.NDArray[np.float32] | None = None  # the text's embedding (a paper's is its row of the embeddings)
    typed: bool = False  # concepts restricted to some types: only papers sharing one of them are results

    @classmethod
    def of_paper(cls, index: RelatedIndex, paper: int, types: Iterable[str] | None = None) -> Query:
        chosen = parse_types(types) or None
        return cls(index.query_terms(paper, chosen), index.paper_words(paper), paper, typed=restricts(chosen))

    @classmethod
    def of_text(cls, index: RelatedIndex, text: str, types: Iterable[str] | None = None, vector: npt.NDArray[np.float32] | None = None) -> Query:
        from kg.related_work import text_query

        found = text_query.text_concepts(index, text)
        chosen = parse_types(types) or None
        return cls(text_query.text_terms(index, found, chosen), text_query.text_words(index, text), None, vector, typed=restricts(chosen))


def restricts(types: tuple[str, ...] | None) -> bool:
    """Whether concept types leave some out (every type named is no restriction)."""
    return types is not None and set(types) != set(ENTITY_TYPES)


def checked_signals(signals: Iterable[str] | None) -> tuple[str, ...]:
    """`signals` as a tuple of SIGNALS (all for None); ValueError names an unknown one."""
    if signals is None:
        return SIGNALS
    if isinstance(signals, str):
        raise ValueError(f"signals is a collection of names, not one string: ({signals!r},)")
    chosen = tuple(signals)
    unknown = [name for name in chosen if name not in SIGNALS]
    if unknown or not chosen:
        raise ValueError(f"unknown signal {unknown[0]!r}: choose from {', '.join(SIGNALS)}" if unknown else "no signal chosen")
    return chosen


def weights_of(scoring: dict[str, float], signals: Iterable[str]) -> dict[str, float]:
    """The fusion weights of the signals used, rescaled to sum to 1."""
    chosen = {name: scoring[name] for name in signals if scoring.get(name)}
    total = sum(chosen.values())
    if not total:  # a signal asked for alone whose weight is 0
        chosen = {name: 1.0 for name in signals}
        total = float(len(chosen))
    return {name: value / total for name, value in chosen.items()}


def rank(
    index: RelatedIndex,
    paper: int,
    *,
    top: int = 10,
    types: Iterable[str] | None = None,
    embeddings: PaperVectors | None = None,
    signals: Iterable[str] | None = None,
) -> list[RelatedPaper]:
    """The `top` papers most related to paper number `paper`; `types` restricts which shared
    concepts count; `embeddings` (rows in the index's paper order) adds semantic similarity;
    `signals` (of SIGNALS; default all available) chooses what is fused."""
    if top < 1:
        return []
    query = Query.of_paper(index, paper, types)
    concept_scores = ConceptScores.of(index.concept_scores(paper, query.concepts))
    return fused(index, query, concept_scores, embeddings, top, signals)


def rank_text(
    index: RelatedIndex,
    text: str,
    *,
    top: int = 10,
    types: Iterable[str] | None = None,
    embeddings: PaperVectors | None = None,
    vector: npt.NDArray[np.float32] | None = None,
    signals: Iterable[str] | None = None,
) -> list[RelatedPaper]:
    """The `top` papers most related to a text that is not in the corpus (a draft, a review)."""
    if top < 1:
        return []
    query = Query.of_text(index, text, types, vector)
    concept_scores = ConceptScores.of(index.concept_scores(-1, query.concepts))
    return fused(index, query, concept_scores, embeddings if vector is not None else None, top, signals)


def fused(
    index: RelatedIndex,
    query: Query,
    concept_scores: ConceptScores,
    embeddings: PaperVectors | None,
    top: int,
    signals: Iterable[str] | None = None,
) -> list[RelatedPaper]:
    """The top papers by the fused score of the candidates' `concept_scores`, their words and
    their `embeddings` (when given): `rank`, `rank_text` and the page's `kg.related_work.batch.Ranker`
    all end here, so they give the same list."""
    import numpy as np

    ids = index.paper_ids
    wanted = checked_signals(signals)
    vector = None if embeddings is None else query_vector(query, embeddings)
    if vector is None:
        wanted = tuple(name for name in wanted if name != "embedding")
    weights = weights_of(index.scoring, wanted)
    concepts = np.zeros(len(ids))
    concepts[concept_scores.candidates] = concept_scores.scores
    lexical = index.lexical_scores(query.words)
    if query.paper is not None:
        lexical[query.paper] = 0.0
    parts: dict[str, npt.NDArray[np.float64]] = {}  # each signal's weighted, scaled score; a signal alone is its own score, unscaled
    for name, values in (("concepts", concepts), ("lexical", lexical)):
        best = values.max() if len(values) else 0.0
        if name in weights and best > 0:
            parts[name] = values if len(weights) == 1 else weights[name] * values / best
    cosines = None
    if "embedding" in weights and embeddings is not None and vector is not None:
        cosines = np.asarray(embeddings @ np.asarray(vector, dtype=np.float32), dtype=np.float64)
        parts["embedding"] = weights["embedding"] * cosines
    scores = np.zeros(len(ids))
    for part in parts.values():  # in this order, as the ranking was measured
        scores = scores + part
    if "embedding" not in parts:
        scores[scores == 0.0] = -np.inf  # nothing shared: never a result
    if query.typed:
        scores[concepts == 0.0] = -np.inf  # `--types`: a result shares a concept of those types
    if query.paper is not None:
        scores[query.paper] = -np.inf
    head = min(top, len(ids))
    if head < 1:
        return []
    # Everything scoring at least the top-th best, then an exact sort with the id tie-break.
    cut = -np.partition(-scores, head - 1)[head - 1]
    chosen = sorted((-float(scores[c]), ids[c], int(c)) for c in np.flatnonzero((scores >= cut) & np.isfinite(scores)))[:head]
    return [
        related_paper(
            index, n, -negative, query, float(concepts[n]), None if cosines is None else float(cosines[n]), float(lexical[n]),
            max(parts, key=lambda name: parts[name][n]) if parts else "concepts",
        )
        for negative, _, n in chosen
    ]  # fmt: skip


def query_vector(query: Query, embeddings: PaperVectors) -> npt.NDArray[np.float32] | None:
    """The query's embedding: the text's, or the query paper's row; None for a text without one."""
    if query.vector is not None:
        return query.vector
    return None if query.paper is None else embeddings[query.paper]


def related_paper(
    index: RelatedIndex, candidate: int, score: float, query: Query, concepts: float, similarity: float | None, lexical: float = 0.0, lead: str = "concepts"
) -> RelatedPaper:
    reasons = sorted(
        (
            Reason(
                concept=index.concept_ids[shared.concept],
                label=index.concept_labels[shared.concept],
                type=index.concept_types[shared.concept],
                contribution=shared.contribution,
                query_role=role_of(shared.query_code),
                candidate_role=role_of(shared.candidate_code),
                broader=is_broader(shared.query_code) or is_broader(shared.candidate_code),
                generic=explain.is_generic_concept(index, shared.concept),
            )
            for shared in index.shared(candidate, query.concepts)
        ),
        key=lambda reason: reason.generic,  # stable: by contribution within each group
    )
    words = tuple(explain.shared_words(index, candidate, query.words, limit=PHRASES))
    own = [c for c, (_, code, _) in query.concepts.items() if not is_broader(code)]
    labels, ids = index.concept_labels, index.concept_ids
    near = tuple(NearConcept(ids[q], labels[q], ids[c], labels[c], word) for q, c, word in explain.near_concepts(index, own, candidate))
    return RelatedPaper(index.paper_ids[candidate], index.titles[candidate], score, tuple(reasons), concepts, similarity, lexical, words, lead, near)


# -- public functions ----------------------------------------------------------------------

_GRAPH_INDEXES: weakref.WeakKeyDictionary[Any, tuple[tuple[int, int], RelatedIndex]] = weakref.WeakKeyDictionary()


def index_of(graph: nx.DiGraph[str]) -> RelatedIndex:
    """The index of an in-memory graph, cached while the graph's size is unchanged."""
    fingerprint = (graph.number_of_nodes(), graph.number_of_edges())
    cached = _GRAPH_INDEXES.get(graph)
    if cached is not None and cached[0] == fingerprint:
        return cached[1]
    index = RelatedIndex.from_graph(graph)
    _GRAPH_INDEXES[graph] = (fingerprint, index)
    return index


def related(
    graph: nx.DiGraph[str],
    paper: str,
    *,
    top: int = 10,
    types: Iterable[str] | None = None,
    use_embeddings: bool = True,
    signals: Iterable[str] | None = None,
) -> list[RelatedPaper]:
    """Papers related to `paper` (an id, a title or a title fragment) in a loaded graph, ranked
    as `kg related` ranks them: shared concepts and words, fused with the embeddings the build
    wrote beside the graph `kg.load` read (unless not `use_embeddings`).

    >>> g = kg.load("out")
    >>> [(r.id, round(r.score, 3)) for r in kg.related(g, "HippoRAG", top=3)]
    """
    index = index_of(graph)
    vectors = graph_embeddings(graph, index) if use_embeddings else None
    return rank(index, lookup_of(index).find(paper), top=top, types=types, embeddings=vectors, signals=signals)


def graph_embeddings(graph: nx.DiGraph[str], index: RelatedIndex) -> PaperVectors | None:
    """The vectors stored beside the graph's folder (`kg.graph.loaded_from`) if they belong to
    exactly the index's papers, else None (a graph built in memory has none)."""
    from kg.graph import loaded_from

    folder = loaded_from(graph)
    return None if folder is None else stored_embeddings(folder, index)


def stored_embeddings(folder: Path, index: RelatedIndex) -> PaperVectors | None:
    """The vectors a build stored in `folder` if they belong to exactly the index's papers, else
    None; stored vectors that cannot be used (damaged, non-finite, of other papers) are an
    `EmbeddingsUnused` warning, given once per folder and reason: the ranking changes without them."""
    if not (folder / EMBED_META_FILE).is_file():  # numpy is imported only when there are vectors
        return None
    from kg.related_work import embed

    vectors, problem = embed.check(folder, index.paper_ids)
    if problem is not None and (str(folder), problem) not in _WARNED:
        _WARNED.add((str(folder), problem))
        warnings.warn(f"the embeddings in {folder} cannot be used: {problem}; related papers are ranked without them", EmbeddingsUnused, stacklevel=2)
    return vectors


_WARNED: set[tuple[str, str]] = set()  # (folder, problem) already told: `kg html` ranks twice


def find_related(
    directory: str | os.PathLike[str],
    paper: str,
    *,
    top: int = 10,
    types: Iterable[str] | None = None,
    use_embeddings: bool = True,
    signals: Iterable[str] | None = None,
) -> RelatedResult:
    """`kg related`: ``DIR/related.idx`` when it matches ``DIR/graph.json`` (else the graph),
    with ``DIR/embeddings.npy`` when the build wrote it and `use_embeddings`."""
    view = resolve(directory)  # one generation for the index, the graph and the vectors
    index, source = open_index(view)
    number = lookup_of(index).find(paper)
    vectors = stored_embeddings(view.folder, index) if use_embeddings else None
    results = rank(index, number, top=top, types=types, embeddings=vectors, signals=signals)
    return RelatedResult(index.paper_ids[number], index.titles[number], tuple(results), source, used_signals(signals, vectors is not None))


def find_related_text(
    directory: str | os.PathLike[str],
    text: str,
    *,
    top: int = 10,
    types: Iterable[str] | None = None,
    use_embeddings: bool = True,
    signals: Iterable[str] | None = None,
) -> RelatedResult:
    """`kg related --text`: the corpus ranked against a text that is not in it ("title. abstract"
    of a draft), by the concepts its words name, its words, and its embedding when the build
    stored embeddings and the model that made them is installed (else a warning says so)."""
    text = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")  # undecodable argv bytes: U+FFFD
    view = resolve(directory)
    index, source = open_index(view)
    vectors = stored_embeddings(view.folder, index) if use_embeddings else None
    vector, warnings = None, []
    wanted = signals is None or "embedding" in signals
    if vectors is not None and wanted:  # stored vectors that cannot be used: `stored_embeddings` warned
        from kg.related_work import embed

        vector, problem = embed.encode_like(view.folder, text)
        if problem:
            warnings.append(problem)
    results = rank_text(index, text, top=top, types=types, embeddings=vectors, vector=vector, signals=signals)
    title = " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())  # no control bytes echoed to a terminal
    return RelatedResult("", title[:117] + "…" if len(title) > 120 else title, tuple(results), source, used_signals(signals, vector is not None), tuple(warnings))


def used_signals(signals: Iterable[str] | None, embedded: bool) -> tuple[str, ...]:
    wanted = checked_signals(signals)
    return tuple(name for name in SIGNALS if name in wanted and (embedded or name != "embedding"))


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
            saved: tuple[RelatedIndex, dict[str, Any] | None] | None = RelatedIndex.load(index_path)
        except (ValueError, KeyError, TypeError, OSError, OverflowError, MemoryError):
            saved = None  # unreadable or older format: rebuild from the graph below
        if saved is not None:
            index, stamp = saved
            if index.scoring == SCORING and index.lexical_rules == LEXICAL_RULES and stamp == graph_stamp(view.graph):
                return index, "index"
    from kg.graph import load  # imports networkx: only on this slow path

    return RelatedIndex.from_graph(load(view.graph)), "graph"


def write_index(graph: nx.DiGraph[str], directory: str | os.PathLike[str]) -> Path:
    """Write ``DIR/related.idx`` for the graph just saved as ``DIR/graph.json`` (called by `kg build`)."""
    folder = Path(directory)
    return index_of(graph).save(folder / INDEX_FILE, graph_stamp=graph_stamp(folder / GRAPH_FILE))
