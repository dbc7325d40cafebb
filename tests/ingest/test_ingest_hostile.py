"""Hostile input through the real CLI: each class gives its documented exit code and one
`Error:` line naming the file (and line), and leaves a previous build in ``out/`` untouched.
With ``--skip-invalid`` the bad record, file or folder is skipped and counted instead."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
from pathlib import Path

import pytest

from kg.cli import main
from kg.errors import ExitCode
from kg.ingest import read_corpus
from kg.ingest.records import MAX_ABSTRACT_CHARS, MAX_FIELD_CHARS, MAX_SYMBOL_RUN, MAX_WORD_CHARS

HINT = " (--skip-invalid skips invalid records)"
GOOD = json.dumps({"id": "ok", "title": "Fine", "abstract": "We train ResNet on ImageNet."}) + "\n"


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="module")
def built_once(tmp_path_factory) -> Path:
    """A good build of one paper in FOLDER/out, made once for the module."""
    folder = tmp_path_factory.mktemp("previous")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        Path("previous.jsonl").write_text(GOOD, encoding="utf-8")
        assert build("previous.jsonl") == 0
    return folder


@pytest.fixture
def previous_build(built_once) -> dict[str, tuple[int, bytes]]:
    """A good build in out/ (a copy of `built_once`, links kept); returns what every file in
    it held (checked unchanged later)."""
    shutil.copytree(built_once / "out", "out", symlinks=True)
    shutil.copy(built_once / "previous.jsonl", "previous.jsonl")
    return snapshot()


def snapshot() -> dict[str, tuple[int, bytes]]:
    return {str(p): (p.stat().st_mtime_ns, p.read_bytes()) for p in sorted(Path("out").rglob("*")) if p.is_file()}  # the cache is not in out/ (KG_CACHE_DIR)


def build(*args: str) -> int:
    return main(["build", *args, "-o", "out", "--quiet", "--model", "none"])


def put(name: str, content: str | bytes) -> str:
    path = Path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return name


def refused(capsys, previous: dict, args: list[str], code: ExitCode, message: str) -> None:
    status = build(*args)
    err = capsys.readouterr().err
    assert (status, err) == (code, f"Error: {message}\n")
    assert snapshot() == previous  # nothing written, not even papers.jsonl


def line(**fields: object) -> str:
    return json.dumps(fields) + "\n"


RECORD_CASES = [
    pytest.param(
        "c.jsonl", GOOD + '{"id": "s", "abstract": "We use BERT \\ud800 here."}\n', ExitCode.DECODE_ERROR,
        "c.jsonl:2: field 'abstract' holds a lone surrogate \\ud800, which is not a character "
        "(a JSON \\u escape of a surrogate must pair a high one with a low one)" + HINT,
        id="lone-surrogate-escape",
    ),
    pytest.param(
        "c.jsonl", GOOD + '{"abstract": "x", "authors": [{"name": "A\\udfff"}]}\n', ExitCode.DECODE_ERROR,
        "c.jsonl:2: field 'authors' holds a lone surrogate \\udfff, which is not a character "
        "(a JSON \\u escape of a surrogate must pair a high one with a low one)" + HINT,
        id="lone-surrogate-in-an-author",
    ),
    pytest.param(
        "c.jsonl", GOOD.encode() + b'{"abstract": "raw \xed\xa0\x80 surrogate bytes"}\n', ExitCode.DECODE_ERROR,
        f"c.jsonl:2: not valid UTF-8: byte 0xed at byte offset {len(GOOD) + 18}; save the file as UTF-8",
        id="surrogate-as-raw-bytes",
    ),
    pytest.param(
        "c.jsonl", GOOD + line(abstract="word " * (MAX_ABSTRACT_CHARS // 5 + 1)), ExitCode.RECORD_TOO_LARGE,
        f"c.jsonl:2: field 'abstract' has {MAX_ABSTRACT_CHARS + 4:,} characters, over the limit of {MAX_ABSTRACT_CHARS:,}" + HINT,
        id="abstract-over-the-limit",
    ),
    pytest.param(
        "c.jsonl", GOOD + line(abstract="a " + "x" * 1_000_001), ExitCode.RECORD_TOO_LARGE,
        f"c.jsonl:2: field 'abstract' has 1,000,003 characters, over the limit of {MAX_ABSTRACT_CHARS:,}" + HINT,
        id="abstract-over-spacy-limit",
    ),
    pytest.param(
        "c.jsonl", GOOD + line(abstract="We see " + "a-" * 300), ExitCode.RECORD_TOO_LARGE,
        f"c.jsonl:2: field 'abstract' has a word of 600 characters (no space), over the limit of {MAX_WORD_CHARS:,}" + HINT,
        id="huge-word",
    ),
    pytest.param(
        "c.jsonl", GOOD + line(abstract="We see " + "<(" * 30 + " here."), ExitCode.RECORD_TOO_LARGE,
        f"c.jsonl:2: field 'abstract' has a run of 60 symbols (no letter, digit or space), over the limit of {MAX_SYMBOL_RUN}" + HINT,
        id="symbol-run",
    ),
    pytest.param(
        "c.jsonl", GOOD + line(title="t " * MAX_FIELD_CHARS, abstract="fine"), ExitCode.RECORD_TOO_LARGE,
        f"c.jsonl:2: field 'title' has {2 * MAX_FIELD_CHARS - 1:,} characters, over the limit of {MAX_FIELD_CHARS:,}" + HINT,
        id="huge-title",
    ),
    pytest.param(
        "c.jsonl", GOOD + line(abstract="fine", authors=["x" * (MAX_FIELD_CHARS + 1)]), ExitCode.RECORD_TOO_LARGE,
        f"c.jsonl:2: an author has {MAX_FIELD_CHARS + 1:,} characters, over the limit of {MAX_FIELD_CHARS:,}" + HINT,
        id="huge-author",
    ),
    pytest.param(
        "c.csv", "title,abstract\nA," + "w " * 70_000 + "\n", ExitCode.RECORD_TOO_LARGE,
        f"c.csv:2: a field has over 131,072 characters (the limit for an abstract is {MAX_ABSTRACT_CHARS:,})",
        id="csv-field-over-csv-limit",
    ),
    pytest.param("c.jsonl", GOOD + "[" * 100_000 + "\n", ExitCode.MALFORMED_RECORD, "c.jsonl:2: not usable JSON: values nested too deeply" + HINT, id="deep-json-line"),
    pytest.param("c.json", "[" * 100_000, ExitCode.MALFORMED_RECORD, "c.json:1: not usable JSON: values nested too deeply", id="deep-json-array"),
    pytest.param(
        "c.jsonl", GOOD + '{"abstract": "x", "year": ' + "9" * 5000 + "}\n", ExitCode.MALFORMED_RECORD,
        "c.jsonl:2: not usable JSON: a number with too many digits" + HINT,
        id="number-with-5000-digits",
    ),
    pytest.param("c.jsonl", GOOD + '{"abstract": "a\x00b"}\n', ExitCode.MALFORMED_RECORD, "c.jsonl:2: not valid JSON: Invalid control character at column 16" + HINT, id="raw-nul-in-json"),
    pytest.param(
        "c.csv", b"title,abstract\nCaf\xe9,fine\n", ExitCode.DECODE_ERROR,
        "c.csv:2: not valid UTF-8: byte 0xe9 at byte offset 18; save the file as UTF-8", id="latin1-csv",
    ),
    pytest.param(
        "c.bib", b"@article{a, title={Caf\xe9}, abstract={x}}\n", ExitCode.DECODE_ERROR,
        "c.bib:1: not valid UTF-8: byte 0xe9 at byte offset 22; save the file as UTF-8", id="latin1-bibtex",
    ),
    pytest.param("c.jsonl", b"", ExitCode.EMPTY_CORPUS, "no papers read from c.jsonl: the input holds no records", id="empty-file"),
]


@pytest.mark.parametrize(("name", "content", "code", "message"), RECORD_CASES)
def test_hostile_records_are_refused_before_anything_is_written(capsys, previous_build, name, content, code, message):
    refused(capsys, previous_build, [put(name, content)], code, message)


def test_skip_invalid_skips_and_counts_surrogates_and_over_long_records(capsys):
    put("c.jsonl", GOOD + '{"id": "s", "abstract": "BERT \\ud800"}\n' + line(abstract="w " * MAX_ABSTRACT_CHARS))
    corpus = read_corpus(["c.jsonl"], skip_invalid=True)
    assert [p.id for p in corpus.papers] == ["ok"]
    assert [entry.split(":", 2)[1] for entry in corpus.skipped] == ["2", "3"]
    assert build("c.jsonl", "--skip-invalid") == 0
    assert capsys.readouterr().err == "Warning: skipped 2 invalid records (run without --quiet to see where)\n"


def test_harmless_oddities_are_read(capsys):
    """NUL and other control characters in CSV, BibTeX and text, BOMs (at the start, in the middle
    of concatenated files, UTF-16/UTF-32), duplicate ids with different abstracts: all read."""
    put("nul.csv", "title,abstract\nA,fine \x00 text one\n")
    put("nul.bib", "@article{b, title={B}, abstract={x \x00 text two}}\n")
    put("nul.txt", "Reading list\n\nAn abstract \x00\x07 with NUL and BEL.\n")
    put("bom.jsonl", "\ufeff" + line(abstract="bom one") + "\ufeff" + line(abstract="bom two"))
    put("u32.jsonl", line(abstract="utf-32 text").encode("utf-32"))
    put("u16.jsonl", line(abstract="utf-16 text").encode("utf-16"))
    put("dup.jsonl", line(id="x", abstract="One.") + line(id="x", abstract="Two."))
    corpus = read_corpus(["."])
    assert sorted(p.abstract for p in corpus.papers) == [
        "An abstract with NUL and BEL.", "One.", "Two.", "bom one", "bom two", "fine text one", "utf-16 text", "utf-32 text", "x text two",
    ]
    assert sorted(p.id for p in corpus.papers if p.abstract in ("One.", "Two."))[0].startswith("x-")


# ---- files and folders ---------------------------------------------------------------------


def test_a_symlink_loop_in_a_folder(capsys, previous_build):
    put("in/good.jsonl", GOOD)
    os.symlink("b.jsonl", "in/a.jsonl")
    os.symlink("a.jsonl", "in/b.jsonl")
    refused(capsys, previous_build, ["in"], ExitCode.INPUT_UNREADABLE, "in/a.jsonl: cannot read it (a symbolic link loop)" + HINT)
    corpus = read_corpus(["in"], skip_invalid=True)
    assert [p.id for p in corpus.papers] == ["ok"]
    assert corpus.skipped == ("in/a.jsonl: cannot read it (a symbolic link loop)", "in/b.jsonl: cannot read it (a symbolic link loop)")


def test_a_symlink_loop_named_on_the_command_line(capsys, previous_build):
    os.symlink("l2.jsonl", "l1.jsonl")
    os.symlink("l1.jsonl", "l2.jsonl")
    refused(capsys, previous_build, ["l1.jsonl"], ExitCode.INPUT_UNREADABLE, "l1.jsonl: cannot read it (a symbolic link loop)" + HINT)


def test_a_broken_symlink(capsys, previous_build):
    put("in/good.jsonl", GOOD)
    os.symlink("nowhere.jsonl", "in/b.jsonl")
    refused(capsys, previous_build, ["in"], ExitCode.INPUT_UNREADABLE, "in/b.jsonl: broken symbolic link (what it points to does not exist)" + HINT)
    refused(capsys, previous_build, ["in/b.jsonl"], ExitCode.FILE_NOT_FOUND, "in/b.jsonl: broken symbolic link (what it points to does not exist)")


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_pipe_or_device_in_a_folder_is_not_read(capsys, previous_build, kind):
    """Reading a FIFO would wait forever, /dev/zero would fill memory."""
    put("in/good.jsonl", GOOD)
    os.mkfifo("in/p.jsonl") if kind == "fifo" else os.symlink("/dev/zero", "in/p.jsonl")
    refused(capsys, previous_build, ["in"], ExitCode.INPUT_UNREADABLE, "in/p.jsonl: not a regular file (a named pipe, device or socket)" + HINT)


def test_an_unreadable_subfolder_is_an_error_or_skipped_and_counted(capsys, previous_build, monkeypatch):
    put("in/good.jsonl", GOOD)
    put("in/sub/other.jsonl", line(id="other", abstract="Another abstract."))
    real_scandir = os.scandir

    def scandir(path="."):
        # Only in/sub is unreadable; other callers (shutil.rmtree passes open descriptors) pass through.
        if not isinstance(path, int) and Path(path) == Path("in/sub"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    refused(capsys, previous_build, ["in"], ExitCode.INPUT_UNREADABLE, "in/sub/: cannot read it (permission denied)" + HINT)
    corpus = read_corpus(["in"], skip_invalid=True)
    assert ([p.id for p in corpus.papers], corpus.skipped) == (["ok"], ("in/sub/: cannot read it (permission denied)",))
    assert build("in", "--skip-invalid") == 0
    assert capsys.readouterr().err == "Warning: skipped 1 invalid record (run without --quiet to see where)\n"


def test_an_unreadable_file_is_an_error_with_its_own_code(capsys, previous_build, monkeypatch):
    put("in/good.jsonl", GOOD)
    put("in/secret.jsonl", line(abstract="Hidden."))
    real_read_bytes = pathlib.Path.read_bytes

    def read_bytes(self):
        if self.name == "secret.jsonl":
            raise PermissionError(13, "Permission denied", str(self))
        return real_read_bytes(self)

    monkeypatch.setattr(pathlib.Path, "read_bytes", read_bytes)
    refused(capsys, previous_build, ["in"], ExitCode.INPUT_UNREADABLE, "in/secret.jsonl: cannot read it (permission denied)" + HINT)
    refused(capsys, previous_build, ["in/secret.jsonl"], ExitCode.INPUT_UNREADABLE, "in/secret.jsonl: cannot read it (permission denied)" + HINT)
    assert read_corpus(["in"], skip_invalid=True).skipped == ("in/secret.jsonl: cannot read it (permission denied)",)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_really_unreadable_file_and_folder(capsys, previous_build):
    put("in/good.jsonl", GOOD)
    put("in/sub/x.jsonl", GOOD.replace("ok", "x"))
    put("in/bad.jsonl", GOOD.replace("ok", "y"))
    os.chmod("in/sub", 0)
    os.chmod("in/bad.jsonl", 0)
    try:
        assert read_corpus(["in"], skip_invalid=True).skipped == (
            "in/bad.jsonl: cannot read it (permission denied)",
            "in/sub/: cannot read it (permission denied)",
        )
    finally:
        os.chmod("in/sub", 0o755)


def test_folders_linked_into_a_folder_are_read_once_and_loops_end(capsys):
    put("in/good.jsonl", GOOD)
    put("elsewhere/more.jsonl", line(id="more", abstract="More text."))
    os.symlink("../elsewhere", "in/linked")
    os.symlink("..", "in/up")  # a link to the folder holding this one: a loop
    os.symlink(".", "in/here")  # a link to this folder itself
    os.symlink("good.jsonl", "in/again.jsonl")  # the same file twice
    put("beside.jsonl", line(id="beside", abstract="Beside the folder, reached only through the loop."))
    corpus = read_corpus(["in"])
    assert sorted(p.id for p in corpus.papers) == ["more", "ok"]
    assert corpus.duplicates == 0


def test_a_folder_named_like_a_file_is_read_as_a_folder(capsys):
    put("papers.jsonl/inside.jsonl", GOOD)
    assert [p.id for p in read_corpus(["papers.jsonl"]).papers] == ["ok"]


def test_file_names_with_control_characters_or_bad_bytes_stay_on_one_line(capsys):
    put("in/a\nb.jsonl", '{"abstract": ')
    os.makedirs("in2")
    with open(os.path.join(b"in2", b"caf\xe9.jsonl"), "wb") as handle:
        handle.write(b'{"abstract": ')
    assert build("in") == ExitCode.MALFORMED_RECORD
    assert capsys.readouterr().err.startswith("Error: in/a\\x0ab.jsonl:1: not valid JSON")
    assert build("in2") == ExitCode.MALFORMED_RECORD
    assert capsys.readouterr().err.startswith("Error: in2/caf\ufffd.jsonl:1: not valid JSON")


# ---- the output folder ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("out", "code", "message"),
    [
        pytest.param("/proc/kg-forbidden", ExitCode.OUTPUT_ERROR, "cannot write /proc/kg-forbidden: No such file or directory", id="under-proc"),
        pytest.param("c.jsonl/out", ExitCode.OUTPUT_ERROR, "cannot write c.jsonl/out: c.jsonl is not a folder", id="under-a-file"),
        pytest.param("/dev/null", ExitCode.OUTPUT_ERROR, "cannot write /dev/null: it is not a folder", id="a-device"),
    ],
)
def test_an_unusable_output_folder(capsys, out, code, message):
    put("c.jsonl", GOOD)
    assert main(["build", "c.jsonl", "-o", out, "--quiet", "--model", "none"]) == code
    assert capsys.readouterr().err == f"Error: {message}\n"


def test_a_read_only_output_folder_has_its_own_code(capsys, monkeypatch):
    put("c.jsonl", GOOD)
    os.makedirs("ro")
    monkeypatch.setattr(os, "access", lambda path, mode: Path(path).resolve() != Path("ro").resolve())
    assert main(["build", "c.jsonl", "-o", "ro/out", "--quiet", "--model", "none"]) == ExitCode.OUTPUT_PERMISSION
    assert capsys.readouterr().err == "Error: cannot write ro/out: permission denied (in ro)\n"
    assert not Path("ro/out").exists()


def test_permission_refused_when_writing_has_its_own_code(capsys, monkeypatch):
    """Where the check cannot tell (root, some file systems), the first write tells: same code."""
    import tempfile

    put("c.jsonl", GOOD)

    def mkstemp(*args, **kwargs):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    assert main(["build", "c.jsonl", "-o", "out", "--quiet", "--model", "none"]) == ExitCode.OUTPUT_PERMISSION
    assert capsys.readouterr().err == "Error: cannot write out: Operation not permitted\n"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_really_read_only_output_folder(capsys):
    put("c.jsonl", GOOD)
    os.makedirs("ro")
    os.chmod("ro", 0o555)
    try:
        assert main(["build", "c.jsonl", "-o", "ro", "--quiet", "--model", "none"]) == ExitCode.OUTPUT_PERMISSION
    finally:
        os.chmod("ro", 0o755)
