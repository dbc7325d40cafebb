"""Mention scores: the chance that a reader accepts a mention with its type.

A small logistic model over what a mention looks like and where it came from: its source
(vocabulary, acronym definition, coined name, recognizer, noun phrase), its type, its shape
(words, capitals, digits, an acronym), how generic its head and first word are, whether the
head noun agrees with the type, how often the paper repeats it, whether the title names it,
the paper's era, and how much the transformer recognizer (when it ran) believes the mention and
its type, whatever source found it. Its weights (``kg/models/mention-scorer.json``, fitted by
``bench/fit_scorer.py`` on kg's gold data, out of fold) make the score calibrated: of the
mentions scored 0.8, about 8 in 10 are right. Without the weights file, mentions keep the
fixed per-source scores of `kg.extract.components.entities` and a warning says so.

Scoring runs after the extraction cache (it is cheap, and it reads the paper's title and year,
which the cache's key does not hold), so a new scorer or threshold (``--min-score``) re-extracts
nothing.
"""

from __future__ import annotations

import functools
import json
import math
import re
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from importlib import resources
from typing import Any

from kg.model import MENTION_SOURCES, LocalMention, Paper, PaperExtraction
from kg.text.vocab import is_acronym, singularize
from kg.text.words import GENERIC_MODIFIERS, GENERIC_WORDS, HEAD_TYPES, NON_ENTITY_HEADS

SCORER_FILE = "mention-scorer.json"
SOURCES = MENTION_SOURCES
DEFAULT_MIN_SCORE = 0.5  # used when the weights file gives none
_CAMEL = re.compile(r"[a-z][A-Z]")
# How much the transformer recognizer believes a mention and its type (`LocalMention.model_confidence`), in levels.
CONFIDENCE_LEVELS = ((0.1, "<0.1"), (0.5, "0.1-0.5"), (0.9, "0.5-0.9"), (math.inf, ">=0.9"))


class NoScorerWarning(UserWarning):
    """kg's mention scorer is not installed; mentions keep their fixed per-source scores."""


def _era(year: int | None) -> str:
    if year is None:
        return "unknown"
    return "<=2002" if year <= 2002 else ("2003-2021" if year <= 2021 else "2022-2025")


def features(mention: LocalMention, paper: Paper, key_counts: Counter[str]) -> dict[str, float]:
    """Named features of one mention in its paper (all 0/1 but the bias)."""
    words = mention.text.split()
    head = singularize(words[-1].lower()) if words else ""
    first = words[0].lower() if words else ""
    head_type = HEAD_TYPES.get(head)
    source = mention.source if mention.source in SOURCES else "other"
    repeats = key_counts[mention.key]
    title = paper.title.lower()
    found: dict[str, float] = {
        "bias": 1.0,
        f"source={source}": 1.0,
        f"type={mention.label}": 1.0,
        f"source={source}&type={mention.label}": 1.0,
        f"words={min(len(words), 4)}": 1.0,
        f"era={_era(paper.year)}": 1.0,
        f"repeats={min(repeats, 3)}": 1.0,
    }
    flags = {
        "acronym": is_acronym(mention.text),
        "digit": any(ch.isdigit() for ch in mention.text),
        "capitalised": mention.text[:1].isupper() and not is_acronym(mention.text),
        "lower": mention.text.islower(),
        "camel": bool(_CAMEL.search(mention.text)),
        "hyphen": "-" in mention.text,
        "short": len(mention.text) <= 3,
        "debris": "(cid:" in mention.text or "\u00ad" in mention.text,
        "generic_head": head in GENERIC_WORDS or head in NON_ENTITY_HEADS,
        "generic_first": first in GENERIC_MODIFIERS,
        "head_agrees": head_type == mention.label,
        "head_disagrees": head_type is not None and head_type != mention.label,
        "curated": mention.vocab is not None,
        "proposed": mention.role == "proposed",
        "in_title": bool(title) and mention.where == "abstract" and mention.text.lower() in title,  # a title's own mention is no evidence of itself
    }
    found.update({name: 1.0 for name, on in flags.items() if on})
    if mention.model_confidence is not None:  # a transformer recognizer read the paper
        level = next(name for bound, name in CONFIDENCE_LEVELS if mention.model_confidence < bound)
        found[f"model_confidence={level}"] = 1.0
        found[f"source={source}&model_confidence={level}"] = 1.0
    return found


class MentionScorer:
    """Calibrated mention scores from fitted weights (a logistic model over `features`)."""

    def __init__(self, model: dict[str, Any]) -> None:
        self.weights: dict[str, float] = dict(model["weights"])
        self.min_score = float(model.get("min_score", DEFAULT_MIN_SCORE))

    def probability(self, named: dict[str, float]) -> float:
        z = sum(self.weights.get(name, 0.0) * value for name, value in named.items())
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))

    def score(self, extraction: PaperExtraction, paper: Paper) -> PaperExtraction:
        # An abstract's mention counts the abstract's repeats (as fitted); a title's, the title's too.
        counts = Counter(m.key for m in extraction.mentions if m.where == "abstract")
        with_title = counts + Counter(m.key for m in extraction.mentions if m.where == "title")
        mentions = tuple(
            replace(m, score=round(self.probability(features(m, paper, counts if m.where == "abstract" else with_title)), 4)) for m in extraction.mentions
        )
        return replace(extraction, mentions=mentions)


def score_extractions(papers: Sequence[Paper], extractions: Sequence[PaperExtraction], scorer: MentionScorer | None) -> list[PaperExtraction]:
    """Every mention of every paper scored (as they are, without a scorer)."""
    if scorer is None:
        return list(extractions)
    return [scorer.score(extraction, paper) for paper, extraction in zip(papers, extractions, strict=True)]


def without_mentions_below(extractions: Sequence[PaperExtraction], min_score: float) -> list[PaperExtraction]:
    """The extractions without their mentions scored below `min_score`."""
    if min_score <= 0:
        return list(extractions)
    return [replace(x, mentions=tuple(m for m in x.mentions if m.score >= min_score)) for x in extractions]


def scorer_text() -> str | None:
    """The shipped weights file's text, or None when this installation lacks it."""
    resource = resources.files("kg") / "models" / SCORER_FILE
    return resource.read_text(encoding="utf-8") if resource.is_file() else None


@functools.lru_cache(maxsize=1)
def load_scorer() -> MentionScorer | None:
    """The shipped scorer (cached), or None with a `NoScorerWarning`."""
    text = scorer_text()
    if text is None:
        warnings.warn(
            f"kg's mention scorer is not installed (kg/models/{SCORER_FILE}); mentions keep fixed per-source "
            "scores, and the score threshold applies to those. Reinstall kg to get it back.",
            NoScorerWarning,
            stacklevel=2,
        )
        return None
    return MentionScorer(json.loads(text))


def default_min_score() -> float:
    """The threshold chosen on kg's gold dev set (in the weights file)."""
    scorer = load_scorer()
    return scorer.min_score if scorer is not None else DEFAULT_MIN_SCORE

