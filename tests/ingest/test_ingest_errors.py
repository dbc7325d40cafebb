"""Every bad-input path through the real CLI: exit code, the one `Error:` line, no traceback."""

from __future__ import annotations

import io
import json

import pytest

from kg.cli import main
from kg.errors import ExitCode, MalformedRecord
from kg.ingest import read_corpus

HINT = " (--skip-invalid skips invalid records)"


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def write(name: str, content: str | bytes) -> str:
    from pathlib import Path

    path = Path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return name


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["build", *args, "-o", "out", "--quiet"])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.out, captured.err


GOOD = '{"id": "ok", "title": "Fine", "abstract": "A fine abstract."}\n'

LATIN1_LINE = '{"id": "x", "title": "Caf\xe9", "abstract": "a"}\n'.encode("latin-1")
LATIN1_OFFSET = len(GOOD) + LATIN1_LINE.index(0xE9)  # byte offset of "é" in Latin-1 in the file

CASES = [
    pytest.param({}, ["missing.jsonl"], ExitCode.FILE_NOT_FOUND, "missing.jsonl: no such file or folder", id="missing-file"),
    pytest.param(
        {"paper.pdf": b"%PDF-1.7\n\xe2\xe3\xcf\xd3 binary"},
        ["paper.pdf"],
        ExitCode.UNSUPPORTED_FORMAT,
        "paper.pdf: this is a PDF, not a corpus file (kg reads .bib, .bibtex, .csv, .json, .jsonl, .jsonlines, .ndjson, .ris, .tab, .tsv, .txt)",
        id="pdf",
    ),
    pytest.param(
        {"notes.md": "just one line of notes\n"},
        ["notes.md"],
        ExitCode.UNSUPPORTED_FORMAT,
        "notes.md: cannot tell the format (kg reads .bib, .bibtex, .csv, .json, .jsonl, .jsonlines, .ndjson, .ris, .tab, .tsv, .txt; "
        "a seed text file needs a header line, then abstracts separated by blank lines)",
        id="unrecognisable",
    ),
    pytest.param(
        {"latin1.jsonl": GOOD.encode() + LATIN1_LINE},
        ["latin1.jsonl"],
        ExitCode.DECODE_ERROR,
        f"latin1.jsonl:2: not valid UTF-8: byte 0xe9 at byte offset {LATIN1_OFFSET}; save the file as UTF-8",
        id="undecodable",
    ),
    pytest.param(
        {"bad.jsonl": GOOD + '{"id": "x", "abstract": "no closing brace"\n'},
        ["bad.jsonl"],
        ExitCode.MALFORMED_RECORD,
        "bad.jsonl:2: not valid JSON: Expecting ',' delimiter at column 43" + HINT,
        id="malformed-json-line",
    ),
    pytest.param(
        {"list.jsonl": GOOD + '["not", "an", "object"]\n'},
        ["list.jsonl"],
        ExitCode.MALFORMED_RECORD,
        "list.jsonl:2: expected a JSON object, found an array" + HINT,
        id="json-line-not-object",
    ),
    pytest.param(
        {"types.jsonl": '{"title": ["a", "list"], "abstract": "text"}\n'},
        ["types.jsonl"],
        ExitCode.MALFORMED_RECORD,
        "types.jsonl:1: field 'title' should be text, not a list" + HINT,
        id="wrong-field-type",
    ),
    pytest.param(
        {"array.json": '[\n  {"abstract": "one"},\n  {"abstract": "two",}\n]\n'},
        ["array.json"],
        ExitCode.MALFORMED_RECORD,
        "array.json:3: not valid JSON: Expecting property name enclosed in double quotes at column 22",
        id="malformed-json-array",
    ),
    pytest.param(
        {"rows.csv": "title,abstract\nA,fine\nB,has,an extra field\n"},
        ["rows.csv"],
        ExitCode.MALFORMED_RECORD,
        "rows.csv:3: row has 3 fields but the header has 2 (an unquoted delimiter in a value?)" + HINT,
        id="csv-row-width",
    ),
    pytest.param(
        {"refs.bib": "@article{broken,\n  title = {Unclosed\n@article{next, title={B}, abstract={b}}\n"},
        ["refs.bib"],
        ExitCode.MALFORMED_RECORD,
        "refs.bib:1: bad BibTeX entry: Unexpected block start: `@article`. Was still looking for field-value closing `}`" + HINT,
        id="bibtex-broken-entry",
    ),
    pytest.param(
        {"no_abstract.csv": "Title,Authors\nA paper,Someone\n"},
        ["no_abstract.csv"],
        ExitCode.MISSING_COLUMN,
        "no_abstract.csv:1: no abstract column (expected one of: abstract, summary, text, abstract_note); the header has: Title, Authors",
        id="csv-without-abstract-column",
    ),
    pytest.param(
        {"empty.jsonl": GOOD + '{"id": "e", "title": "Only a title", "abstract": "  "}\n'},
        ["empty.jsonl"],
        ExitCode.EMPTY_ABSTRACT,
        "empty.jsonl:2: empty abstract (title “Only a title”)" + HINT,
        id="empty-abstract",
    ),
    pytest.param(
        {"noabs.jsonl": '{"id": "n", "title": "T"}\n'},
        ["noabs.jsonl"],
        ExitCode.EMPTY_ABSTRACT,
        "noabs.jsonl:1: no abstract (expected a field named abstract, summary, text, abstract_note) (title “T”)" + HINT,
        id="no-abstract-field",
    ),
    pytest.param(
        {"refs.bib": "@article{a1,\n  title = {No Abstract Here},\n  year = 2020\n}\n"},
        ["refs.bib"],
        ExitCode.EMPTY_ABSTRACT,
        "refs.bib:1: no abstract (expected a field named abstract, summary, text, abstract_note) (title “No Abstract Here”)" + HINT,
        id="bibtex-without-abstract",
    ),
    pytest.param(
        {"empty.jsonl": "\n\n"},
        ["empty.jsonl"],
        ExitCode.EMPTY_CORPUS,
        "no papers read from empty.jsonl: the input holds no records",
        id="empty-file",
    ),
    pytest.param(
        {"docs/README.md": "# nothing here\n"},
        ["docs"],
        ExitCode.EMPTY_CORPUS,
        "no corpus files in docs (kg reads files ending in .txt, .jsonl, .json, .csv, .tsv, .bib, .ris)",
        id="folder-without-corpus-files",
    ),
]


