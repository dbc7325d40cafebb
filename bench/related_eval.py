"""Quality of `kg related` side by side with TF-IDF, BM25 and MiniLM embeddings alone.

Query papers are sampled (seeded) from the papers of the graph that have at least one
relevant candidate; every method ranks the same candidates (every other paper of the graph)
for the same queries. Two notions of relevance, neither ever an input to any ranking:

* ``--relevance keywords``: the candidate shares a normalised author keyword with the query
  (in the 30k benchmark graph: IJCAI, ICLR, CoRL, COLM and WWW records carry keywords);
* ``--relevance authors``: the candidate shares an author with the query (a different notion,
  kept for checking that what was tuned on keywords holds elsewhere).

The eligible queries are split in two halves by a seeded shuffle: ``--split tune`` samples
from the first (use it with ``--variants`` to choose parameters), ``--split report`` (the
default) from the second, so reported figures come from queries the choice never saw.

Prints, in one run, nDCG@10 and MAP@10 with 95% bootstrap intervals of kg's default (concepts
+ words + embeddings), kg without the embed extra (concepts + words), concepts only, kg's
words alone, kg without each of concepts and words, and the baselines; then paired
differences of the three kg rankings against each baseline. ``--variants`` adds concept-score
variants and fusion weights (for the tune half). Other candidate signals (graph walks,
soft concepts, feedback): ``bench/related_signals.py``.

    .venv/bin/python -P bench/related_eval.py --graph /work/bench-data/graph-30k --queries 1000

Baselines: TF-IDF cosine over title + abstract (scikit-learn); Okapi BM25 (rank-bm25's idf and
parameters, scored with a sparse matrix product and checked against `BM25Okapi.get_scores`
in the same run); MiniLM: the cosine of the embeddings `kg build --embed` stored
(all-MiniLM-L6-v2 over title + abstract), the embedding signal kg fuses, alone.
"""

from __future__ import annotations

import argparse
import math
import random
import re
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence

import numpy as np

import kg
from kg.related_work import embed
from kg.related_work.index import SCORING, RelatedIndex
from kg.related_work.rank import rank

TOP = 10
BOOTSTRAP = 2000


def normalise_keyword(keyword: str) -> str:
    """Lowercase, hyphens/underscores as spaces, whitespace collapsed, simple plural removed per word."""
    words = re.sub(r"[-_/]+", " ", keyword.casefold()).split()
    return " ".join(_singular(word) for word in words)


def normalise_author(name: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", name.casefold()).split())


def _singular(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def metrics(ranked: Sequence[int], relevant: set[int]) -> tuple[float, float]:
    """nDCG@10 and AP@10 of one ranking (binary relevance)."""
    ideal = min(len(relevant), TOP)
    dcg = sum(1.0 / math.log2(rank + 2) for rank, doc in enumerate(ranked[:TOP]) if doc in relevant)
    idcg = sum(1.0 / math.log2(rank + 2) for rank in range(ideal))
    hits, precision_sum = 0, 0.0
    for rank_, doc in enumerate(ranked[:TOP]):
        if doc in relevant:
            hits += 1
            precision_sum += hits / (rank_ + 1)
    return dcg / idcg, precision_sum / ideal


def top_from_scores(scores: np.ndarray, query: int, ids: Sequence[str]) -> list[int]:
    """The 10 best candidates, score descending then paper id (the order kg uses); zero scores dropped."""
    scores = np.array(scores, dtype=np.float64)
    scores[query] = -np.inf
    tenth = -np.partition(-scores, TOP - 1)[TOP - 1]
    head = [int(i) for i in np.flatnonzero(scores >= tenth) if scores[i] > 0]
    head.sort(key=lambda i: (-scores[i], ids[i]))
    return head[:TOP]


def interval(values: np.ndarray, seed: int = 0) -> tuple[float, float]:
    """95% bootstrap interval of the mean."""
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), size=(BOOTSTRAP, len(values)))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def versus(per_query: dict[str, np.ndarray], name: str, baseline: str) -> str:
    """Mean paired nDCG@10 difference from the baseline, with a 95% bootstrap interval."""
    diff = per_query[name][:, 0] - per_query[baseline][:, 0]
    low, high = interval(diff)
    ratio = per_query[name][:, 0].mean() / (per_query[baseline][:, 0].mean() or 1.0)
    return f"{diff.mean():+.4f} [{low:+.4f}, {high:+.4f}]  ({ratio:.2f} ×)"


