"""OpenAlex works: an API page, JSON Lines and a JSON array (tests/fixtures/formats/openalex_*), the
abstract rebuilt from its inverted index in word order, works without one counted like any record
without an abstract, and bad indexes named by line."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kg.cli import main
from kg.errors import EmptyAbstract, ExitCode
from kg.ingest import read_corpus
from kg.ingest.openalex import rebuild_abstract
from kg.model import Paper

FORMATS = Path(__file__).resolve().parents[1] / "fixtures" / "formats"
HINT = " (--skip-invalid skips invalid records)"

ATTENTION = (
    "The dominant sequence transduction models are based on complex recurrent or convolutional neural networks in an encoder-decoder "
    "configuration. The best performing models also connect the encoder and decoder through an attention mechanism. We propose a new "
    "simple network architecture, the Transformer, based solely on attention mechanisms, dispensing with recurrence and convolutions entirely."
)
RESNET = (
    "Deeper neural networks are more difficult to train. We present a residual learning framework to ease the training of networks that "
    "are substantially deeper than those used previously. We explicitly reformulate the layers as learning residual functions with "
    "reference to the layer inputs, instead of learning unreferenced functions."
)
NO_ABSTRACT = "openalex_page.json:544: no abstract (neither abstract nor abstract_inverted_index) (title “Proceedings of the 40th International Conference on Machine…”)"


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def fixture(name: str, as_name: str | None = None) -> str:
    Path(as_name or name).write_bytes((FORMATS / name).read_bytes())
    return as_name or name


def page_papers(source: str) -> tuple[Paper, Paper]:
    return (
        Paper(
            id="W2194775991",  # https://openalex.org/W2194775991
            title="Deep Residual Learning for Image Recognition",
            abstract=RESNET,
            authors=("Kaiming He", "Xiangyu Zhang", "Shaoqing Ren", "Jian Sun"),  # authorships[].author.display_name
            year=2016,
            venue="2016 IEEE Conference on Computer Vision and Pattern Recognition (CVPR)",  # primary_location.source.display_name
            url="https://doi.org/10.1109/cvpr.2016.90",  # primary_location.landing_page_url
            doi="10.1109/cvpr.2016.90",  # "https://doi.org/10.1109/CVPR.2016.90", bare as kg keeps DOIs
            keywords=("Residual", "Contextual image classification"),  # no keywords: the concepts
            source=f"{source}:289",
        ),
        Paper(
            id="W2963403868",
            title="Attention Is All You Need",
            abstract=ATTENTION,
            authors=("Ashish Vaswani", "Noam Shazeer", "Illia Polosukhin"),
            year=2017,
            venue="arXiv",  # "arXiv (Cornell University)"
            url="https://arxiv.org/abs/1706.03762",
            doi="10.48550/arxiv.1706.03762",
            arxiv_id="1706.03762",
            keywords=("Transformer", "Machine translation"),  # keywords before concepts
            source=f"{source}:10",
        ),
    )


def test_api_page_gives_its_results_and_counts_the_work_without_an_abstract():
    corpus = read_corpus([fixture("openalex_page.json")], skip_invalid=True)
    assert corpus.papers == page_papers("openalex_page.json")
    assert corpus.skipped == (NO_ABSTRACT,)  # abstract_inverted_index: null


def test_a_work_without_an_abstract_stops_the_build_by_default(capsys):
    fixture("openalex_page.json")
    with pytest.raises(EmptyAbstract) as raised:
        read_corpus(["openalex_page.json"])
    assert (raised.value.line, raised.value.skippable) == (544, True)
    assert main(["build", "openalex_page.json", "-o", "out", "--quiet"]) == ExitCode.EMPTY_ABSTRACT
    assert capsys.readouterr().err == f"Error: {NO_ABSTRACT}{HINT}\n"


def test_minified_page_on_one_line_and_pages_saved_one_per_line():
    page = json.loads((FORMATS / "openalex_page.json").read_text(encoding="utf-8"))
    Path("page.json").write_text(json.dumps(page), encoding="utf-8")  # as the API sends it
    Path("pages.jsonl").write_text(json.dumps(page) + "\n" + json.dumps(page) + "\n", encoding="utf-8")
    one = read_corpus(["page.json"], skip_invalid=True)
    assert [(p.id, p.source) for p in one.papers] == [("W2194775991", "page.json:1"), ("W2963403868", "page.json:1")]
    assert len(one.skipped) == 1
    two = read_corpus(["pages.jsonl"], skip_invalid=True)
    assert [p.id for p in two.papers] == ["W2194775991", "W2963403868"]  # the second page repeats the first: merged
    assert two.duplicates == 2 and len(two.skipped) == 2


def test_json_lines_of_works():
    gan = (
        "We propose a new framework for estimating generative models via an adversarial process, in which we simultaneously train two "
        "models: a generative model G that captures the data distribution, and a discriminative model D that estimates the probability "
        "that a sample came from the training data rather than G."
    )
    batchnorm, gans = read_corpus([fixture("openalex_works.jsonl")]).papers
    assert gans == Paper(
        id="W2099471712",
        title="Generative Adversarial Nets",
        abstract=gan,  # "model", "a", "the", "G" … each at all of its positions
        authors=("Ian Goodfellow", "Jean Pouget-Abadie", "Yoshua Bengio"),
        year=2014,
        venue="Neural Information Processing Systems",
        url="https://papers.nips.cc/paper/5423-generative-adversarial-nets",
        doi="10.48550/arxiv.1406.2661",
        arxiv_id="1406.2661",
        keywords=("Generative adversarial network",),
        source="openalex_works.jsonl:1",
    )
    assert batchnorm.title == "Batch Normalization: Accelerating Deep Network Training by Reducing Internal Covariate Shift"  # title null: display_name
    assert batchnorm.keywords == ("Normalization (sociology)", "Artificial intelligence")  # keywords []: the concepts
    assert batchnorm.abstract.startswith("Training Deep Neural Networks is complicated by the fact that the distribution of each layer's inputs")


def test_json_array_of_works():
    page = json.loads((FORMATS / "openalex_page.json").read_text(encoding="utf-8"))
    text = json.dumps(page["results"][:2], indent=2)
    Path("works.json").write_text(text, encoding="utf-8")
    second = text.split("\n").index("  {", 2) + 1  # the line opening the second work
    papers = read_corpus(["works.json"]).papers
    assert second > 2 and [(p.id, p.abstract, p.source) for p in papers] == [
        ("W2194775991", RESNET, f"works.json:{second}"),
        ("W2963403868", ATTENTION, "works.json:2"),
    ]


def test_the_index_is_read_in_position_order_not_key_order():
    words = ATTENTION.split()
    index: dict[str, list[int]] = {}
    for position, word in enumerate(words):
        index.setdefault(word, []).append(position)
    keys = list(index)
    random.Random(7).shuffle(keys)
    shuffled = {key: list(reversed(index[key])) for key in keys}
    assert list(shuffled) != list(index)
    assert rebuild_abstract(shuffled, path="p", line=1) == ATTENTION
    assert rebuild_abstract({"nets": [1, 4], "small": [3], "Deep": [0], "overfit;": [2]}, path="p", line=1) == "Deep nets overfit; small nets"


@given(st.lists(st.text(alphabet="abcdefghij,.;:-", min_size=1, max_size=6), min_size=1, max_size=40))
def test_rebuilding_inverts_the_inverted_index(words):
    index: dict[str, list[int]] = {}
    for position, word in enumerate(words):
        index.setdefault(word, []).append(position)
    assert rebuild_abstract(dict(reversed(index.items())), path="p", line=1) == " ".join(words)


def test_an_abstract_given_as_text_is_used_and_an_empty_index_is_no_abstract():
    Path("w.jsonl").write_text(
        json.dumps({"id": "https://openalex.org/W1", "title": "A", "abstract": "Given as text.", "abstract_inverted_index": {"Ignored": [0]}}) + "\n"
        + json.dumps({"id": "https://openalex.org/W2", "title": "B", "abstract_inverted_index": {}}) + "\n",
        encoding="utf-8",
    )
    corpus = read_corpus(["w.jsonl"], skip_invalid=True)
    assert [(p.id, p.abstract) for p in corpus.papers] == [("W1", "Given as text.")]
    assert corpus.skipped == ("w.jsonl:2: no abstract (neither abstract nor abstract_inverted_index) (title “B”)",)


@pytest.mark.parametrize(
    ("index", "message"),
    [
        pytest.param('"We propose"', "field 'abstract_inverted_index' should map words to lists of positions, not text", id="text"),
        pytest.param('{"We": [0], "propose": "1"}', "field 'abstract_inverted_index': the positions of 'propose' should be a list of whole numbers ≥ 0", id="position-text"),
        pytest.param('{"We": [0], "propose": [-1]}', "field 'abstract_inverted_index': the positions of 'propose' should be a list of whole numbers ≥ 0", id="negative"),
        pytest.param('{"We": [true]}', "field 'abstract_inverted_index': the positions of 'We' should be a list of whole numbers ≥ 0", id="boolean"),
    ],
)
def test_a_bad_inverted_index_is_a_malformed_record_at_its_line(capsys, index, message):
    good = '{"id": "https://openalex.org/W1", "title": "Fine", "abstract_inverted_index": {"Fine.": [0]}}'
    Path("works.jsonl").write_text(f'{good}\n{{"id": "https://openalex.org/W2", "abstract_inverted_index": {index}}}\n', encoding="utf-8")
    assert main(["build", "works.jsonl", "-o", "out", "--quiet"]) == ExitCode.MALFORMED_RECORD
    assert capsys.readouterr().err == f"Error: works.jsonl:2: {message}{HINT}\n"


def test_wrong_types_in_authorships_and_venue_are_named():
    Path("w.jsonl").write_text(
        json.dumps({"id": "https://openalex.org/W1", "abstract_inverted_index": {"A.": [0]}, "authorships": {"author": "x"}}) + "\n"
        + json.dumps({"id": "https://openalex.org/W2", "abstract_inverted_index": {"B.": [0]}, "primary_location": {"source": {"display_name": ["x"]}}}) + "\n"
        + json.dumps({"id": "https://openalex.org/W3", "abstract_inverted_index": {"C.": [0]}, "primary_location": {"source": None}}) + "\n",
        encoding="utf-8",
    )
    corpus = read_corpus(["w.jsonl"], skip_invalid=True)
    assert [(p.id, p.venue) for p in corpus.papers] == [("W3", None)]  # a repository work: no source
    assert corpus.skipped == (
        "w.jsonl:1: field 'authorships' should be a list, not an object",
        "w.jsonl:2: field 'venue' should be text, not a list",
    )


def test_records_that_are_not_works_are_left_alone_unless_openalex_is_forced():
    record = {"id": "p1", "display_name": "Shown name", "abstract": "Plain.", "authorships": [{"author": {"display_name": "Ada Lovelace"}}]}
    Path("plain.json").write_text(json.dumps([record]), encoding="utf-8")
    (plain,) = read_corpus(["plain.json"]).papers
    assert (plain.id, plain.title_derived, plain.authors) == ("p1", True, ())  # not a work: display_name and authorships mean nothing
    (forced,) = read_corpus(["plain.json"], format="openalex").papers
    assert (forced.id, forced.title, forced.authors) == ("p1", "Shown name", ("Ada Lovelace",))
