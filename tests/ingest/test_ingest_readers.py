"""Every reader on a small fixture, with the exact `Paper` records expected."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg.ingest import read_corpus
from kg.ingest.ids import content_hash
from kg.ingest.text import parse_header
from kg.model import Paper

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ingest"


@pytest.fixture(autouse=True)
def in_fixtures(monkeypatch):
    """Sources are named as the user wrote the path; run from the fixture folder for short names."""
    monkeypatch.chdir(FIXTURES)


def read(*inputs: str) -> tuple[Paper, ...]:
    return read_corpus(list(inputs)).papers


def test_json_lines():
    kan_abstract = "We propose KAN-AD, a lightweight anomaly detector built on Kolmogorov-Arnold networks. It is fast."
    assert read("papers.jsonl") == (
        Paper(
            id="arXiv:1810.04805",  # no id, no DOI: the arXiv id from the URL
            title="BERT: Pre-training of Deep Bidirectional Transformers",
            abstract="We introduce a new language representation model called BERT.",  # from `summary`
            authors=("Jacob Devlin", "Ming-Wei Chang"),  # "A and B"
            year=2019,  # from "2019-06-02"
            url="https://arxiv.org/abs/1810.04805v2",
            arxiv_id="1810.04805",
            source="papers.jsonl:3",
        ),
        Paper(
            id=f"kan-ad-a-lightweight-anomaly-detector-built-on-kolmogorov-{content_hash(kan_abstract)}",
            title="KAN-AD: A lightweight anomaly detector built on Kolmogorov-Arnold networks",
            abstract=kan_abstract,  # from `text`
            authors=("Quan Zhou", "Changhua Pei"),  # "A; B"
            year=2025,
            venue="ICML",
            keywords=("anomaly detection", "time series"),
            title_derived=True,
            source="papers.jsonl:4",
        ),
        Paper(
            id="neurips2017:attention",
            title="Attention Is All You Need",  # whitespace collapsed
            abstract="The dominant sequence transduction models are based on complex recurrent networks. We propose the Transformer.",
            authors=("Ashish Vaswani", "Noam Shazeer"),
            year=2017,
            venue="NeurIPS",  # "NeurIPS 2017" with year 2017
            url="https://papers.nips.cc/paper/7181",
            doi="10.5555/3295222.3295349",
            keywords=("attention", "transformer"),
            source="papers.jsonl:1",
        ),
    )


def test_json_array_records_are_located_by_line():
    assert read("papers.json") == (
        Paper(
            id="arXiv:1412.6980",  # arXiv's own DOI gives the arXiv form
            title="Adam: A Method for Stochastic Optimization",
            abstract="We introduce Adam, an algorithm for first-order gradient-based optimization.",
            doi="10.48550/arxiv.1412.6980",
            arxiv_id="1412.6980",
            source="papers.json:8",
        ),
        Paper(
            id="doc-1",
            title="Deep Residual Learning",
            abstract="Deeper neural networks are more difficult to train.",
            authors=("Kaiming He", "Xiangyu Zhang"),  # {"name"} and {"given", "family"} objects
            source="papers.json:2",
        ),
    )


def test_csv_with_case_insensitive_columns_and_quoted_newlines():
    assert read("papers.csv") == (
        Paper(
            id="r1",
            title="Dropout",
            abstract="Deep nets overfit. We propose dropout, a simple fix.",
            authors=("Nitish Srivastava", "Geoffrey Hinton"),  # "Last, First; Last, First"
            year=2014,
            venue="JMLR",
            keywords=("regularization", "dropout"),
            source="papers.csv:2",
        ),
        Paper(
            id="r2",
            title="GloVe",
            abstract="We present GloVe, a model for word vectors.",
            authors=("Jeffrey Pennington", "Richard Socher", "Christopher Manning"),  # "A, B and C"
            year=2014,
            venue="EMNLP",
            doi="10.3115/v1/d14-1162",
            source="papers.csv:4",  # the record after a two-line quoted field starts on line 4
        ),
    )


def test_tsv_with_summary_column():
    abstract = "We propose two novel model architectures for computing continuous vector representations of words."
    assert read("papers.tsv") == (
        Paper(
            id=f"word2vec-{content_hash(abstract)}",
            title="Word2Vec",
            abstract=abstract,
            authors=("Tomas Mikolov",),
            source="papers.tsv:2",
        ),
    )


def test_bibtex_latex_names_and_arxiv():
    assert read("papers.bib") == (
        Paper(
            id="doe2021",
            title="A Study of Things",
            abstract="Things are studied here.",
            authors=("Jane Doe",),
            year=2021,
            venue="arXiv",  # "arXiv preprint arXiv:2102.00002"
            doi="10.1000/xyz.123",
            arxiv_id="2102.00002",
            source="papers.bib:13",
        ),
        Paper(
            id="smith2020caf",  # the BibTeX key is the given id
            title="BERT-style Pre-training for Café Naïve Transformers",
            abstract="We propose CafeNet, a model with $\\alpha$-accuracy. It is 50% better.",  # math kept verbatim
            authors=("John Smith", "Jörg Müller", "Jan van der Berg"),
            year=2020,
            venue="International Conference on Machine Learning",  # @string resolved
            arxiv_id="2001.00001",
            source="papers.bib:3",
        ),
    )


def test_seed_like_text_with_header_and_wrapped_paragraphs():
    first = "We study sparse attention in long context models."
    second = "We introduce FlashThing, a fast kernel for attention."
    assert read("seedlike.txt") == (
        Paper(
            id=f"flashthing-a-fast-kernel-for-attention-{content_hash(second)}",
            title="FlashThing: A fast kernel for attention",
            abstract=second,
            year=2024,
            venue="NeurIPS",
            title_derived=True,
            source="seedlike.txt:7",
        ),
        Paper(
            id=f"sparse-attention-in-long-context-models-{content_hash(first)}",
            title="Sparse attention in long context models",  # "We study" dropped
            abstract=first,  # two lines joined
            year=2024,
            venue="NeurIPS",
            title_derived=True,
            source="seedlike.txt:3",
        ),
    )


def test_unknown_extension_is_sniffed():
    assert read("noextension") == (
        Paper(id="x1", title="No Extension", abstract="A JSON Lines file without an extension.", source="noextension:1"),
    )


def test_folder_reads_supported_files_recursively_and_skips_hidden_ones():
    papers = read("folder")
    assert [(p.id, p.source) for p in papers] == [
        (f"abstract-one-in-a-folder-{content_hash('Abstract one in a folder.')}", "folder/a.txt:3"),
        ("f2", "folder/sub/b.jsonl:1"),
    ]  # README.md (unsupported extension) and .hidden/ are not read


def test_several_paths_and_stdin(monkeypatch):
    import io

    stdin = io.StringIO('{"id": "s1", "title": "From stdin", "abstract": "Piped in."}\n')
    papers = read_corpus(["-", "papers.tsv", "noextension"], stdin=stdin).papers
    assert [(p.id, p.source) for p in papers] == [
        ("s1", "<stdin>:1"),
        (papers[1].id, "papers.tsv:2"),
        ("x1", "noextension:1"),
    ]
    assert papers[1].id.startswith("word2vec-")


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("ICML 2025 Papers", ("ICML", 2025)),
        ("ICML 2025 论文列表", ("ICML", 2025)),
        ("Accepted papers of NeurIPS 2024", ("NeurIPS", 2024)),
        ("2023 ACL accepted", ("ACL", 2023)),
        ("AutoML-Conf 2022", ("AutoML-Conf", 2022)),
        ("My reading list", (None, None)),
    ],
)
def test_parse_header(header, expected):
    assert parse_header(header) == expected
