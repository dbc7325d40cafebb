"""Quality of `kg related` against author keywords, side by side with TF-IDF and BM25.

Query papers: papers of the graph that carry author keywords (in the 30k benchmark graph:
IJCAI, ICLR, CoRL, COLM and WWW records — the only ones in those corpus files with
keywords) and have at least one relevant candidate. A candidate (any other paper of the
graph) is relevant when it shares at least one normalised author keyword with the query.
Every method ranks the same candidates for the same queries; keywords are never an input
to any ranking. Prints nDCG@10 and MAP@10 (binary relevance).

    .venv/bin/python -P bench/related_eval.py --graph /work/bench-data/graph-30k --queries 1000

``--compare DIR`` adds kg's ranking on another graph of the same papers to the same run (e.g. the
graph before lexicon propagation: ``bench/propagate.py --out`` writes the one after).

Baselines: TF-IDF cosine over title + abstract (scikit-learn) and Okapi BM25 (rank-bm25's
idf and parameters; scored with a sparse matrix product, checked against
`BM25Okapi.get_scores` on a sample of queries in the same run).
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
from pathlib import Path

import numpy as np

import kg
from kg.related_work import RelatedIndex

TOP = 10


def normalise_keyword(keyword: str) -> str:
    """Lowercase, hyphens/underscores as spaces, whitespace collapsed, simple plural removed per word."""
    words = re.sub(r"[-_/]+", " ", keyword.casefold()).split()
    return " ".join(_singular(word) for word in words)


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
    for rank, doc in enumerate(ranked[:TOP]):
        if doc in relevant:
            hits += 1
            precision_sum += hits / (rank + 1)
    return dcg / idcg, precision_sum / ideal


def top_from_scores(scores: np.ndarray, query: int, ids: Sequence[str]) -> list[int]:
    """The 10 best candidates, score descending then paper id (the order kg uses); zero scores dropped."""
    scores = scores.copy()
    scores[query] = -np.inf
    # Everything scoring at least the 10th best, then an exact sort with the id tie-break.
    tenth = -np.partition(-scores, TOP - 1)[TOP - 1]
    head = [int(i) for i in np.flatnonzero(scores >= tenth) if scores[i] > 0]
    head.sort(key=lambda i: (-scores[i], ids[i]))
    return head[:TOP]


def versus(per_query: dict[str, np.ndarray], name: str, baseline: str) -> str:
    """Mean paired nDCG@10 difference from the baseline, with a 95% bootstrap interval."""
    if baseline not in per_query or name == baseline:
        return ""
    diff = per_query[name][:, 0] - per_query[baseline][:, 0]
    rng = np.random.default_rng(0)
    means = diff[rng.integers(0, len(diff), size=(2000, len(diff)))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return f"{diff.mean():+.4f} [{low:+.4f}, {high:+.4f}]"


def tokenize(text: str, stop: frozenset[str]) -> list[str]:
    return [token for token in re.findall(r"(?u)\b\w\w+\b", text.lower()) if token not in stop]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--graph", default="/work/bench-data/graph-30k")
    parser.add_argument("--queries", type=int, default=1000, help="query papers sampled (seeded) from the eligible ones")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--check-bm25", type=int, default=20, help="queries on which BM25 is checked against rank_bm25")
    parser.add_argument("--variants", action="store_true", help="also score variants of kg's formula and kg + TF-IDF hybrids")
    parser.add_argument("--compare", metavar="DIR", action="append", default=[],
                        help="also rank with kg on another graph of the same papers (e.g. one built without a stage), same queries")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    graph = kg.load(args.graph)
    index = RelatedIndex.from_graph(graph)
    ids = index.paper_ids
    nodes = {data["id"]: data for _, data in graph.nodes(data=True) if data.get("kind") == "paper"}
    texts = [f"{nodes[pid].get('title') or ''}. {nodes[pid].get('abstract') or ''}" for pid in ids]
    keywords = [{normalise_keyword(k) for k in nodes[pid].get("keywords") or [] if normalise_keyword(k)} for pid in ids]
    venues = [(nodes[pid].get("venue") or "?").split()[0] for pid in ids]
    print(f"graph {args.graph}: {len(ids):,} papers, {len(index.concept_ids):,} concepts, "
          f"{len(index.concept_papers):,} paper–concept edges (loaded in {time.perf_counter() - started:.1f} s)")

    by_keyword: dict[str, set[int]] = defaultdict(set)
    for number, words in enumerate(keywords):
        for word in words:
            by_keyword[word].add(number)
    relevant: dict[int, set[int]] = {}
    for number, words in enumerate(keywords):
        found = set().union(*(by_keyword[w] for w in words)) - {number} if words else set()
        if found:
            relevant[number] = found
    eligible = sorted(relevant)
    if not eligible:
        raise SystemExit(f"{args.graph}: no paper has author keywords shared with another paper: nothing to evaluate")
    queries = sorted(random.Random(args.seed).sample(eligible, min(args.queries, len(eligible))))
    per_venue = defaultdict(int)
    for q in queries:
        per_venue[venues[q]] += 1
    mean_relevant = sum(len(relevant[q]) for q in queries) / len(queries)
    print(f"queries: {len(queries):,} of {len(eligible):,} eligible papers with keywords "
          f"({', '.join(f'{v} {n}' for v, n in sorted(per_venue.items()))}); "
          f"mean relevant candidates per query {mean_relevant:,.0f} of {len(ids) - 1:,}")

    rankers: dict[str, Callable[[int], list[int]]] = {}
    index_of_concept = {f"concept:{cid}": n for n, cid in enumerate(index.concept_ids)}
    number_of = {pid: n for n, pid in enumerate(ids)}
    rankers["kg related"] = lambda q: [number_of[r.id] for r in index.rank(q, top=TOP)]
    for other in args.compare:
        other_index = RelatedIndex.from_graph(kg.load(other))
        if other_index.paper_ids != ids:
            raise SystemExit(f"{other}: not the same papers as {args.graph}")
        rankers[f"kg on {Path(other).name}"] = lambda q, o=other_index: [number_of[r.id] for r in o.rank(q, top=TOP)]
    if args.variants:
        broader = [(index_of_concept[u], index_of_concept[v]) for u, v, d in graph.edges(data=True) if d.get("kind") == "broader"]
        for name, options in VARIANTS.items():
            matrix = concept_matrix(index, broader_edges=broader, **options)
            rankers[name] = lambda q, m=matrix: top_from_matrix(m, q)
        rankers.update(structural_variants(concept_matrix(index, broader_edges=[]), ids))
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, TfidfVectorizer

    tfidf = TfidfVectorizer(stop_words="english", sublinear_tf=True).fit_transform(texts)
    rankers["TF-IDF cosine"] = lambda q: top_from_scores((tfidf @ tfidf[q].T).toarray().ravel(), q, ids)
    if args.variants:
        concepts = concept_matrix(index, broader_edges=[])

        def hybrid(q: int, share: float) -> list[int]:
            # Each score scaled by its best candidate, then mixed: share × kg + (1 - share) × TF-IDF.
            kg_scores, text_scores = ((m @ m[q].T).toarray().ravel() for m in (concepts, tfidf))
            kg_scores[q] = text_scores[q] = 0.0
            mixed = share * kg_scores / (kg_scores.max() or 1.0) + (1 - share) * text_scores / (text_scores.max() or 1.0)
            return top_from_scores(mixed, q, ids)

        for share in HYBRID_WEIGHTS:
            rankers[f"hybrid {share:g} kg + TF-IDF"] = lambda q, share=share: hybrid(q, share)

    bm25_matrix, bm25_check = bm25(texts, frozenset(ENGLISH_STOP_WORDS))
    tokens = [tokenize(text, frozenset(ENGLISH_STOP_WORDS)) for text in texts]
    vocabulary = bm25_check["vocabulary"]

    def bm25_scores(q: int) -> np.ndarray:
        counts = np.zeros(len(vocabulary))
        for token in tokens[q]:
            counts[vocabulary[token]] += 1
        return bm25_matrix @ counts

    rankers["BM25"] = lambda q: top_from_scores(bm25_scores(q), q, ids)
    model = bm25_check["model"]
    worst = max(float(np.max(np.abs(bm25_scores(q) - model.get_scores(tokens[q])))) for q in queries[: args.check_bm25])
    print(f"BM25 check: sparse scores equal rank_bm25.BM25Okapi.get_scores on {min(args.check_bm25, len(queries))} queries (max |diff| {worst:.1e})")
    if worst > 1e-6:
        raise SystemExit("BM25 scores differ from rank_bm25")

    print(f"\n{'method':<28} {'nDCG@10':>8} {'MAP@10':>8} {'s/query':>8}   nDCG@10 − TF-IDF [95% CI]")
    per_query: dict[str, np.ndarray] = {}
    seconds: dict[str, float] = {}
    for name, ranker in rankers.items():
        tick = time.perf_counter()
        per_query[name] = np.array([metrics(ranker(q), relevant[q]) for q in queries])
        seconds[name] = (time.perf_counter() - tick) / len(queries)
    for name in rankers:
        ndcg, ap = per_query[name].mean(axis=0)
        print(f"{name:<28} {ndcg:>8.4f} {ap:>8.4f} {seconds[name]:>8.4f}   {versus(per_query, name, 'TF-IDF cosine')}")
    groups = sorted({venues[q] for q in queries})
    print(f"\nnDCG@10 by venue of the query paper ({', '.join(f'{v} n={per_venue[v]}' for v in groups)}):")
    for name in ("kg related", *(f"kg on {Path(other).name}" for other in args.compare), "TF-IDF cosine", "BM25"):
        cells = [f"{v} {per_query[name][[venues[q] == v for q in queries], 0].mean():.4f}" for v in groups]
        print(f"  {name:<26} " + "  ".join(cells))
    return 0


# Variants of kg's scoring, computed here with sparse matrices (an independent implementation:
# "kg formula (matrix)" must score as `kg` does). Keys: role weights; tf ("log": 1 + ln m for
# m mentions, "linear": m, "saturating": 2m/(m+1), "binary"); idf ("ln1p": ln(1 + N/df),
# "ln": ln(N/df), "ln1p^2", "none"); norm ("none": dot product, "cosine"); broader (weight
# given to a concept's broader concepts, added to the paper).
DEFAULTS = {"proposed": 1.5, "used": 1.0, "tf": "log", "idf": "ln1p", "norm": "none", "broader": 0.0}
VARIANTS: dict[str, dict] = {
    "kg formula (matrix)": {},
    "  roles equal": {"proposed": 1.0},
    "  proposed x2": {"proposed": 2.0},
    "  tf linear": {"tf": "linear"},
    "  tf 2m/(m+1)": {"tf": "saturating"},
    "  tf binary": {"tf": "binary"},
    "  idf ln(N/df)": {"idf": "ln"},
    "  idf squared": {"idf": "ln1p^2"},
    "  no idf": {"idf": "none"},
    "  cosine norm": {"norm": "cosine"},
    "  + broader x0.5": {"broader": 0.5},
}
HYBRID_WEIGHTS = (0.1, 0.2, 0.3)  # share of kg's (max-normalised) score in kg + TF-IDF hybrids


def structural_variants(concepts, ids: Sequence[str]) -> dict[str, Callable[[int], list[int]]]:
    """Graph-structure add-ons to kg's score (each max-normalised and added to it):
    a two-hop walk (papers sharing concepts with kg's 50 best papers, weighted by their score)
    and an SVD embedding of the cosine-normalised paper–concept matrix (200 dimensions)."""
    from scipy.sparse.linalg import svds

    unit = concept_matrix_normalised(concepts)
    u, s, _ = svds(unit, k=200, random_state=0)
    embedding = u * s
    embedding /= np.maximum(np.linalg.norm(embedding, axis=1, keepdims=True), 1e-12)

    def scaled(values: np.ndarray, q: int) -> np.ndarray:
        values[q] = 0.0
        return values / (values.max() or 1.0)

    def two_hop(q: int) -> list[int]:
        direct = scaled((concepts @ concepts[q].T).toarray().ravel(), q)
        first = np.argsort(-direct, kind="stable")[:50]
        walk = np.asarray(unit @ (unit[first].T @ direct[first])).ravel()
        return top_from_scores(direct + 0.5 * scaled(walk, q), q, ids)

    def with_svd(q: int) -> list[int]:
        direct = scaled((concepts @ concepts[q].T).toarray().ravel(), q)
        return top_from_scores(direct + 0.5 * scaled(np.maximum(embedding @ embedding[q], 0), q), q, ids)

    return {
        "  + 0.5 two-hop walk": two_hop,
        "  SVD embedding alone": lambda q: top_from_scores(np.maximum(embedding @ embedding[q], 0), q, ids),
        "  + 0.5 SVD embedding": with_svd,
    }


def concept_matrix_normalised(matrix):
    from scipy.sparse import csr_matrix

    lengths = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
    lengths[lengths == 0] = 1.0
    return csr_matrix(matrix.multiply(1.0 / lengths[:, None]))


def concept_matrix(index: RelatedIndex, *, broader_edges: list[tuple[int, int]], **options):
    """Rows: papers' weighted concept vectors, L2-normalised when norm="cosine"."""
    from scipy.sparse import csr_matrix

    o = {**DEFAULTS, **options}
    papers, concepts = len(index.paper_ids), len(index.concept_ids)
    ptr = np.frombuffer(index.paper_ptr, dtype=np.int64) if isinstance(index.paper_ptr, memoryview) else np.array(index.paper_ptr)
    cols = np.array(index.paper_concepts, dtype=np.int64)
    codes = np.array(index.paper_codes, dtype=np.int64)
    rows = np.repeat(np.arange(papers), np.diff(ptr))
    df = np.bincount(cols, minlength=concepts).astype(float)
    role = np.where(codes & 1, o["proposed"], o["used"])
    mentions = (codes >> 1).astype(float)
    tf = {"log": 1.0 + np.log(mentions), "binary": np.ones(len(codes)), "saturating": 2 * mentions / (mentions + 1), "linear": mentions}[o["tf"]]
    ratio = papers / np.maximum(df, 1)
    idf = {"ln1p": np.log1p(ratio), "ln": np.log(ratio), "ln1p^2": np.log1p(ratio) ** 2, "none": np.ones(concepts)}[o["idf"]]
    matrix = csr_matrix((role * tf * idf[cols], (rows, cols)), shape=(papers, concepts))
    if o["broader"] and broader_edges:
        up = csr_matrix((np.ones(len(broader_edges)), ([a for a, _ in broader_edges], [b for _, b in broader_edges])), shape=(concepts, concepts))
        lifted = (matrix @ up) * o["broader"]
        matrix = matrix.maximum(lifted)
    if o["norm"] == "cosine":
        matrix = concept_matrix_normalised(matrix)
    return matrix.tocsr()


def top_from_matrix(matrix, query: int) -> list[int]:
    """Top 10 by dot product with the query row; ties by paper number (= paper id order)."""
    row = (matrix @ matrix[query].T).tocoo()
    scores, docs = row.data, row.row
    keep = (docs != query) & (scores > 0)
    scores, docs = scores[keep], docs[keep]
    order = np.lexsort((docs, -scores))[:TOP]
    return [int(d) for d in docs[order]]


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
