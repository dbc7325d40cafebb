"""Paper identity: the rule (given id > DOI > arXiv id > slug + hash), tidy ids, helpers."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kg.ingest import ids


@pytest.mark.parametrize(
    ("text", "bare", "expected"),
    [
        ("arXiv:2505.00001", False, "2505.00001"),
        ("https://arxiv.org/abs/1810.04805v2", False, "1810.04805"),
        ("http://arxiv.org/pdf/2001.00001v1.pdf", False, "2001.00001"),
        ("10.48550/arXiv.1412.6980", False, "1412.6980"),
        ("arXiv preprint arXiv:2102.00002", False, "2102.00002"),
        ("https://arxiv.org/abs/cs/0112017", False, "cs/0112017"),
        ("2505.00001", False, None),  # a bare number in an id field is not evidence of arXiv
        ("2505.00001v3", True, "2505.00001"),  # …but it is in an eprint field
        ("math.GT/0309136", True, "math.GT/0309136"),
        ("icml2025:site_a6a496aa3b", False, None),
        ("", False, None),
        (None, False, None),
    ],
)
def test_find_arxiv_id(text, bare, expected):
    assert ids.find_arxiv_id(text, bare=bare) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("10.1145/3292500.3330701", "10.1145/3292500.3330701"),
        ("https://doi.org/10.5555/ABC.Def", "10.5555/abc.def"),
        ("http://dx.doi.org/10.1000/xyz", "10.1000/xyz"),
        ("doi: 10.1000/xyz.", "10.1000/xyz"),
        ("not a doi", None),
        ("11.1000/xyz", None),
        (None, None),
    ],
)
def test_normalise_doi(value, expected):
    assert ids.normalise_doi(value) == expected


def test_doi_from_url_only_reads_doi_org():
    assert ids.doi_from_url("https://doi.org/10.1000/ABC") == "10.1000/abc"
    assert ids.doi_from_url("https://example.org/10.1000/abc") is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("arXiv:2505.00001", "arXiv:2505.00001"),
        ("  my id\twith\nspaces ", "my-id-with-spaces"),
        ("bell\x07\x00id", "bellid"),
        (42, "42"),
        ("   ", None),
        (None, None),
        (True, None),
    ],
)
def test_tidy_id(value, expected):
    assert ids.tidy_id(value) == expected


def test_slugify_folds_accents_and_cuts_at_a_word_boundary():
    assert ids.slugify("Café Naïve: GPT-4o & Friends!") == "cafe-naive-gpt-4o-friends"
    long = ids.slugify("word " * 30)
    assert long == "-".join(["word"] * 12)  # 59 characters, cut before the 13th word
    assert ids.slugify("论文列表") == "paper"


def test_paper_id_rule_order():
    common = {"title": "Attention Is All You Need", "abstract": "We propose the Transformer."}
    assert ids.paper_id(given="p1", doi="10.1/x", arxiv_id="1706.03762", **common) == "p1"
    assert ids.paper_id(given=None, doi="10.1/x", arxiv_id="1706.03762", **common) == "doi:10.1/x"
    assert ids.paper_id(given=None, doi=None, arxiv_id="1706.03762", **common) == "arXiv:1706.03762"
    # arXiv's own DOI names the same thing as the arXiv id; the arXiv form reads better.
    assert ids.paper_id(given=None, doi="10.48550/arxiv.1706.03762", arxiv_id="1706.03762", **common) == "arXiv:1706.03762"
    digest = ids.content_hash("We propose the Transformer.")
    assert ids.paper_id(given=None, doi=None, arxiv_id=None, **common) == f"attention-is-all-you-need-{digest}"


def test_content_hash_is_sha256_prefix():
    # sha256("abc") = ba7816bf…: the id does not depend on Python's randomised hash().
    assert ids.content_hash("abc") == "ba7816bf"


@given(st.text(min_size=1), st.text(min_size=1))
def test_generated_ids_are_tidy(title, abstract):
    paper_id = ids.paper_id(given=None, doi=None, arxiv_id=None, title=title, abstract=abstract)
    assert paper_id and not any(ch.isspace() or ord(ch) < 32 for ch in paper_id)
    assert paper_id == ids.paper_id(given=None, doi=None, arxiv_id=None, title=title, abstract=abstract)


@given(st.text())
def test_tidied_given_ids_have_no_whitespace_or_controls(value):
    tidy = ids.tidy_id(value)
    assert tidy is None or (tidy and not any(ch.isspace() or ord(ch) < 32 or 0x7F <= ord(ch) < 0xA0 for ch in tidy))
