"""What the hostile review of issue 36 found in the ingestion fixes (failing tests; src unchanged).

* A JSON page (``{"meta": …, "results": [...]}``) with one record holding NaN is refused whole,
  at line 1: with --skip-invalid its good records are dropped with it ("all 1 records were
  invalid"), where an array of the same records loses only the bad one (item 10).
* @string macros multiply the text kg works on without bound: each value is capped at
  1,000,000 characters, but every entry may name the same macro, and each copy is cleaned in
  full before the field's own limit (10,000 for a title) refuses it. A 1.3 MB file of 3,000
  entries naming one 900,000-character macro took 54 s here (items 4 and 5: huge expansions,
  quadratic paths).
"""

from __future__ import annotations

import json
import time

import pytest

from kg.ingest import read_corpus

RECORDS = [{"id": f"p{i}", "title": f"Paper number {i} on topic {i * 7}", "abstract": f"We propose method{i}, a transformer trained on ImageNet with {i} layers."} for i in range(5)]


def _records_with_nan() -> str:
    body = ",\n".join(json.dumps(r) for r in RECORDS)
    return body.replace('"id": "p2"', '"id": "p2", "score": NaN')


def test_one_nan_record_of_a_page_costs_only_that_record(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "page.json").write_text('{"meta": {"count": 5},\n "results": [\n' + _records_with_nan() + "\n]}\n", encoding="utf-8")
    (tmp_path / "array.json").write_text("[\n" + _records_with_nan() + "\n]\n", encoding="utf-8")
    array = read_corpus(["array.json"], skip_invalid=True)
    assert [p.id for p in array.papers] == ["p0", "p1", "p3", "p4"] and array.skipped == ("array.json:4: not valid JSON: NaN is not a JSON value",)
    page = read_corpus(["page.json"], skip_invalid=True)
    assert [p.id for p in page.papers] == ["p0", "p1", "p3", "p4"]
    assert page.skipped == ("page.json:5: not valid JSON: NaN is not a JSON value",)


def test_a_macro_named_by_every_entry_costs_time_in_proportion_to_the_file(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    entry = "@article{{k{i}, title = big, abstract = {{We propose a transformer trained on ImageNet.}}, year = 2020}}\n"
    text = "@string{big = {" + "word " * 180_000 + "}}\n" + "".join(entry.format(i=i) for i in range(1000))
    text += "@article{ok, title = {Fine}, abstract = {We propose a transformer trained on ImageNet.}, year = 2020}\n"
    (tmp_path / "refs.bib").write_text(text, encoding="utf-8")  # 0.96 MB
    started = time.monotonic()
    corpus = read_corpus(["refs.bib"], skip_invalid=True)
    assert [p.id for p in corpus.papers] == ["ok"] and len(corpus.skipped) == 1000
    assert time.monotonic() - started < 5  # 18 s here: 1,000 copies of 900,000 characters cleaned


SLOPPY = {
    "an unquoted DOI": ("doi = 10.1000/xyz123", "doi", "10.1000/xyz123"),
    "an unquoted arXiv id": ("eprint = 2101.00001, archiveprefix = arXiv", "arxiv_id", "2101.00001"),
    "an unquoted URL": ("url = https://example.org/x", "url", "https://example.org/x"),
    "an escaped quote in a quoted title": ('title = "M\\"uller\'s method for attention"', "title", "Müller's method for attention"),
}


@pytest.mark.parametrize(("field", "attribute", "value"), SLOPPY.values(), ids=SLOPPY.keys())
def test_a_value_bibtexparser_read_before_still_costs_no_paper(tmp_path, monkeypatch, field: str, attribute: str, value: str) -> None:
    """Before the fix these entries were read (bibtexparser took an unquoted word, and `\\"`
    inside "…", as text); now each is a malformed record, so the paper and its abstract are lost
    (exit 6, or skipped), though only a DOI, URL or arXiv id was written loosely."""
    monkeypatch.chdir(tmp_path)
    title = "" if attribute == "title" else "  title = {A study of attention},\n"
    entry = "@article{k1,\n" + title + "  abstract = {We propose a transformer trained on ImageNet.},\n  " + field + "\n}\n"
    (tmp_path / "refs.bib").write_text(entry, encoding="utf-8")
    corpus = read_corpus(["refs.bib"])
    assert [p.id for p in corpus.papers] == ["k1"]
    assert getattr(corpus.papers[0], attribute) == value