@pytest.mark.parametrize(("files", "args", "code", "message"), CASES)
def test_bad_input_gives_one_error_line_and_its_exit_code(capsys, files, args, code, message):
    for name, content in files.items():
        write(name, content)
    status, out, err = run(capsys, *args)
    assert (status, err) == (code, f"Error: {message}\n")
    assert out == ""


def test_skip_invalid_goes_on_and_lists_what_it_skipped():
    write(
        "mixed.jsonl",
        GOOD
        + '{"id": "x", "abstract": "no closing brace"\n'
        + '{"id": "e", "title": "Only a title", "abstract": ""}\n'
        + '{"id": "ok2", "title": "Also fine", "abstract": "Another abstract."}\n',
    )
    write("bad.csv", "title,abstract\nA,fine one\nB,too,many\n")
    corpus = read_corpus(["mixed.jsonl", "bad.csv"], skip_invalid=True)
    assert [p.id for p in corpus.papers] == [corpus.papers[0].id, "ok", "ok2"]
    assert corpus.papers[0].source == "bad.csv:2"
    assert corpus.skipped == (
        "bad.csv:3: row has 3 fields but the header has 2 (an unquoted delimiter in a value?)",
        "mixed.jsonl:2: not valid JSON: Expecting ',' delimiter at column 43",
        "mixed.jsonl:3: empty abstract (title “Only a title”)",
    )