def tokenize(text: str, stop: frozenset[str]) -> list[str]:
    return [token for token in re.findall(r"(?u)\b\w\w+\b", text.lower()) if token not in stop]


# Concept-score variants for --variants (each changes one parameter of kg.related_work.index.SCORING; ranked by concepts alone).
VARIANTS: dict[str, dict[str, float]] = {
    "old formula (log tf, no broader, no norm)": {"k": 0.0, "broader": 0.0, "b": 0.0},
    "  tf 1 + ln m": {"k": 0.0},
    "  k 0.6": {"k": 0.6},
    "  k 2.0": {"k": 2.0},
    "  no broader": {"broader": 0.0},
    "  broader 0.25": {"broader": 0.25},
    "  broader 0.75": {"broader": 0.75},
    "  b 0": {"b": 0.0},
    "  b 0.25": {"b": 0.25},
    "  b 0.75": {"b": 0.75},
    "  b 1": {"b": 1.0},
    "  idf^1.5": {"idf_power": 1.5},
    "  idf^2": {"idf_power": 2.0},
    "  roles equal": {"proposed": 1.0},
}
# Fusion weights for --variants (concepts, lexical, embedding; kg rescales them to sum to 1).
FUSION_WEIGHTS = [
    {"concepts": c, "lexical": w, "embedding": e}
    for c, w, e in ((0.03, 0.45, 0.52), (0, 0.45, 0.55), (0.06, 0.45, 0.49), (0.03, 0.35, 0.62), (0.03, 0.55, 0.42), (0.1, 0.4, 0.5), (0.2, 0.8, 0), (0.05, 0.95, 0), (0.1, 0.9, 0))
]
KG_DEFAULT = "kg default (concepts + words + embedding)"
KG_NO_EXTRA = "kg without the embed extra (concepts + words)"
KG_CONCEPTS = "kg concepts only"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--graph", default="/work/bench-data/graph-30k")
    parser.add_argument("--queries", type=int, default=1000, help="query papers sampled (seeded) from the chosen half of the eligible ones")
    parser.add_argument("--relevance", choices=("keywords", "authors"), default="keywords")
    parser.add_argument("--split", choices=("tune", "report"), default="report")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--check-bm25", type=int, default=20, help="queries on which BM25 is checked against rank_bm25")
    parser.add_argument("--variants", action="store_true", help="also score variants of kg's parameters")
    parser.add_argument(
        "--vectors", action="append", default=[], metavar="NAME=FILE.npy",
        help="also score other embeddings of the graph's papers (rows in sorted-id order, as bench/embed_backends.py writes them): "
        "adds 'kg + NAME' and 'NAME alone'",
    )
    args = parser.parse_args(argv)

    started = time.perf_counter()
    graph = kg.load(args.graph)
    index = RelatedIndex.from_graph(graph)
    ids = index.paper_ids
    nodes = {data["id"]: data for _, data in graph.nodes(data=True) if data.get("kind") == "paper"}
    texts = [f"{nodes[pid].get('title') or ''}. {nodes[pid].get('abstract') or ''}" for pid in ids]
    if args.relevance == "keywords":
        labels = [{normalise_keyword(k) for k in nodes[pid].get("keywords") or [] if normalise_keyword(k)} for pid in ids]
    else:
        labels = [{normalise_author(a) for a in nodes[pid].get("authors") or [] if normalise_author(a)} for pid in ids]
    venues = [(nodes[pid].get("venue") or "?").split()[0] for pid in ids]
    vectors = embed.load(args.graph, ids)
    print(f"graph {args.graph}: {len(ids):,} papers, {len(index.concept_ids):,} concepts, "
          f"{len(index.concept_papers.items):,} paper–concept postings (broader included); embeddings: "
          f"{'yes' if vectors is not None else 'none (build with --embed)'}; loaded in {time.perf_counter() - started:.1f} s")

    by_label: dict[str, set[int]] = defaultdict(set)
    for number, words in enumerate(labels):
        for word in words:
            by_label[word].add(number)
    relevant: dict[int, set[int]] = {}
    for number, words in enumerate(labels):
        found = set().union(*(by_label[w] for w in words)) - {number} if words else set()
        if found:
            relevant[number] = found
    eligible = sorted(relevant)
    if not eligible:
        raise SystemExit(f"{args.graph}: no paper shares {args.relevance} with another paper: nothing to evaluate")
    random.Random(args.seed).shuffle(eligible)
    half = eligible[: len(eligible) // 2] if args.split == "tune" else eligible[len(eligible) // 2 :]
    queries = sorted(random.Random(args.seed + 1).sample(half, min(args.queries, len(half))))
    per_venue: dict[str, int] = defaultdict(int)
    for q in queries:
        per_venue[venues[q]] += 1
    mean_relevant = sum(len(relevant[q]) for q in queries) / len(queries)
    print(f"relevance: shared {args.relevance}; queries: {len(queries):,} from the {args.split} half of {len(eligible):,} eligible papers "
          f"({', '.join(f'{v} {n}' for v, n in sorted(per_venue.items()))}); mean relevant candidates per query {mean_relevant:,.1f} of {len(ids) - 1:,}")
    print(f"kg scoring: {SCORING}")

    rankers: dict[str, Callable[[int], list[int]]] = {}
    number_of = {pid: n for n, pid in enumerate(ids)}

    def kg_ranker(ix: RelatedIndex, with_vectors: bool, signals: tuple[str, ...] | None = None, m: np.ndarray | None = None) -> Callable[[int], list[int]]:
        v = (vectors if m is None else m) if with_vectors else None
        return lambda q: [number_of[r.id] for r in rank(ix, q, top=TOP, embeddings=v, signals=signals)]

    if vectors is not None:
        rankers[KG_DEFAULT] = kg_ranker(index, True)
    rankers[KG_NO_EXTRA] = kg_ranker(index, False)
    rankers[KG_CONCEPTS] = kg_ranker(index, False, ("concepts",))
    rankers["kg words alone (its BM25)"] = kg_ranker(index, False, ("lexical",))
    if vectors is not None:
        rankers["kg without concepts (words + embedding)"] = kg_ranker(index, True, ("lexical", "embedding"))
        rankers["kg without words (concepts + embedding)"] = kg_ranker(index, True, ("concepts", "embedding"))
    others = {name: other_vectors(file, len(ids)) for name, _, file in (item.partition("=") for item in args.vectors)}
    for name, other in others.items():
        rankers[f"kg + {name}"] = kg_ranker(index, True, None, other)
    if args.variants:
        for name, change in VARIANTS.items():
            rankers[name] = kg_ranker(RelatedIndex.from_graph(graph, scoring=change), False, ("concepts",))
        for weights in FUSION_WEIGHTS:
            if vectors is None and weights["embedding"]:
                continue
            label = "  fusion " + ", ".join(f"{k} {v:g}" for k, v in weights.items())
            rankers[label] = kg_ranker(RelatedIndex.from_graph(graph, scoring=weights), True)
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, TfidfVectorizer

    tfidf = TfidfVectorizer(stop_words="english", sublinear_tf=True).fit_transform(texts)
    rankers["TF-IDF cosine"] = lambda q: top_from_scores((tfidf @ tfidf[q].T).toarray().ravel(), q, ids)
    bm25_matrix, bm25_check = bm25(texts, frozenset(ENGLISH_STOP_WORDS))
    tokens = [tokenize(text, frozenset(ENGLISH_STOP_WORDS)) for text in texts]
    vocabulary = bm25_check["vocabulary"]

    def bm25_scores(q: int) -> np.ndarray:
        counts = np.zeros(len(vocabulary))
        for token in tokens[q]:
            counts[vocabulary[token]] += 1
        return bm25_matrix @ counts

    rankers["BM25"] = lambda q: top_from_scores(bm25_scores(q), q, ids)
    if vectors is not None:
        matrix = np.asarray(vectors)
        rankers["MiniLM alone"] = lambda q: top_from_scores(matrix @ matrix[q] + 2.0, q, ids)  # +2: every cosine ranks
    for name, other in others.items():  # not `matrix`: the MiniLM ranker above reads that name when it runs
        rankers[f"{name} alone"] = (lambda m: lambda q: top_from_scores(m @ m[q] + 2.0, q, ids))(other)
    model = bm25_check["model"]
    worst = max(float(np.max(np.abs(bm25_scores(q) - model.get_scores(tokens[q])))) for q in queries[: args.check_bm25])
    print(f"BM25 check: sparse scores equal rank_bm25.BM25Okapi.get_scores on {min(args.check_bm25, len(queries))} queries (max |diff| {worst:.1e})")
    if worst > 1e-6:
        raise SystemExit("BM25 scores differ from rank_bm25")

    per_query: dict[str, np.ndarray] = {}
    seconds: dict[str, float] = {}
    for name, ranker in rankers.items():
        tick = time.perf_counter()
        per_query[name] = np.array([metrics(ranker(q), relevant[q]) for q in queries])
        seconds[name] = (time.perf_counter() - tick) / len(queries)
    print(f"\n{'method':<46} {'nDCG@10':>8} {'[95% CI]':>17} {'MAP@10':>8} {'s/query':>8}   nDCG@10 − TF-IDF [95% CI]")
    for name in rankers:
        ndcg, ap = per_query[name].mean(axis=0)
        low, high = interval(per_query[name][:, 0])
        against = "" if name == "TF-IDF cosine" else versus(per_query, name, "TF-IDF cosine")
        print(f"{name:<46} {ndcg:>8.4f} [{low:.4f}, {high:.4f}] {ap:>8.4f} {seconds[name]:>8.4f}   {against}")
    for kg_name in (KG_DEFAULT, KG_NO_EXTRA, KG_CONCEPTS):
        if kg_name not in per_query:
            continue
        print(f"\n{kg_name} against each baseline (nDCG@10 difference [95% CI], ratio):")
        for baseline in ("TF-IDF cosine", "BM25", "MiniLM alone"):
            if baseline in per_query:
                print(f"  vs {baseline:<16} {versus(per_query, kg_name, baseline)}")
    if KG_DEFAULT in per_query:
        for name in others:
            print(f"  kg + {name} vs kg default: {versus(per_query, f'kg + {name}', KG_DEFAULT)}")
            print(f"  {name} alone vs MiniLM alone: {versus(per_query, f'{name} alone', 'MiniLM alone')}")
    groups = sorted({venues[q] for q in queries})
    print(f"\nnDCG@10 by venue of the query paper ({', '.join(f'{v} n={per_venue[v]}' for v in groups)}):")
    for name in (KG_DEFAULT, KG_NO_EXTRA, KG_CONCEPTS, "TF-IDF cosine", "BM25", "MiniLM alone"):
        if name in per_query:
            cells = [f"{v} {per_query[name][[venues[q] == v for q in queries], 0].mean():.4f}" for v in groups]
            print(f"  {name:<46} " + "  ".join(cells))
    return 0


def other_vectors(file: str, papers: int) -> np.ndarray:
    """Vectors from --vectors: one finite unit row per paper of the graph, or SystemExit saying why not."""
    matrix = np.load(file, allow_pickle=False).astype(np.float32)
    if matrix.shape[0] != papers or not embed.unit_rows(matrix):
        raise SystemExit(f"{file}: {matrix.shape} is not {papers} unit vectors, one per paper of the graph")
    return matrix


def bm25(texts: Sequence[str], stop: frozenset[str]):
    """Okapi BM25 as a (papers × terms) sparse matrix with rank_bm25's idf, k1 and b."""
    from rank_bm25 import BM25Okapi
    from scipy.sparse import csr_matrix

    tokens = [tokenize(text, stop) for text in texts]
    model = BM25Okapi(tokens)
    vocabulary = {term: i for i, term in enumerate(sorted(model.idf))}
    rows, cols, values = [], [], []
    for doc, (freqs, length) in enumerate(zip(model.doc_freqs, model.doc_len, strict=True)):
        norm = model.k1 * (1 - model.b + model.b * length / model.avgdl)
        for term, tf in freqs.items():
            rows.append(doc)
            cols.append(vocabulary[term])
            values.append(model.idf[term] * tf * (model.k1 + 1) / (tf + norm))
    matrix = csr_matrix((values, (rows, cols)), shape=(len(texts), len(vocabulary)))
    return matrix, {"model": model, "vocabulary": vocabulary}


if __name__ == "__main__":
    sys.exit(main())
