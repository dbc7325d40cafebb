"""kg.results.values: which numbers of a text can be a result's value, with their units."""

from __future__ import annotations

import pytest

from kg.results.values import find_values


def values(text: str) -> list[tuple[str, str | None]]:
    return [(v.text, v.unit) for v in find_values(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("achieves 28.4 BLEU", [("28.4", None)]),
        ("a top-1 error of 3.1%", [("3.1", "%")]),
        ("gains of +2.3 points", [("2.3", "points")]),
        ("a 3x speed-up", [("3", "x")]),
        ("improves PSNR by 1.5 dB", [("1.5", "dB")]),
        ("from 57 % to 82 %", [("57", "%"), ("82", "%")]),
        ("gains of 3-5% overall", [("3-5", "%")]),
    ],
)
def test_values_and_units(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "ResNet-50 and GPT-4 on CIFAR-10",  # numbers inside names
        "a 7B model with 10,000 images",  # sizes and counts
        "published in 2019",  # a year
        "see Table 3",  # a reference
        "with only 10% of the labels",  # a setting
        "a 3-layer network with 12 heads",  # architecture
    ],
)
def test_numbers_that_are_no_result(text):
    assert values(text) == []


def test_signed_value_and_number():
    (value,) = find_values("up by +1,234.5 points")
    assert value.signed and value.number == 1234.5