def test_skip_invalid_skips_only_the_records_with_undecodable_bytes():
    write("latin1.jsonl", GOOD.encode() + '{"id": "x", "title": "Caf\xe9", "abstract": "a"}\n'.encode("latin-1"))
    corpus = read_corpus(["latin1.jsonl"], skip_invalid=True)
    assert [p.id for p in corpus.papers] == ["ok"]
    assert corpus.skipped == ("latin1.jsonl:2: not valid UTF-8 (undecodable bytes in this record)",)


def test_skip_invalid_still_stops_on_a_missing_file(capsys):
    write("good.jsonl", GOOD)
    status, _, err = run(capsys, "good.jsonl", "missing.jsonl", "--skip-invalid")
    assert (status, err) == (ExitCode.FILE_NOT_FOUND, "Error: missing.jsonl: no such file or folder\n")


def test_all_records_invalid_is_an_empty_corpus(capsys):
    write("titles.jsonl", '{"title": "A"}\n{"title": "B", "abstract": ""}\n')
    status, _, err = run(capsys, "titles.jsonl", "--skip-invalid")
    assert (status, err) == (ExitCode.EMPTY_CORPUS, "Error: no papers read from titles.jsonl: all 2 records were invalid and skipped\n")


def test_bibtex_duplicate_key_is_a_malformed_record():
    write("refs.bib", "@article{k, title={A}, abstract={First.}}\n@article{k, title={B}, abstract={Second.}}\n")
    corpus = read_corpus(["refs.bib"], skip_invalid=True)
    assert [p.abstract for p in corpus.papers] == ["First."]
    assert corpus.skipped == ("refs.bib:2: duplicate BibTeX key 'k'",)


def test_undecodable_stdin_names_stdin(capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b'{"abstract": "caf\xe9"}\n'), encoding="utf-8"))
    status, _, err = run(capsys, "-")
    assert (status, err) == (ExitCode.DECODE_ERROR, "Error: <stdin>:1: not valid UTF-8: byte 0xe9 at byte offset 17; save the file as UTF-8\n")


def test_stdin_text_stream(capsys):
    corpus = read_corpus(["-"], stdin=io.StringIO(GOOD))
    assert [(p.id, p.source) for p in corpus.papers] == [("ok", "<stdin>:1")]


