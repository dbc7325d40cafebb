"""`kg build` from the command line: outputs, summary, --skip-invalid, --quiet, progress, atomicity."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from kg.cli import main
from kg.cli.common import progress_reporter
from kg.extract.cache import CACHE_FILE
from kg.model import Paper

GOOD = [
    {"id": "p1", "title": "Transformers", "abstract": "We propose the Transformer, built on attention."},
    {"id": "p2", "title": "BERT", "abstract": "We introduce BERT, a bidirectional Transformer encoder."},
]


@pytest.fixture
def corpus_file(tmp_path) -> Path:
    """Two good records, one exact duplicate (modulo whitespace) and one with an empty abstract."""
    lines = [json.dumps(record) for record in GOOD]
    lines.append(json.dumps({"id": "p1-copy", "title": "Transformers", "abstract": "We propose the  Transformer,\nbuilt on attention."}))
    lines.append(json.dumps({"id": "t", "title": "Title only", "abstract": ""}))
    path = tmp_path / "corpus.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_build_with_skip_invalid_writes_papers_and_prints_the_summary(capsys, tmp_path, corpus_file):
    out = tmp_path / "out"
    assert main(["build", str(corpus_file), "-o", str(out), "--skip-invalid"]) == 0
    stdout = capsys.readouterr().out.splitlines()
    assert stdout[0].startswith(f"Built {out}/ in ")
    assert stdout[1:4] == [
        "  papers             2  (1 duplicate abstract merged)",
        "  skipped            1  invalid records:",
        f"    {corpus_file}:4: empty abstract (title “Title only”)",
    ]
    assert f"  wrote {out}/papers.jsonl" in stdout
    papers = [Paper.from_dict(json.loads(line)) for line in (out / "papers.jsonl").read_text(encoding="utf-8").splitlines()]
    assert papers == [
        Paper(id="p1", title="Transformers", abstract=GOOD[0]["abstract"], source=f"{corpus_file}:1",
              duplicate_sources=(f"{corpus_file}:3",), alt_ids=("p1-copy",)),
        Paper(id="p2", title="BERT", abstract=GOOD[1]["abstract"], source=f"{corpus_file}:2"),
    ]


def test_quiet_prints_nothing_but_the_skipped_warning(capsys, tmp_path, corpus_file):
    assert main(["build", str(corpus_file), "-o", str(tmp_path / "out"), "--skip-invalid", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", "Warning: skipped 1 invalid record (run without --quiet to see where)\n")


def test_seeds_build_into_out(capsys, tmp_path, seeds):
    """The README's main job: `kg build seeds/ -o out/`."""
    out = tmp_path / "out"
    assert main(["build", f"{seeds}/", "-o", str(out)]) == 0
    stdout = capsys.readouterr().out
    assert "  papers            38  (0 duplicate abstracts merged)" in stdout
    records = [json.loads(line) for line in (out / "papers.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(records) == 38
    assert {(r["venue"], r["year"]) for r in records} == {("ICML", 2025)}
    assert [r["id"] for r in records] == sorted(r["id"] for r in records)


def test_progress_reports_ingestion_and_later_stages(tmp_path):
    """`build` calls the progress callback; ingestion reports per file and ends at total/total."""
    from kg.builder import build

    seen: list[tuple[str, int, int | None]] = []
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in GOOD), encoding="utf-8")
    build([str(corpus)], tmp_path / "out", progress=lambda stage, done, total: seen.append((stage, done, total)))
    reading = [event for event in seen if event[0] == "Reading corpus"]
    assert reading == [("Reading corpus", 0, 1), ("Reading corpus", 1, 1)]
    assert {stage for stage, _, _ in seen} - {"Reading corpus"}, "later stages report progress too"


