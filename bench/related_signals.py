"""Candidate signals for related work, alone and fused, on the tune halves: what was kept and what dropped.

For the queries of ``bench/related_eval.py`` (same seeds, same halves, both notions of
relevance), each candidate signal is computed as a dense score over all papers, then scored
alone and added to kg's fusion (each signal divided by its best candidate's, the embedding
cosine as it is):

* ``concepts``: kg's concept score (`kg.related_work.index`);
* ``concepts, specific only``: the same with concepts on more than 1, 2 or 5 % of the papers left out;
* ``words``: kg's BM25 over words and word pairs (`kg.related_work.index.lexical_scores`);
* ``embedding``: the cosine of the stored embeddings;
* ``walk, concepts``: a two-step walk, papers → concepts of the 20 best papers by concepts → papers;
* ``walk, similarity links``: the concept score diffused one step over the 10-nearest-neighbour
  graph of the embeddings (symmetrised, cosine-weighted);
* ``soft concepts``: BM25 over the words of the labels of each paper's concepts (concepts whose
  labels share words count as near);
* ``pseudo-relevance feedback``: the query's embedding moved towards the mean of the 3 best
  papers of kg's fusion, then fused again.

    .venv/bin/python -P bench/related_signals.py --graph /work/bench-data/graph-7k
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import kg  # noqa: E402
from kg.related_work import embed, lexical  # noqa: E402
from kg.related_work.index import RelatedIndex  # noqa: E402
from kg.related_work.rank import Query  # noqa: E402
from related_eval import interval, metrics, normalise_author, normalise_keyword  # noqa: E402

FUSION = {"concepts": 0.03, "words": 0.45, "embedding": 0.52}


def relevance(nodes: dict, ids: list[str], kind: str, seed: int, count: int) -> tuple[dict[int, set[int]], list[int]]:
    """The tune-half queries of bench/related_eval.py and their relevant papers."""
    import random
    from collections import defaultdict

    if kind == "keywords":
        labels = [{normalise_keyword(k) for k in nodes[p].get("keywords") or [] if normalise_keyword(k)} for p in ids]
    else:
        labels = [{normalise_author(a) for a in nodes[p].get("authors") or [] if normalise_author(a)} for p in ids]
    by_label: dict[str, set[int]] = defaultdict(set)
    for number, words in enumerate(labels):
        for word in words:
            by_label[word].add(number)
    relevant = {}
    for number, words in enumerate(labels):
        found = set().union(*(by_label[w] for w in words)) - {number} if words else set()
        if found:
            relevant[number] = found
    eligible = sorted(relevant)
    random.Random(seed).shuffle(eligible)
    half = eligible[: len(eligible) // 2]
    return relevant, sorted(random.Random(seed + 1).sample(half, min(count, len(half))))


def scaled(values: np.ndarray) -> np.ndarray:
    best = values.max()
    return values / best if best > 0 else values


def top10(scores: np.ndarray, query: int) -> list[int]:
    scores = scores.astype(np.float64).copy()
    scores[query] = -np.inf
    return [int(i) for i in np.argsort(-scores, kind="stable")[:10]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graph", required=True)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    graph = kg.load(args.graph)
    index = RelatedIndex.from_graph(graph)
    ids = index.paper_ids
    n = len(ids)
    nodes = {d["id"]: d for _, d in graph.nodes(data=True) if d.get("kind") == "paper"}
    vectors = embed.load(args.graph, ids)
    if vectors is None:
        raise SystemExit(f"{args.graph}: no embeddings (build with --embed)")
    vectors = np.asarray(vectors)
    share = np.diff(np.asarray(index.concept_papers.ptr)) / n
    # Soft concepts: each paper's bag of label words, BM25-weighted, as (papers × words) rows.
    label_words = [lexical.words(label) for label in index.concept_labels]
    documents = []
    for p in range(n):
        own = [c for c, code in index.paper_concepts.row(p) if not code & 2]
        documents.append(" ".join(" ".join(label_words[c]) for c in own))
    vocabulary, rows, idfs = lexical.postings(documents)
    soft = np.zeros((n, len(vocabulary)), dtype=np.float32)
    for p, row in enumerate(rows):
        for t, weight in row:
            soft[p, t] = weight * idfs[t]
    # The 10-nearest-neighbour graph of the embeddings, symmetrised.
    knn = np.zeros((n, n), dtype=np.float32)
    for start in range(0, n, 512):
        block = vectors[start : start + 512] @ vectors.T
        for i, row in enumerate(block):
            row[start + i] = -np.inf
            near = np.argpartition(-row, 10)[:10]
            knn[start + i, near] = np.maximum(row[near], 0)
    knn = np.maximum(knn, knn.T)

    def concept_dense(paper: int, drop_over: float | None = None) -> np.ndarray:
        terms = index.query_terms(paper)
        if drop_over is not None:
            terms = {c: t for c, t in terms.items() if share[c] <= drop_over}
        dense = np.zeros(n)
        for c, score in index.concept_scores(paper, terms).items():
            dense[c] = score
        return dense

    def signals(q: int) -> dict[str, np.ndarray]:
        concepts = concept_dense(q)
        words = index.lexical_scores(Query.of_paper(index, q).words)
        words[q] = 0
        cosine = vectors @ vectors[q]
        out = {"concepts": concepts, "words": words, "embedding": cosine}
        for cut in (0.01, 0.02, 0.05):
            out[f"concepts, specific only (≤ {cut:.0%})"] = concept_dense(q, cut)
        best = np.argsort(-concepts)[:20]
        weights = np.zeros(n)
        weights[best] = scaled(concepts)[best]
        paper_concepts = np.zeros((len(index.concept_ids),))
        for p in best:
            for c, _ in index.paper_concepts.row(p):
                paper_concepts[c] += weights[p]
        walk = np.zeros(n)
        for c in np.flatnonzero(paper_concepts):
            start, end = index.concept_papers.bounds(c)
            walk[np.asarray(index.concept_papers.items[start:end])] += paper_concepts[c]
        out["walk, concepts"] = walk
        out["walk, similarity links"] = knn @ scaled(concepts)
        out["soft concepts"] = soft @ (soft[q] > 0).astype(np.float32)
        out["concepts + soft concepts (½ each)"] = 0.5 * scaled(concepts) + 0.5 * scaled(out["soft concepts"])
        fused = FUSION["concepts"] * scaled(concepts) + FUSION["words"] * scaled(words) + FUSION["embedding"] * cosine
        fused[q] = -np.inf
        moved = vectors[q] + 1.0 * vectors[np.argsort(-fused)[:3]].mean(axis=0)
        out["pseudo-relevance feedback"] = vectors @ (moved / np.linalg.norm(moved))
        return out

    for kind in ("keywords", "authors"):
        relevant, queries = relevance(nodes, ids, kind, args.seed, args.queries)
        alone: dict[str, list[float]] = {}
        added: dict[str, list[float]] = {}
        for q in queries:
            found = signals(q)
            base = FUSION["concepts"] * scaled(found["concepts"]) + FUSION["words"] * scaled(found["words"]) + FUSION["embedding"] * found["embedding"]
            alone.setdefault("kg fusion", []).append(metrics(top10(base, q), relevant[q])[0])
            for name, values in found.items():
                alone.setdefault(name, []).append(metrics(top10(values, q), relevant[q])[0])
                if name in FUSION:
                    continue
                if name == "pseudo-relevance feedback":
                    mixed = base - FUSION["embedding"] * found["embedding"] + FUSION["embedding"] * values
                else:
                    mixed = base + 0.1 * (scaled(values) if values.max() > 0 else values)
                added.setdefault(name, []).append(metrics(top10(mixed, q), relevant[q])[0])
        print(f"\n{kind}, tune half, {len(queries)} queries: nDCG@10 [95% CI]")
        for name, values in alone.items():
            array = np.array(values)
            low, high = interval(array)
            extra = ""
            if name in added:
                gain = np.array(added[name]) - np.array(alone["kg fusion"])
                g_low, g_high = interval(gain)
                extra = f"   added to kg's fusion (0.1, or replacing the query vector): {gain.mean():+.4f} [{g_low:+.4f}, {g_high:+.4f}]"
            print(f"  {name:<38} {array.mean():.4f} [{low:.4f}, {high:.4f}]{extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
