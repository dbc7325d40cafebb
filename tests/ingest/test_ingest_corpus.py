"""Whole corpora: the seeds, the shared 65k-paper corpus, duplicates, and order independence."""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kg.ingest import read_corpus


def test_seeds_are_38_icml_2025_papers_with_derived_titles(seeds):
    corpus = read_corpus([str(seeds)])
    papers = corpus.papers
    assert len(papers) == 38
    assert corpus.duplicates == 0 and corpus.skipped == ()
    assert {(p.venue, p.year) for p in papers} == {("ICML", 2025)}
    assert all(p.title_derived and p.title for p in papers)
    assert [p.id for p in papers] == sorted(p.id for p in papers)
    assert len({p.id for p in papers}) == 38
    # 19 paragraphs per file after the header line.
    assert Counter(Path(p.source.rsplit(":", 1)[0]).name for p in papers) == {
        "000_9d54e1a142e312be.txt": 19,
        "003_9608500f625a23c8.txt": 19,
    }
    by_title = {p.title: p for p in papers}
    # Titles name what the abstract proposes where it names something.
    assert "KAN-AD: Time series anomaly detection (TSAD) underpins real-time monitoring in cloud services and…" in by_title
    assert "SQAOA: Sub-Problem Quantum Alternating Operator Ansatz" in by_title
    assert "MedTok: A multimodal medical code tokenizer" in by_title
    assert "CTRL: A framework for Critic Training via Reinforcement Learning" in by_title
    assert all(len(title) <= 100 for title in by_title)
    # Seed ids are slugs of derived titles: users' links and other stages' tests refer to them,
    # so a change to title derivation that renames them must be deliberate.
    ids = {p.id for p in papers}
    assert {
        "xlstm-7b-a-7-billion-parameter-llm-dde0c7e6",
        "tipr-truncated-q-driven-instant-policy-refinement-a9e810d2",
        "halos-a-hierarchical-asynchronous-optimization-framework-07afb5cc",
    } <= ids


def test_seed_ids_do_not_depend_on_how_the_folder_is_named(seeds):
    by_folder = read_corpus([str(seeds)]).papers
    by_files = read_corpus(sorted(str(f) for f in seeds.glob("*.txt"))[::-1]).papers
    assert [p.id for p in by_folder] == [p.id for p in by_files]


@pytest.mark.slow
def test_shared_corpus_reads_as_it_is(shared):
    shared_corpus = shared("corpus")  # skips when ../shared/corpus is not here
    files = sorted(str(f) for f in shared_corpus.glob("*.jsonl"))
    assert len(files) == 7
    # icml2025_accepted_titles.jsonl has titles but no abstracts: an error by default…
    from kg.errors import EmptyAbstract

    with pytest.raises(EmptyAbstract) as error:
        read_corpus(files)
    assert error.value.message.startswith(f"{shared_corpus}/icml2025_accepted_titles.jsonl:1: empty abstract (title “")
    # …and with skip_invalid all 3,346 of them are listed, everything else is read.
    corpus = read_corpus(files, skip_invalid=True)
    assert len(corpus.skipped) == 3346
    assert all("icml2025_accepted_titles.jsonl:" in entry and ": empty abstract" in entry for entry in corpus.skipped)
    records = 0
    for f in files:
        with open(f, encoding="utf-8") as lines:
            records += sum(1 for line in lines if line.strip())
    assert records == 69_564
    assert len(corpus.papers) + corpus.duplicates + len(corpus.skipped) == records
    assert corpus.duplicates == 354  # 309 arXiv records in two files + 45 papers listed twice under different ids
    assert len({p.id for p in corpus.papers}) == len(corpus.papers)
    by_id = {p.id: p for p in corpus.papers}
    # The published record of a paper listed on arXiv and at COLM speaks for it; the arXiv id is kept.
    falsereject = by_id["colm2025:1w9Hay7tvm"]
    assert (falsereject.venue, falsereject.year, falsereject.arxiv_id) == ("COLM", 2025, "2505.08054")
    assert falsereject.alt_ids == ("arXiv:2505.08054",)
    assert "arXiv:2505.08054" not in by_id


