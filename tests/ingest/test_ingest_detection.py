"""Formats recognised by content (a .txt or an unknown name holding RIS, BibTeX, JSON or a table),
the LooksStructured warning for text that still looks structured, and --format forcing one format."""

from __future__ import annotations

import io
import warnings
from pathlib import Path

import pytest

from kg.cli import main
from kg.cli.common import INPUT_FORMATS
from kg.errors import ExitCode, LooksStructured
from kg.ingest import FORMATS, read_corpus

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "formats"
RIS = "TY  - JOUR\nTI  - A RIS record\nAU  - Doe, Jane\nAB  - An abstract in RIS.\nER  - \n"


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def write(name: str, text: str) -> str:
    Path(name).write_bytes(text.encode("utf-8"))
    return name


def quietly(*inputs: str, **options):
    """read_corpus, failing on any LooksStructured warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", LooksStructured)
        return read_corpus(list(inputs), **options)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        pytest.param(RIS, ("A RIS record", "An abstract in RIS.", ("Jane Doe",)), id="ris"),
        pytest.param("@article{k1,\n  title = {A BibTeX entry},\n  abstract = {An abstract in BibTeX.}\n}\n", ("A BibTeX entry", "An abstract in BibTeX.", ()), id="bibtex"),
        pytest.param('[\n  {"title": "A JSON array", "abstract": "An abstract in JSON."}\n]\n', ("A JSON array", "An abstract in JSON.", ()), id="json"),
        pytest.param('{"title": "A JSON line", "abstract": "An abstract in JSON Lines."}\n', ("A JSON line", "An abstract in JSON Lines.", ()), id="jsonl"),
        pytest.param("title,abstract,authors\nA CSV row,An abstract in CSV.,Jane Doe\n", ("A CSV row", "An abstract in CSV.", ("Jane Doe",)), id="csv"),
        pytest.param("title\tabstract\nA TSV row\tAn abstract in TSV.\n", ("A TSV row", "An abstract in TSV.", ()), id="tsv"),
    ],
)
@pytest.mark.parametrize("name", ["refs.txt", "refs", "refs.export"])
def test_structured_content_is_read_as_its_format_whatever_the_name(name, content, expected):
    write(name, content)
    (paper,) = quietly(name).papers
    assert (paper.title, paper.abstract, paper.authors) == expected
    assert paper.source == f"{name}:{2 if content.startswith('[') or content.startswith('title') else 1}"


def test_zotero_ris_saved_as_txt_is_read_as_ris():
    Path("My Library.txt").write_bytes((FIXTURES / "zotero.ris").read_bytes())  # BOM and CRLF too
    papers = quietly("My Library.txt").papers
    assert [(p.id, p.source) for p in papers][0] == ("doi:10.18653/v1/n19-1423", "My Library.txt:1")
    assert len(papers) == 2


def test_seed_text_stays_seed_text_without_a_warning(seeds):
    corpus = quietly(str(seeds))
    assert len(corpus.papers) == 38


@pytest.mark.parametrize(
    "header",
    ["Text, code and data 2024", "[Reading list] ICML 2025", "{draft} NeurIPS 2024", "TY: notes"],
)
def test_a_seed_header_that_resembles_a_format_is_still_a_header(header):
    write("seed.txt", f"{header}\n\nWe propose a fine method.\n\nWe study a hard problem.\n")
    papers = quietly("seed.txt").papers
    assert sorted(p.abstract for p in papers) == ["We propose a fine method.", "We study a hard problem."]


@pytest.mark.parametrize(
    ("content", "looks", "fmt", "extension"),
    [
        pytest.param("My references\n\n" + RIS, "RIS (TY  - … ER  - records)", "ris", ".ris", id="ris-after-a-header"),
        pytest.param(
            "Exported items\n\n@article{k,\n  title = {T},\n  abstract = {A.}\n}\n", "BibTeX (@type{key, …} entries)", "bibtex", ".bib", id="bibtex-after-a-header"
        ),
        pytest.param('Dump\n\n{"title": "T", "abstract": "A."}\n', "JSON Lines (one object per line)", "jsonl", ".jsonl", id="json-after-a-header"),
        pytest.param("Title,Authors,Year\nA,B,2020\nC,D,2021\n", "a table (3 lines in a row with 2 ','s each)", "csv", ".csv", id="table-without-abstract-column"),
        pytest.param("Title\tYear\nA\t2020\nC\t2021\n", "a table (3 lines in a row with 1 tabs each)", "tsv", ".tsv", id="tab-table"),
    ],
)
def test_text_that_looks_structured_is_read_as_text_with_a_warning(content, looks, fmt, extension):
    write("notes.txt", content)
    with pytest.warns(LooksStructured) as caught:
        read_corpus(["notes.txt"])
    (warning,) = [w.message for w in caught if isinstance(w.message, LooksStructured)]
    assert str(warning) == f"notes.txt: read as seed text (an abstract per paragraph), but it looks like {looks}; if it is, give it the extension {extension}"
    assert warning.format == fmt


def test_an_unknown_name_read_as_text_warns_too():
    write("notes", "My references\n\n" + RIS)
    with pytest.warns(LooksStructured, match=r"^notes: read as seed text .* looks like RIS"):
        read_corpus(["notes"])


def test_the_cli_shows_the_warning_with_the_flag_that_helps(capsys):
    write("a.txt", "My references\n\n" + RIS)
    write("b.jsonl", "{broken\n")  # stops the build after a.txt is read, before extraction
    assert main(["build", "a.txt", "b.jsonl", "-o", "out", "--quiet"]) == ExitCode.MALFORMED_RECORD
    assert capsys.readouterr().err.splitlines() == [
        "Warning: a.txt: read as seed text (an abstract per paragraph), but it looks like RIS (TY  - … ER  - records); "
        "if it is, give it the extension .ris or read it with --format ris",
        "Error: b.jsonl:1: not valid JSON: Expecting property name enclosed in double quotes at column 2 (--skip-invalid skips invalid records)",
    ]
    assert main(["extract", "a.txt", "b.jsonl"]) == ExitCode.MALFORMED_RECORD
    assert "or read it with --input-format ris\n" in capsys.readouterr().err  # extract's --format is its output's


def test_format_forces_every_input_whatever_its_name_and_content():
    write("refs.json", RIS)  # RIS under a JSON name
    write("more.txt", "Header line\n\n" + RIS.replace("A RIS record", "Another").replace("in RIS", "in RIS, again"))
    with pytest.raises(Exception, match="refs.json:1: not valid JSON"):
        read_corpus(["refs.json"])
    corpus = quietly("refs.json", "more.txt", format="ris", skip_invalid=True)
    assert sorted((p.title, p.source) for p in corpus.papers) == [("A RIS record", "refs.json:1"), ("Another", "more.txt:3")]
    assert corpus.skipped == ("more.txt:1: text outside a RIS record (a record starts with 'TY  - '): 'Header line'",)


def test_format_text_reads_a_structured_file_as_text_and_does_not_warn():
    write("refs.ris", RIS)
    (paper,) = quietly("refs.ris", format="text").papers
    assert paper.abstract == " ".join(RIS.split())  # the raw tag lines, whitespace collapsed: asked for


def test_format_applies_to_stdin():
    corpus = read_corpus(["-"], stdin=io.StringIO(RIS), format="ris")
    assert [(p.title, p.source) for p in corpus.papers] == [("A RIS record", "<stdin>:1")]


def test_format_through_the_cli(capsys):
    write("refs.json", RIS.replace("AB  - An abstract in RIS.\n", ""))
    assert main(["build", "refs.json", "--format", "ris", "-o", "out", "--quiet"]) == ExitCode.EMPTY_ABSTRACT
    assert capsys.readouterr().err == "Error: refs.json:1: no abstract (no AB or N2 tag) (title “A RIS record”) (--skip-invalid skips invalid records)\n"
    assert main(["build", "refs.json", "--input-format", "ris", "-o", "out", "--quiet"]) == ExitCode.EMPTY_ABSTRACT
    assert main(["extract", "refs.json", "--input-format", "ris"]) == ExitCode.EMPTY_ABSTRACT
    assert "refs.json:1: no abstract (no AB or N2 tag)" in capsys.readouterr().err
    assert main(["build", "refs.json", "--format", "endnote", "-o", "out"]) == ExitCode.USAGE
    assert "Invalid value for '--format'" in capsys.readouterr().err


def test_the_cli_offers_every_format_read_corpus_takes(capsys):
    assert INPUT_FORMATS == FORMATS == ("text", "jsonl", "json", "csv", "tsv", "bibtex", "ris", "openalex")
    with pytest.raises(ValueError, match="format must be one of text, jsonl, json, csv, tsv, bibtex, ris, openalex, not 'xml'"):
        read_corpus(["-"], stdin=io.StringIO(""), format="xml")  # type: ignore[arg-type]
    main(["build", "--help"])
    assert "--format, --input-format FORMAT" in capsys.readouterr().out
    main(["extract", "--help"])
    assert "--input-format FORMAT" in capsys.readouterr().out