def test_progress_bar_only_on_a_terminal(monkeypatch, capsys):
    monkeypatch.setattr("sys.stderr.isatty", lambda: False, raising=False)
    with progress_reporter() as report:
        assert report is None
    with progress_reporter(enabled=False) as report:
        assert report is None
    monkeypatch.setattr("sys.stderr.isatty", lambda: True, raising=False)
    with progress_reporter() as report:
        assert callable(report)
        report("Reading corpus", 0, 2)
        report("Reading corpus", 2, 2)
        report("Extracting entities", 5, None)  # unknown total: an indeterminate bar
    assert capsys.readouterr().out == ""  # the bar never writes to stdout


def test_a_crash_mid_write_leaves_the_previous_output_intact(monkeypatch, tmp_path, corpus_file, private_cache):
    """Ctrl-C while papers.jsonl is being written: the old file stays whole, no temporary file
    is left, and the unfinished generation folder is removed (only the lock file stays)."""
    import kg.builder

    out = tmp_path / "out"
    out.mkdir()
    previous = '{"id": "old"}\n'
    (out / "papers.jsonl").write_text(previous, encoding="utf-8")
    calls = []

    real_dumps = json.dumps  # the patch below replaces the json module's own dumps

    def dumps_then_crash(record, **options):
        # the cache's payloads pass here too: count the papers only, crash at the second
        if isinstance(record, dict) and "abstract" in record:
            calls.append(record)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real_dumps(record, **options)

    monkeypatch.setattr(kg.builder.json, "dumps", dumps_then_crash)
    with pytest.raises(KeyboardInterrupt):
        kg.builder.build([str(corpus_file)], out, kg.builder.BuildOptions(skip_invalid=True))
    assert (out / "papers.jsonl").read_text(encoding="utf-8") == previous
    # the extraction cache (written before the records, in KG_CACHE_DIR) keeps its work, as after any crash
    assert sorted(os.listdir(out)) == [".kg", "papers.jsonl"]
    with sqlite3.connect(private_cache / CACHE_FILE) as db:
        assert db.execute("SELECT COUNT(*) FROM extraction").fetchone()[0] > 0
    db.close()
    assert os.listdir(out / ".kg") == ["lock"]


def test_a_failure_during_extraction_leaves_every_previous_file(monkeypatch, tmp_path, corpus_file):
    """papers.jsonl used to be replaced before extraction ran: a failure there left a new
    papers.jsonl beside the old graph. Now nothing a reader sees changes."""
    import kg.builder
    import kg.concepts.find

    out = tmp_path / "out"
    assert main(["build", str(corpus_file), "-o", str(out), "--skip-invalid", "--quiet", "--model", "none"]) == 0
    before = {name: (out / name).read_bytes() for name in os.listdir(out) if (out / name).is_file()}
    assert {"papers.jsonl", "graph.json", "graph.ttl"} <= before.keys()
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"id": "p9", "abstract": "We study GANs on CIFAR-10."}) + "\n", encoding="utf-8")

    def fail(*args, **kwargs):
        raise MemoryError("extraction ran out of memory")

    monkeypatch.setattr(kg.concepts.find, "run_extraction", fail)
    with pytest.raises(MemoryError):
        kg.builder.build([str(other)], out, kg.builder.BuildOptions(recognizer=None))
    assert {name: (out / name).read_bytes() for name in before} == before
    assert sorted(os.listdir(out / ".kg")) == ["current", os.readlink(out / ".kg" / "current"), "lock"]


def test_missing_input_argument_is_a_usage_error(capsys):
    assert main(["build"]) == 2
    assert "Missing argument 'INPUTS...'" in capsys.readouterr().err


def test_stdin_dash(capsys, tmp_path, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO("".join(json.dumps(r) + "\n" for r in GOOD).encode())))
    out = tmp_path / "out"
    assert main(["build", "-", "-o", str(out), "-q"]) == 0
    records = [json.loads(line) for line in (out / "papers.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(r["id"], r["source"]) for r in records] == [("p1", "<stdin>:1"), ("p2", "<stdin>:2")]
