"""Related papers for many query papers at once: what `kg.related_work.rank.rank` returns, faster.

The HTML page ranks every drawn paper (thousands); `rank` scores each query with a Python
loop over the postings of its concepts (~10 ms on 35,000 papers). `Ranker` does the same
sums with numpy: each posting's weight is computed once, and a query adds its concepts'
weight products into a dense array in the same order as `RelatedIndex.concept_scores`, so
every score is the same float, bit for bit, and the ranking (score, then paper id) is the
same list; both end in `kg.related_work.rank.fused`, which adds the lexical and embedding
signals. `kg related` answers one query and keeps the loop.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from kg.related_work.index import BROADER_BIT, RelatedIndex, idf_weight, term
from kg.related_work.rank import ConceptScores, Query, RelatedPaper, fused


class Ranker:
    """`rank(index, paper, top=…, types=…, embeddings=…)` for many papers of one index."""

    def __init__(self, index: RelatedIndex) -> None:
        self.index = index
        scoring = index.scoring
        postings = index.concept_papers
        self.candidates = np.asarray(postings.items, dtype=np.int64)
        codes = np.asarray(postings.values, dtype=np.int64)
        ptr = np.asarray(postings.ptr, dtype=np.int64)
        self.ptr = ptr.tolist()
        total, power = len(index.paper_ids), scoring["idf_power"]
        # A posting's weight is term(code, idf): ((role × tf) × idf) × β when broader. role × tf
        # per distinct code comes from `term` itself (idf 1.0, not broader), the rest is
        # multiplied here in the same order, so each weight equals term(code, idf) exactly.
        role_tf = {code: term(code & ~BROADER_BIT, 1.0, scoring) for code in np.unique(codes).tolist()}
        table = np.zeros(max(role_tf, default=0) + 1)
        for code, value in role_tf.items():
            table[code] = value
        # A concept no paper reaches (a curated broader one far above every mention) has no
        # postings and is never a query term: its idf is never used, so 0, not a division by 0.
        idf = np.array([idf_weight(total, ptr[c + 1] - ptr[c], power) if ptr[c + 1] > ptr[c] else 0.0 for c in range(len(ptr) - 1)])
        weights = table[codes] * np.repeat(idf, np.diff(ptr))
        self.broader = (codes & BROADER_BIT).astype(bool)
        weights[self.broader] *= scoring["broader"]
        self.weights = weights
        self.ids = index.paper_ids
        self._lengths = np.asarray(index.lengths, dtype=np.float64)

    def rank(
        self, paper: int, *, top: int = 10, types: Iterable[str] | None = None, embeddings: np.ndarray | None = None, signals: Iterable[str] | None = None
    ) -> list[RelatedPaper]:
        if top < 1:
            return []
        query = Query.of_paper(self.index, paper, types)
        dots, touched = self._dots(paper, query.concepts)
        found = np.flatnonzero(touched)
        return fused(self.index, query, ConceptScores(found, dots[found]), embeddings, top, signals)

    def _dots(self, paper: int, terms: dict[int, tuple[float, int, float]]) -> tuple[np.ndarray, np.ndarray]:
        """`RelatedIndex.concept_scores` as a dense array, with which candidates it holds."""
        dots = np.zeros(len(self.ids))
        touched = np.zeros(len(self.ids), dtype=bool)
        ptr = self.ptr
        for concept, (query_weight, query_code, _) in terms.items():
            start, end = ptr[concept], ptr[concept + 1]
            candidates = self.candidates[start:end]
            products = query_weight * self.weights[start:end]
            if query_code & BROADER_BIT:  # both only through narrower concepts: not shared
                products[self.broader[start:end]] = 0.0
            # A candidate appears once per concept, so this adds one product to each, in the
            # concepts' order, as the dict loop does (a zero product adds nothing there).
            dots[candidates] += products
            touched[candidates] |= products != 0.0
        touched[paper] = False
        b = self.index.scoring["b"]
        if b:
            dots /= 1.0 - b + b * self._lengths / (self.index.mean_length or 1.0)
        return dots, touched

