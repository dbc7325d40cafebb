"""kg.results.find through extraction: values tied to a metric, a dataset, a method and a baseline."""

from __future__ import annotations

import pytest

from kg.extract.papers import extract_text

TEXT = (
    "We propose FooNet, a transformer for translation. FooNet achieves 28.4 BLEU on the WMT14 English-German "
    "dataset, improving over BERT by 2.3 points. On ImageNet, ResNet-50 reaches 76.1% top-1 accuracy while ours "
    "reaches 78.3%. It reduces FID from 7.2 to 4.1 on CIFAR-10. The model has 7B parameters and was trained in 2019."
)


@pytest.fixture(scope="module")
def claims():
    extraction = extract_text(TEXT)
    return {c.value: c for c in extraction.claims}


def words(span):
    return None if span is None else TEXT[span[0] : span[1]]


def test_only_results_become_claims(claims):
    assert set(claims) == {"28.4", "2.3", "76.1", "78.3", "7.2", "4.1"}  # not 7B, not 2019


def test_offsets_point_at_the_value(claims):
    for value, claim in claims.items():
        assert TEXT[claim.start : claim.end] == value
        assert claim.sent_start <= claim.start < claim.end <= claim.sent_end


def test_metric_and_dataset_links(claims):
    assert words(claims["28.4"].metric) == "BLEU"
    assert words(claims["76.1"].metric) == "top-1 accuracy"
    assert words(claims["76.1"].dataset) == "ImageNet"
    assert words(claims["4.1"].metric) == "FID"
    assert words(claims["4.1"].dataset) == "CIFAR-10"


def test_kinds(claims):
    assert claims["2.3"].kind == "improvement" and claims["2.3"].unit == "points"
    assert claims["28.4"].kind == claims["76.1"].kind == "absolute"


def test_methods_and_baselines(claims):
    assert words(claims["76.1"].method) == "ResNet-50" and not claims["76.1"].proposed  # the baseline's own number
    assert claims["78.3"].proposed and claims["78.3"].method is None  # "ours": the paper's unnamed method
    assert words(claims["2.3"].baseline) == "BERT"
    assert not claims["7.2"].proposed and claims["4.1"].proposed  # "from 7.2 to 4.1": the first is the baseline's


def test_claims_survive_the_cache_round_trip():
    from kg.extract.cache import fits_text, valid_extraction
    from kg.model import MENTION_SOURCES, PaperExtraction
    from kg.text.vocab import load_vocabulary

    extraction = extract_text(TEXT)
    value = {k: v for k, v in extraction.to_dict().items() if k != "paper_id"}
    assert valid_extraction(value) and fits_text(value, TEXT, sources=MENTION_SOURCES, vocabulary=load_vocabulary())
    assert PaperExtraction.from_dict({**value, "paper_id": ""}) == extraction
    forged = {**value, "claims": [{**value["claims"][0], "value": "99.9"}]}
    assert not fits_text(forged, TEXT, sources=MENTION_SOURCES, vocabulary=load_vocabulary())
