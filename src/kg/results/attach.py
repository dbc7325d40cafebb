"""Learned attachment: which numbers are results, and which metric, dataset and method each one
belongs to, chosen by small logistic models over value–candidate pairs (`kg.results.features`:
`sites(doc)` lists every value of a parsed abstract with its candidates and their features).

`AttachModel` scores each candidate with its part's weights (``kg/models/claim-attacher.json``,
fitted by ``bench/fit_claims.py`` on the train half of kg's gold claims): a value is a claim with
probability p(claim), and its metric, dataset and method are the candidates scored highest. A
claim's score is p(claim) × p(metric) × p(dataset): the chance that its value, metric and dataset
are all right, which is what `kg leaderboard`'s threshold (`kg.results.MIN_RESULT_SCORE`) reads.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from typing import Any, Literal

from kg.results import attacher_text
from kg.results.features import Candidate, Site

Part = Literal["claim", "metric", "dataset", "method"]
PARTS: tuple[Part, ...] = ("claim", "metric", "dataset", "method")


@dataclass(frozen=True, slots=True)
class Choice:
    """What the model chose for one site, the chances it gave, and the claim's score."""

    claim: float  # p(the value is a result)
    metric: Candidate
    dataset: Candidate
    method: Candidate
    evidence: dict[str, float]  # what the score is computed from
    score: float


class AttachModel:
    """The fitted weights of each part: "claim" (a logistic model of whether a value is a result),
    "metric", "dataset" and "method" (a softmax over each site's candidates) and "score" (a
    logistic model over the others' chances: the chance that value, metric and dataset are all
    right). A missing weight counts 0."""

    def __init__(self, model: dict[str, Any]) -> None:
        self.weights: dict[str, dict[str, float]] = {part: dict(weights) for part, weights in model["weights"].items()}

    def _z(self, part: str, features: dict[str, float]) -> float:
        weights = self.weights.get(part, {})
        return sum(weights.get(name, 0.0) * value for name, value in features.items())

    def probability(self, part: str, features: dict[str, float]) -> float:
        return _sigmoid(self._z(part, features))

    def choose(self, part: Part, candidates: tuple[Candidate, ...]) -> tuple[Candidate, float, float]:
        """The candidate scored highest (the first on ties), its softmax chance and its margin
        over the next one (log odds; 10 when it stands alone)."""
        z = [self._z(part, c.features) for c in candidates]
        top = max(z)
        total = sum(math.exp(v - top) for v in z)
        best = z.index(top)
        second = max((v for n, v in enumerate(z) if n != best), default=top - 10.0)
        return candidates[best], 1.0 / total, min(top - second, 10.0)

    def attach(self, site: Site) -> Choice:
        claim = self.probability("claim", site.features)
        metric, p_metric, m_metric = self.choose("metric", site.metric)
        dataset, p_dataset, m_dataset = self.choose("dataset", site.dataset)
        method, _, _ = self.choose("method", site.method)
        evidence = {
            "bias": 1.0, "claim": _logit(claim), "metric": math.log(max(p_metric, 1e-6)), "dataset": math.log(max(p_dataset, 1e-6)),
            "metric_margin": m_metric, "dataset_margin": m_dataset,
            "metric_none": float(metric.option == "none"), "dataset_none": float(dataset.option == "none"),
            "metric_typed": float(metric.features.get("typed", 0.0) > 0 or "curated" in metric.features),
            "dataset_typed": float(dataset.features.get("typed", 0.0) > 0),
        }  # fmt: skip
        for name in ("adjacent_after", "adjacent_before", "curated", "source=chunk", "far", "list", "extends_typed"):
            if name in metric.features:
                evidence[f"metric:{name}"] = 1.0
        for name in ("preposition", "far", "respectively", "source=chunk", "label=DATASET", "dataset_noun", "none_in_sentence=0"):
            if name in dataset.features:
                evidence[f"dataset:{name}"] = 1.0
        for name in ("decimal", "unit=None", "unit=%", "integer_bare", "we", "result_verb", "in_brackets"):
            if name in site.features:
                evidence[f"value:{name}"] = 1.0
        score = self.probability("score", evidence) if "score" in self.weights else claim * p_metric * p_dataset
        return Choice(claim, metric, dataset, method, evidence, score)


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def _logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


@functools.lru_cache(maxsize=1)
def load_attacher() -> AttachModel | None:
    """The shipped model (cached), or None when it is not installed (claims then come from the rules)."""
    text = attacher_text()
    return None if text is None else AttachModel(json.loads(text))
