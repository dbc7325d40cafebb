"""Clean text: PDF debris repaired and citations dropped, every character traced to the text as given."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from kg.text.clean import clean_text


def words(text: str) -> list[tuple[str, str]]:
    """(clean word, what the given text holds there) for every word of the clean text."""
    clean = clean_text(text)
    return [(m.group(), text[slice(*clean.span(*m.span()))]) for m in re.finditer(r"[\w-]+", clean.text)]


def test_pdf_debris_is_repaired_and_maps_back_to_the_given_text() -> None:
    text = "The prob(cid:173) lems of recog- nition, self- supervised classiﬁcation and test\u00ad ing."
    assert clean_text(text).text == "The problems of recognition, self-supervised classification and testing."
    found = dict(words(text))
    assert found["problems"] == "prob(cid:173) lems"
    assert found["recognition"] == "recog- nition"
    assert found["self-supervised"] == "self- supervised"
    assert found["classification"] == "classiﬁcation"
    assert found["testing"] == "test\u00ad ing"


def test_citations_are_dropped() -> None:
    cases = {
        "Networks [Le Cun, Denker and Solla, 1990] prune weights.": "Networks prune weights.",
        "As Smith et al. (2019) showed [3], nets learn [1, 4-6].": "As Smith et al. showed, nets learn.",
        "Boosting (Freund and Schapire, 1997; Lee, 2020) works.": "Boosting works.",
        "Trees (see Breiman 2001) grow.": "Trees grow.",
    }
    for given_text, expected in cases.items():
        assert clean_text(given_text).text == expected


def test_text_without_debris_is_unchanged() -> None:
    text = "We train a CNN (ResNet-50) on ImageNet [dataset] and report 76.1% top-1 accuracy in 2019."
    clean = clean_text(text)
    assert clean.text == text and clean.origin == list(range(len(text) + 1))


@given(st.text(alphabet=st.sampled_from(list("ab -(cid:173)[]1990,.\u00adﬁA")), max_size=80))
def test_every_clean_character_comes_from_the_given_text_in_order(text: str) -> None:
    clean = clean_text(text)
    assert len(clean.origin) == len(clean.text) + 1 and clean.origin[-1] == len(text)
    assert all(0 <= a <= b for a, b in zip(clean.origin, clean.origin[1:], strict=False))
    for i, ch in enumerate(clean.text):
        source = text[clean.origin[i]]
        assert ch == source or source in "ﬁ" or (ch == "-" and source == "-")
