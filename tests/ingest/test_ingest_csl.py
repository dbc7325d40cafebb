"""CSL-JSON as Zotero's "CSL JSON" export writes it (tests/fixtures/formats/zotero_csl.json): an array,
tab-indented, with ``container-title``, ``issued`` date-parts (the year as text) and ``author``
{family, given} objects."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg.ingest import read_corpus
from kg.ingest.records import parse_year
from kg.model import Paper

FORMATS = Path(__file__).resolve().parents[1] / "fixtures" / "formats"


@pytest.fixture(autouse=True)
def in_formats(monkeypatch):
    monkeypatch.chdir(FORMATS)


def test_zotero_csl_json_export():
    assert (FORMATS / "zotero_csl.json").read_text(encoding="utf-8").startswith('[\n\t{\n\t\t"id": "http://zotero.org/users/local/')
    assert read_corpus(["zotero_csl.json"]).papers == (
        Paper(
            id="http://zotero.org/users/local/riiZoBgm/items/5XH2NK00",  # Zotero's item URI is the given id
            title="BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
            abstract="We introduce a new language representation model called BERT, which stands for Bidirectional Encoder Representations from Transformers.",
            authors=("Jacob Devlin", "Ming-Wei Chang", "Kenton Lee", "Kristina Toutanova"),
            year=2019,  # issued {"date-parts": [["2019", 5, 24]]}
            url="http://arxiv.org/abs/1810.04805",
            doi="10.48550/arxiv.1810.04805",
            arxiv_id="1810.04805",
            source="zotero_csl.json:2",
        ),
        Paper(
            id="http://zotero.org/users/local/riiZoBgm/items/8K9DJR00",
            title="Dropout: A Simple Way to Prevent Neural Networks from Overfitting",
            abstract="Deep neural nets with a large number of parameters are very powerful machine learning systems. However, overfitting is a serious problem in such networks.",
            authors=("Nitish Srivastava", "Geoffrey Hinton"),
            year=2014,  # [["2014"]]
            venue="Journal of Machine Learning Research",  # container-title
            url="http://jmlr.org/papers/v15/srivastava14a.html",
            source="zotero_csl.json:98",
        ),
        Paper(
            id="http://zotero.org/users/local/riiZoBgm/items/QW7T3ZUA",
            title="Deep Residual Learning for Image Recognition",
            abstract="Deeper neural networks are more difficult to train. We present a residual learning framework to ease the training "
            "of networks that are substantially deeper than those used previously.",
            authors=("Kaiming He", "Xiangyu Zhang", "Shaoqing Ren", "Jian Sun"),
            year=2016,
            venue="Proceedings of the IEEE Conference on Computer Vision and Pattern Recognition (CVPR)",
            url="https://ieeexplore.ieee.org/document/7780459",
            doi="10.1109/cvpr.2016.90",
            source="zotero_csl.json:51",
        ),
    )


@pytest.mark.parametrize(
    ("value", "year"),
    [
        ({"date-parts": [["2019", 5, 24]]}, 2019),
        ({"date-parts": [[2016, 6]]}, 2016),
        ({"raw": "June 2021"}, 2021),
        ({"literal": "circa 1999"}, 1999),
        ({"date-parts": [[{"nested": 2020}]]}, None),
        ({"season": 2}, None),
    ],
)
def test_csl_dates(value, year):
    assert parse_year(value) == year
