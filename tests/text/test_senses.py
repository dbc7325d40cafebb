"""Senses in context: an ambiguous surface names the sense its abstract supports, or nothing."""

from __future__ import annotations

import pytest

from kg.text.vocab import load_vocabulary, parse_senses


def test_the_abstract_decides_the_sense() -> None:
    vocabulary = load_vocabulary()
    assert vocabulary.sense("EM", "We fit a Gaussian mixture with EM.").id == "method/expectation-maximization"
    assert vocabulary.sense("EM", "On SQuAD we report EM and F1.").id == "metric/exact-match"
    assert vocabulary.sense("EM", "The EM field of a dipole.") is None
    assert vocabulary.sense("attention", "Visual attention of human observers.") is None
    assert vocabulary.sense("IS", "Our GAN improves FID and IS.").id == "metric/inception-score"


def test_no_curated_alias_names_an_ambiguous_surface_context_free() -> None:
    vocabulary = load_vocabulary()
    for surface in vocabulary.senses:
        assert vocabulary.by_surface.get(surface) is None, surface
        assert all(surface not in (e.label, *e.aliases) for e in vocabulary.entries), surface


def test_a_sense_must_name_a_vocabulary_concept() -> None:
    with pytest.raises(ValueError, match="no concept of the vocabulary"):
        parse_senses("EM\tno such concept\tcue", load_vocabulary().by_id)


@pytest.mark.parametrize(
    ("text", "surface", "expected"),
    [
        ("We derive an EM algorithm for mixtures with missing data; EM converges.", "EM", ("METHOD", "method/expectation-maximization")),
        ("We report EM and F1 on SQuAD and TriviaQA.", "EM", ("METRIC", "metric/exact-match")),
        ("The transformer's attention layers attend to tokens.", "attention layers", ("METHOD", "method/attention-mechanism")),
        ("The chip is built in analog VLSI, like a silicon retina.", "silicon retina", ("HARDWARE", "hardware/silicon-retina")),
        ("The chip is built in analog VLSI, like a silicon retina.", "analog VLSI", ("HARDWARE", "hardware/vlsi")),
    ],
)
def test_extraction_follows_the_sense_and_types_hardware(nlp, text, surface, expected) -> None:
    from kg.extract.papers import extract_text

    found = {m.text: (m.label, m.vocab) for m in extract_text(text, nlp=nlp).mentions}
    assert found.get(surface) == expected


def test_research_fields_are_never_mentions(nlp) -> None:
    from kg.extract.papers import extract_text

    text = "Machine learning and computer vision meet natural language processing (NLP) in robotics."
    assert not [m.text for m in extract_text(text, nlp=nlp).mentions if m.text.lower() in {"machine learning", "computer vision", "natural language processing", "nlp", "robotics"}]