def test_dash_with_a_terminal_on_stdin_does_not_hang(capsys, monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr("sys.stdin", Terminal())
    status, _, err = run(capsys, "-")
    assert (status, err) == (
        ExitCode.FILE_NOT_FOUND,
        "Error: <stdin>: '-' reads JSON Lines from standard input, but nothing is piped in\n",
    )


def test_an_id_must_be_text_or_a_number():
    write("ids.jsonl", '{"id": {"nested": 1}, "abstract": "A."}\n{"id": 7, "abstract": "B."}\n')
    corpus = read_corpus(["ids.jsonl"], skip_invalid=True)
    assert [p.id for p in corpus.papers] == ["7"]
    assert corpus.skipped == ("ids.jsonl:1: field 'id' should be text, not an object",)


# -- numbers JSON has not (issue 36, item 10) ---------------------------------------------------


@pytest.mark.parametrize(("value", "reason"), [
    ("NaN", "not valid JSON: NaN is not a JSON value"),
    ("Infinity", "not valid JSON: Infinity is not a JSON value"),
    ("-Infinity", "not valid JSON: -Infinity is not a JSON value"),
    ("1e400", "not usable JSON: the number 1e400 is too large"),
    ("-1.5E+999", "not usable JSON: the number -1.5E+999 is too large"),
])
@pytest.mark.parametrize("field", ["id", "year", "title"])
def test_numbers_json_has_not_are_malformed_records(capsys, value: str, reason: str, field: str) -> None:
    """`"id": NaN` became the id "nan", `1e400` "inf", and `"year": NaN` silently no year."""
    record = {"id": '"x"', "title": '"T"', "year": "2020", "abstract": '"We propose a method."', field: value}
    write("c.jsonl", GOOD + "{" + ", ".join(f'"{k}": {v}' for k, v in record.items()) + "}\n")
    status, _, err = run(capsys, "c.jsonl")
    assert (status, err) == (ExitCode.MALFORMED_RECORD, f"Error: c.jsonl:2: {reason}{HINT}\n")
    corpus = read_corpus(["c.jsonl"], skip_invalid=True)
    assert [p.id for p in corpus.papers] == ["ok"] and corpus.skipped == (f"c.jsonl:2: {reason}",)


def test_a_number_json_has_not_in_a_json_array_is_one_skippable_record() -> None:
    write("a.json", '[\n{"id": "a", "title": "A", "abstract": "We propose a method."},\n{"id": "b",\n "year": NaN, "abstract": "We propose."},\n'
          '{"id": "c", "title": "C", "abstract": "We train a model."}\n]\n')
    with pytest.raises(MalformedRecord, match=r"^a\.json:3: not valid JSON: NaN is not a JSON value$"):
        read_corpus(["a.json"])
    corpus = read_corpus(["a.json"], skip_invalid=True)
    assert [p.id for p in corpus.papers] == ["a", "c"] and corpus.skipped == ("a.json:3: not valid JSON: NaN is not a JSON value",)


PAGE_RECORDS = [{"id": f"p{i}", "title": f"Paper number {i} on topic {i * 7}", "abstract": f"We propose method{i}, a transformer trained on ImageNet with {i} layers."} for i in range(5)]


def _records_with_nan() -> str:
    body = ",\n".join(json.dumps(r) for r in PAGE_RECORDS)
    return body.replace('"id": "p2"', '"id": "p2", "score": NaN')


def test_one_nan_record_of_a_page_costs_only_that_record() -> None:
    """Found by the hostile review of issue 36: a page ({"meta": …, "results": [...]}) with one
    NaN record was refused whole, at line 1, and --skip-invalid dropped its good records with it,
    where an array of the same records lost only the bad one."""
    write("page.json", '{"meta": {"count": 5},\n "results": [\n' + _records_with_nan() + "\n]}\n")
    write("array.json", "[\n" + _records_with_nan() + "\n]\n")
    array = read_corpus(["array.json"], skip_invalid=True)
    assert [p.id for p in array.papers] == ["p0", "p1", "p3", "p4"] and array.skipped == ("array.json:4: not valid JSON: NaN is not a JSON value",)
    page = read_corpus(["page.json"], skip_invalid=True)
    assert [p.id for p in page.papers] == ["p0", "p1", "p3", "p4"]
    assert page.skipped == ("page.json:5: not valid JSON: NaN is not a JSON value",)
    with pytest.raises(MalformedRecord, match=r"^page\.json:5: not valid JSON: NaN is not a JSON value$"):
        read_corpus(["page.json"])


def test_one_nan_record_of_a_page_on_a_json_lines_line_costs_only_that_record() -> None:
    page = json.dumps({"meta": {"count": 5}, "results": PAGE_RECORDS}).replace('"id": "p2"', '"id": "p2", "year": NaN')
    write("pages.jsonl", json.dumps({"meta": {}, "results": [{"id": "q", "title": "Another paper", "abstract": "We train a graph network on citation data."}]}) + "\n \t" + page + "\n")
    corpus = read_corpus(["pages.jsonl"], skip_invalid=True)
    assert [p.id for p in corpus.papers] == ["p0", "p1", "p3", "p4", "q"] and corpus.skipped == ("pages.jsonl:2: not valid JSON: NaN is not a JSON value",)


def test_a_number_json_has_not_in_a_pages_meta_costs_nothing() -> None:
    """kg reads a page's results only; its meta may say what it likes."""
    write("page.json", '{"meta": {"score": Infinity},\n "results": [\n' + ",\n".join(json.dumps(r) for r in PAGE_RECORDS) + "\n]}\n")
    assert [p.id for p in read_corpus(["page.json"]).papers] == ["p0", "p1", "p2", "p3", "p4"]


def test_a_string_that_reads_nan_is_still_text() -> None:
    write("s.jsonl", '{"id": "NaN", "title": "Infinity", "abstract": "We propose 1e400 NaN-free methods."}\n')
    assert [(p.id, p.title) for p in read_corpus(["s.jsonl"]).papers] == [("NaN", "Infinity")]
