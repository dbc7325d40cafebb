"""Mention scores: calibrated on kg's gold data, applied after the cache, thresholded by --min-score."""

from __future__ import annotations

import json
import warnings
from collections import Counter

import pytest

from kg.extract import scoring
from kg.extract.scoring import features, load_scorer, score_extractions, without_mentions_below
from kg.model import LocalMention, Paper, PaperExtraction


def mention(text: str, label: str = "METHOD", source: str = "model", start: int = 0, vocab: str | None = None) -> LocalMention:
    return LocalMention(start, start + len(text), text, label, text.lower(), vocab, "used", source, 0.65, 0, 100)  # type: ignore[arg-type]


def test_features_describe_source_type_shape_and_context() -> None:
    paper = Paper(id="p", title="BERT for parsing", abstract="x", year=1995)
    named = features(mention("BERT", vocab="method/bert", source="vocab"), paper, Counter({"bert": 2}))
    assert {"bias", "source=vocab", "type=METHOD", "source=vocab&type=METHOD", "acronym", "curated", "in_title", "era=<=2002", "repeats=2"} <= set(named)
    generic = features(mention("proposed method", source="noun_chunk"), paper, Counter({"proposed method": 1}))
    assert {"generic_head", "generic_first", "words=2", "lower"} <= set(generic) and "in_title" not in generic


@pytest.mark.parametrize(("confidence", "level"), [(0.0, "<0.1"), (0.0999, "<0.1"), (0.1, "0.1-0.5"), (0.5, "0.5-0.9"), (0.9, ">=0.9"), (1.0, ">=0.9")])
def test_the_recognizers_confidence_is_a_feature_in_levels(confidence: float, level: str) -> None:
    from dataclasses import replace

    paper = Paper(id="p", title="", abstract="x", year=2024)
    named = features(replace(mention("BERT", source="vocab"), model_confidence=confidence), paper, Counter())
    assert {name for name in named if "model_confidence" in name} == {f"model_confidence={level}", f"source=vocab&model_confidence={level}"}
    assert not any("model_confidence" in name for name in features(mention("BERT", source="vocab"), paper, Counter()))  # no transformer ran


def test_the_shipped_scorer_ranks_a_curated_name_above_a_generic_phrase() -> None:
    scorer = load_scorer()
    assert scorer is not None and 0 < scorer.min_score < 1
    paper = Paper(id="p", title="", abstract="x", year=2024)
    curated = scorer.probability(features(mention("ImageNet", "DATASET", "vocab", vocab="dataset/imagenet"), paper, Counter()))
    vague = scorer.probability(features(mention("new framework", "METHOD", "noun_chunk"), paper, Counter()))
    assert 0.0 <= vague < scorer.min_score < curated <= 1.0


def test_the_weights_file_records_its_calibration_and_threshold_choice() -> None:
    model = json.loads(scoring.scorer_text())
    assert model["min_score_rule"] and model["dev"]["calibration"] and model["dev"]["sweep"]
    # calibrated: in the bins with enough mentions, the share accepted rises with the score
    bins = [b["accepted"] for b in model["dev"]["calibration"] if b["mentions"] >= 50]
    assert bins == sorted(bins) or sum(a > b for a, b in zip(bins, bins[1:], strict=False)) <= 1


def test_scores_replace_fixed_ones_and_the_threshold_drops_below_it() -> None:
    paper = Paper(id="p", title="", abstract="ImageNet and a new framework")
    extraction = PaperExtraction("p", (mention("ImageNet", "DATASET", "vocab", vocab="dataset/imagenet"), mention("new framework", "METHOD", "noun_chunk", 13)), ())
    scored = score_extractions([paper], [extraction], load_scorer())[0]
    assert [m.score for m in scored.mentions] != [0.65, 0.65]
    kept = without_mentions_below([scored], load_scorer().min_score)[0]
    assert [m.text for m in kept.mentions] == ["ImageNet"]
    assert without_mentions_below([scored], 0)[0] == scored
    assert score_extractions([paper], [extraction], None) == [extraction]


def test_without_the_weights_file_kg_warns_and_keeps_fixed_scores(monkeypatch) -> None:
    monkeypatch.setattr(scoring, "scorer_text", lambda: None)
    load_scorer.cache_clear()
    try:
        with pytest.warns(scoring.NoScorerWarning, match="mention scorer is not installed"):
            assert load_scorer() is None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", scoring.NoScorerWarning)  # said once above
            assert scoring.default_min_score() == scoring.DEFAULT_MIN_SCORE
    finally:
        load_scorer.cache_clear()


def test_min_score_on_kg_extract(capsys) -> None:
    from kg.cli import main

    abstract = '{"id": "d", "title": "KAN-AD", "abstract": "We propose KAN-AD for time series anomaly detection and report AUPRC on an NVIDIA A100 GPU with a novel framework."}'

    def entities(*options: str) -> list[dict]:
        import io
        import sys

        old = sys.stdin
        sys.stdin = io.StringIO(abstract + "\n")
        try:
            assert main(["extract", "-", *options]) == 0
        finally:
            sys.stdin = old
        return json.loads(capsys.readouterr().out.splitlines()[0])["entities"]

    every, default, none = entities("--min-score", "0"), entities(), entities("--min-score", "1")
    assert none == [] and 0 < len(default) <= len(every)
    assert all(e["score"] >= load_scorer().min_score for e in default)
    assert main(["extract", "-", "--min-score", "2"]) == 2  # outside [0, 1]: a usage error