def records(n: int) -> list[dict]:
    """n distinct records, plus exact duplicates (after whitespace) of two of them."""
    base = [{"title": f"Paper {i}", "abstract": f"Abstract number {i} about topic {i % 3}."} for i in range(n)]
    base[0]["id"] = "given-0"
    base[1]["doi"] = "10.1000/one"
    duplicates = [
        {"title": "Paper 0 (preprint)", "abstract": "Abstract  number 0 about\ntopic 0.", "url": "https://arxiv.org/abs/2501.00001"},
        {"abstract": "Abstract number 1 about topic 1.", "authors": ["Someone Else"]},
    ]
    return base + duplicates


@settings(max_examples=25, deadline=None)
@given(st.permutations(records(6)), st.integers(min_value=1, max_value=3), st.booleans())
def test_same_records_in_any_order_and_files_give_the_same_corpus(shuffled, n_files, reverse_inputs):
    """Ids, merged duplicates and output are independent of record order, file split and argument order."""

    def read_split(recs: list[dict], parts: int, reverse: bool):
        with tempfile.TemporaryDirectory() as folder:
            names = []
            for part in range(parts):
                name = Path(folder, f"part{part}.jsonl")
                name.write_text("".join(json.dumps(r) + "\n" for r in recs[part::parts]), encoding="utf-8")
                names.append(str(name))
            corpus = read_corpus(names[::-1] if reverse else names)
            # Sources name temporary files; compare everything else.
            return [(p.id, p.title, p.abstract, p.authors, p.doi, p.arxiv_id, p.url, p.alt_ids, len(p.duplicate_sources)) for p in corpus.papers], corpus.duplicates

    reference = read_split(records(6), 1, False)
    assert read_split(list(shuffled), n_files, reverse_inputs) == reference
    papers, duplicates = reference
    assert duplicates == 2
    assert [p[0] for p in papers][:2] == ["doi:10.1000/one", "given-0"]
    given_0 = papers[1]
    # The record with the given id wins over its preprint duplicate, and takes its arXiv id.
    assert given_0[1:3] == ("Paper 0", "Abstract number 0 about topic 0.")
    assert given_0[5:] == ("2501.00001", "https://arxiv.org/abs/2501.00001", ("arXiv:2501.00001",), 1)
    # The untitled duplicate of paper 1 lends its authors to the titled record.
    assert papers[0][3] == ("Someone Else",)


def test_different_papers_with_the_same_given_id_both_survive(tmp_path):
    (tmp_path / "a.bib").write_text("@article{smith2020, title={A}, abstract={First paper.}}\n", encoding="utf-8")
    (tmp_path / "b.bib").write_text("@article{smith2020, title={B}, abstract={Second paper.}}\n", encoding="utf-8")
    from kg.ingest.ids import content_hash

    papers = read_corpus([str(tmp_path)]).papers
    assert sorted((p.id, p.alt_ids) for p in papers) == sorted(
        [
            (f"smith2020-{content_hash('First paper.')}", ("smith2020",)),
            (f"smith2020-{content_hash('Second paper.')}", ("smith2020",)),
        ]
    )


def test_duplicate_sources_list_every_merged_record(tmp_path):
    line = '{"id": "%s", "title": "T", "abstract": "Same abstract."}\n'
    (tmp_path / "a.jsonl").write_text(line % "b" + line % "a", encoding="utf-8")
    (tmp_path / "b.jsonl").write_text(line % "c", encoding="utf-8")
    corpus = read_corpus([str(tmp_path / "b.jsonl"), str(tmp_path / "a.jsonl")])
    (paper,) = corpus.papers
    assert corpus.duplicates == 2
    assert (paper.id, paper.source, paper.alt_ids) == ("a", f"{tmp_path}/a.jsonl:2", ("b", "c"))
    assert paper.duplicate_sources == (f"{tmp_path}/a.jsonl:1", f"{tmp_path}/b.jsonl:1")


def test_a_file_named_twice_is_read_once(tmp_path):
    (tmp_path / "a.jsonl").write_text('{"id": "x", "abstract": "Once."}\n', encoding="utf-8")
    corpus = read_corpus([str(tmp_path), str(tmp_path / "a.jsonl")])
    assert (len(corpus.papers), corpus.duplicates) == (1, 0)
