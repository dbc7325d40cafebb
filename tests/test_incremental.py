"""Rebuilds that reuse the previous build (Turtle fragments, the SPARQL store, the extraction
cache) give exactly what a build from scratch gives, for additions, removals and edits."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pyoxigraph as ox
import pytest

from kg.builder import BuildOptions, build
from kg.generations import current_folder
from kg.ingest import read_corpus
from kg.rdf.fragments import FragmentIndex, index_path
from kg.rdf.store import STORE_DIR

EPOCH = "1767225600"  # SOURCE_DATE_EPOCH: the build time every build here records
OUTPUTS = ("papers.jsonl", "entities.jsonl", "concepts.jsonl", "graph.json", "graph.ttl", "graph.html", "related.idx", "leaderboard.idx", ".graph.ttl.fragments")


@pytest.fixture(scope="module")
def seed_records(seeds: Path) -> list[dict]:
    return [{"id": p.id, "title": p.title, "abstract": p.abstract} for p in read_corpus([str(seeds)]).papers]


@pytest.fixture(scope="module")
def filled_cache(seed_records, tmp_path_factory) -> Path:
    """An extraction cache holding every seed paper and the edited one of `_changed_corpus`."""
    from kg.extract.runner import run_extraction

    folder = tmp_path_factory.mktemp("incremental")
    corpus = _write(folder / "all.jsonl", [*seed_records, *_changed_corpus(seed_records)])
    run_extraction(read_corpus([str(corpus)]).papers, cache_dir=folder / "cache")
    return folder / "cache"


@pytest.fixture
def cache(filled_cache, tmp_path) -> Path:
    """A copy of `filled_cache` for this test: its builds extract nothing (what they reuse is the subject)."""
    return Path(shutil.copytree(filled_cache, tmp_path / "cache"))


@pytest.fixture
def pinned_time(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _files(out: Path) -> dict[str, bytes]:
    folder = current_folder(out)
    assert folder is not None
    return {name: (folder / name).read_bytes() for name in OUTPUTS}


def _store_rows(out: Path) -> list[str]:
    store = ox.Store.read_only(str(out / STORE_DIR))
    return sorted(str(quad) for quad in store)


def _changed_corpus(records: list[dict]) -> list[dict]:
    """The first corpus with 3 papers added, 2 removed and 1 abstract edited."""
    base = records[:30]
    edited = dict(base[5], abstract=base[5]["abstract"] + " We also release the GraphSAGE-Lite benchmark for link prediction.")
    return [*base[:2], *base[4:5], edited, *base[6:], *records[30:33]]


@pytest.mark.parametrize("change", ["add-remove-edit", "only-add", "unchanged"])
def test_rebuild_equals_a_build_from_scratch(seed_records, cache, tmp_path, pinned_time, change):
    first = seed_records[:30]
    second = {"add-remove-edit": _changed_corpus(seed_records), "only-add": seed_records[:33], "unchanged": first}[change]
    build([str(_write(tmp_path / "first.jsonl", first))], tmp_path / "out", BuildOptions(cache_dir=cache))
    again = build([str(_write(tmp_path / "second.jsonl", second))], tmp_path / "out", BuildOptions(cache_dir=cache))
    fresh = build([str(tmp_path / "second.jsonl")], tmp_path / "fresh", BuildOptions(cache_dir=cache, no_cache=False))
    # the fresh build had no previous build to reuse
    assert fresh.reused == 0 and fresh.store == "loaded"
    assert again.reused > 0
    # updated (on 30 papers, 3 changed are more than COMPACT_AFTER_SHARE of the fragments: then compacted too);
    # adding, removing and editing at once changes more than MAX_CHANGED_SHARE of them here (concept counts,
    # families and types follow the papers), so that store is loaded anew (removals in an update:
    # test_a_damaged_fragment_is_made_again)
    expected = {"unchanged": ("kept",), "only-add": ("updated", "updated and compacted"), "add-remove-edit": ("loaded",)}[change]
    assert again.store in expected
    incremental, scratch = _files(tmp_path / "out"), _files(tmp_path / "fresh")
    assert [name for name in OUTPUTS if incremental[name] != scratch[name]] == []
    assert _store_rows(tmp_path / "out") == _store_rows(tmp_path / "fresh")


def _damage(turtle: Path, fragments: list[int]) -> None:
    """Change one byte inside each of the given fragments of a build's graph.ttl, in place."""
    index = FragmentIndex.load(index_path(turtle))
    data = bytearray(turtle.read_bytes())
    for i in fragments:
        offset = index.offsets[i] + index.lengths[i] // 2
        data[offset] = ord("#") if data[offset] != ord("#") else ord("!")
    turtle.write_bytes(bytes(data))


@pytest.mark.parametrize("damaged", ["one", "all"])
def test_a_damaged_fragment_is_made_again(seed_records, cache, tmp_path, pinned_time, damaged):
    build([str(_write(tmp_path / "a.jsonl", seed_records[:20]))], tmp_path / "out", BuildOptions(cache_dir=cache))
    turtle = current_folder(tmp_path / "out") / "graph.ttl"
    count = len(FragmentIndex.load(index_path(turtle)))
    _damage(turtle, [count // 2] if damaged == "one" else list(range(count)))
    again = build([str(_write(tmp_path / "b.jsonl", seed_records[1:21]))], tmp_path / "out", BuildOptions(cache_dir=cache))
    build([str(tmp_path / "b.jsonl")], tmp_path / "fresh", BuildOptions(cache_dir=cache))
    assert _files(tmp_path / "out") == _files(tmp_path / "fresh")
    assert _store_rows(tmp_path / "out") == _store_rows(tmp_path / "fresh")
    if damaged == "one":
        assert again.reused > 0 and again.store.startswith("updated")
    else:  # nothing could be copied, and the removed paper's triples could not be read back
        assert again.reused == 0 and again.store == "loaded"


def test_no_cache_reuses_nothing(seed_records, tmp_path, pinned_time):
    corpus = _write(tmp_path / "a.jsonl", seed_records[:10])
    build([str(corpus)], tmp_path / "out", BuildOptions(cache_dir=tmp_path / "cache"))
    again = build([str(corpus)], tmp_path / "out", BuildOptions(no_cache=True))
    assert again.reused == 0 and again.extracted == 10


def test_a_fully_cached_rebuild_never_imports_spacy(seed_records, tmp_path):
    corpus = _write(tmp_path / "a.jsonl", seed_records[:10])
    build([str(corpus)], tmp_path / "out")
    code = (
        "import sys\n"
        "from kg.builder import build\n"
        f"summary = build([{str(corpus)!r}], {str(tmp_path / 'out')!r})\n"
        "assert summary.extracted == 0 and summary.cached == 10, summary\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('spacy', 'thinc')))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_stage_times_cover_every_stage(seed_records, tmp_path):
    summary = build([str(_write(tmp_path / "a.jsonl", seed_records[:5]))], tmp_path / "out")
    names = [name for name, _ in summary.stages]
    assert names == [
        "Reading corpus", "Extracting entities", "Resolving concepts", "Propagating concepts", "Linking results", "Writing records",
        "Building graph", "Writing Turtle", "Drawing page", "Indexing related work", "Indexing leaderboards", "Loading SPARQL store",
    ]
    assert all(seconds >= 0 for _, seconds in summary.stages)
    assert sum(seconds for _, seconds in summary.stages) <= summary.seconds + 0.01


def test_every_stage_reports_progress_with_counts(seed_records, tmp_path):
    seen: list[tuple[str, int, int | None]] = []
    build([str(_write(tmp_path / "a.jsonl", seed_records[:5]))], tmp_path / "out", progress=lambda *event: seen.append(event))
    last = {stage: (done, total) for stage, done, total in seen}
    assert last["Resolving concepts"] == (5, 5) and last["Propagating concepts"] == (5, 5)
    assert last["Extracting entities"] == (5, 5)
    done, total = last["Writing Turtle"]
    assert done == total and total > 5  # counted in fragments (nodes)
    for stage in ("Writing records", "Building graph", "Drawing page", "Indexing related work", "Loading SPARQL store"):
        assert last[stage] == (1, 1)
        assert seen.index((stage, 0, 1)) < seen.index((stage, 1, 1))


def test_the_terminal_display_shows_an_eta_per_stage(monkeypatch):
    import io

    import rich.console

    from kg.cli.common import progress_reporter

    screen = io.StringIO()
    real_console = rich.console.Console
    monkeypatch.setattr(rich.console, "Console", lambda **options: real_console(file=screen, force_terminal=True, width=120))
    monkeypatch.setattr("sys.stderr.isatty", lambda: True, raising=False)
    with progress_reporter() as report:
        report("Resolving concepts", 10, 100)
        report("Resolving concepts", 100, 100)
        report("Writing Turtle", 50, 200)
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen.getvalue())  # colours and cursor moves off
    assert "Resolving concepts" in text and "100/100" in text
    # counts, elapsed, then the time remaining (rich's "-:--:--" until it has a rate)
    assert re.search(r"Writing Turtle\D+50/200 \d:\d\d:\d\d left (\d:\d\d:\d\d|-:--:--)", text), text


def test_default_workers_are_the_cores_capped_by_memory(monkeypatch):
    from kg.extract import runner

    monkeypatch.setattr(runner.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    monkeypatch.setattr(runner, "_available_memory", lambda: None)
    assert runner.default_workers() == 4
    monkeypatch.setattr(runner, "_available_memory", lambda: int(2.5 * runner.WORKER_MEMORY))
    assert runner.default_workers() == 2
    monkeypatch.setattr(runner, "_available_memory", lambda: 10)
    assert runner.default_workers() == 1


def test_kg_build_timings_lists_stages_and_what_was_reused(seed_records, tmp_path, pinned_time, capsys):
    from kg.cli import main

    corpus = _write(tmp_path / "a.jsonl", seed_records[:5])
    assert main(["build", str(corpus), "-o", str(tmp_path / "out"), "-q", "--timings"]) == 0
    first = capsys.readouterr().out
    assert first.startswith("Stage times (wall seconds; memory of the kg process at the stage's end: held, peak so far):\n")
    for stage in ("Reading corpus", "Extracting entities", "Resolving concepts", "Writing Turtle", "Loading SPARQL store", "total"):
        assert f"\n  {stage} " in first
    # every stage's memory: held and peak so far in GB (this machine is Linux)
    lines = first.splitlines()
    rows = lines[1 : next(i for i, line in enumerate(lines) if line.strip().startswith("total"))]
    assert len(rows) >= 6
    for line in rows:
        *_, held, held_unit, peak, peak_unit = line.split()
        assert held_unit == peak_unit == "GB" and 0 < float(held) <= float(peak), line
    assert "Reused from the previous build: 0 of " in first and "SPARQL store loaded." in first
    assert main(["build", str(corpus), "-o", str(tmp_path / "out"), "-q", "--timings"]) == 0
    again = capsys.readouterr().out.splitlines()[-1]
    count = again.split(" of ")[1].split()[0]
    assert again == f"Reused from the previous build: {count} of {count} Turtle fragments; SPARQL store kept."


def test_fragment_by_fragment_turtle_is_the_one_stream_turtle(seeds_graph, sample_graph, make_graph, tmp_path):
    """graph.ttl as kg build writes it (fragments) is byte for byte `kg export --format ttl`
    (one triple stream), also with semantic-neighbour nodes and text needing escapes."""
    from kg.graph import paper_key
    from kg.rdf.fragments import write_turtle
    from kg.rdf.writers import write_rdf

    neighbours = sample_graph()
    neighbours.add_edge(paper_key("p1"), paper_key("p2"), kind="similar", similarity=0.5, rank=1)
    neighbours.add_edge(paper_key("p1"), paper_key("p3/x y"), kind="similar", similarity=0.25, rank=2)
    for n, graph in enumerate((seeds_graph, neighbours, make_graph())):
        write_turtle(graph, tmp_path / f"fragments-{n}.ttl")
        write_rdf(graph, tmp_path / f"stream-{n}.ttl")
        assert (tmp_path / f"fragments-{n}.ttl").read_bytes() == (tmp_path / f"stream-{n}.ttl").read_bytes()


def test_the_store_is_reloaded_when_much_changed_or_it_holds_another_build(seed_records, cache, tmp_path, pinned_time):
    from kg.rdf.store import open_store

    build([str(_write(tmp_path / "a.jsonl", seed_records[:10]))], tmp_path / "out", BuildOptions(cache_dir=cache))
    # most fragments change: one bulk load is cheaper than the diff
    much = build([str(_write(tmp_path / "b.jsonl", seed_records[10:30]))], tmp_path / "out", BuildOptions(cache_dir=cache))
    assert much.store == "loaded"
    # a store rebuilt under another base (kg sparql --base …) no longer holds the previous build
    store = open_store(tmp_path / "out", base="https://example.org/other/")
    del store  # closed: the build needs the store folder to itself
    other = build([str(_write(tmp_path / "c.jsonl", seed_records[10:31]))], tmp_path / "out", BuildOptions(cache_dir=cache))
    assert other.store == "loaded"
    fresh = build([str(tmp_path / "c.jsonl")], tmp_path / "fresh", BuildOptions(cache_dir=cache))
    assert _store_rows(tmp_path / "out") == _store_rows(tmp_path / "fresh") and fresh.store == "loaded"


def test_a_failed_store_update_falls_back_to_a_reload(seed_records, cache, tmp_path, pinned_time, monkeypatch):
    import kg.rdf.store
    from kg.rdf.fragments import FragmentDiff

    build([str(_write(tmp_path / "a.jsonl", seed_records[:20]))], tmp_path / "out", BuildOptions(cache_dir=cache))
    monkeypatch.setattr(kg.rdf.store, "changed_fragments", lambda old, new: FragmentDiff(b"not turtle <", b"", 1, 100))
    again = build([str(_write(tmp_path / "b.jsonl", seed_records[:21]))], tmp_path / "out", BuildOptions(cache_dir=cache))
    assert again.store == "loaded"
    build([str(tmp_path / "b.jsonl")], tmp_path / "fresh", BuildOptions(cache_dir=cache))
    assert _store_rows(tmp_path / "out") == _store_rows(tmp_path / "fresh")
    assert not list((tmp_path / "out").glob(".graph.oxigraph.*"))  # the failed copy is gone


def test_default_workers_follow_a_container_quota(monkeypatch, tmp_path):
    from kg.extract import runner

    (tmp_path / "cpu.max").write_text("150000 100000\n")
    (tmp_path / "memory.max").write_text(str(10 * runner.WORKER_MEMORY) + "\n")
    (tmp_path / "memory.current").write_text(str(7 * runner.WORKER_MEMORY) + "\n")
    monkeypatch.setattr(runner, "CGROUP", str(tmp_path))
    monkeypatch.setattr(runner.os, "sched_getaffinity", lambda pid: set(range(16)), raising=False)
    assert runner._cgroup_cpus() == 2  # 1.5 CPUs of quota: 2 processes
    assert runner._available_memory() <= 3 * runner.WORKER_MEMORY
    assert runner.default_workers() == 2
    (tmp_path / "cpu.max").write_text("max 100000\n")
    (tmp_path / "memory.max").write_text("max\n")
    assert runner._cgroup_cpus() is None


def test_updates_piling_up_compact_the_store(seed_records, cache, tmp_path, pinned_time, monkeypatch):
    """Every update leaves small RocksDB files behind: after COMPACT_AFTER_UPDATES updates (or
    COMPACT_AFTER_SHARE of the fragments changed by them) the store is compacted, and counting restarts."""
    from kg.rdf import store as kg_store

    monkeypatch.setattr(kg_store, "COMPACT_AFTER_UPDATES", 2)
    monkeypatch.setattr(kg_store, "COMPACT_AFTER_SHARE", 1.0)
    out = tmp_path / "out"
    build([str(_write(tmp_path / "0.jsonl", seed_records[:30]))], out, BuildOptions(cache_dir=cache))
    hows = []
    for step in range(1, 4):  # one more paper each time: a small change, so the store is updated
        corpus = _write(tmp_path / f"{step}.jsonl", seed_records[: 30 + step])
        hows.append(build([str(corpus)], out, BuildOptions(cache_dir=cache)).store)
        churn = json.loads((out / kg_store.STORE_DIR / kg_store.CHURN_FILE).read_text(encoding="utf-8"))
        assert churn["updates"] == (0 if hows[-1] == "updated and compacted" else step % 2), (hows, churn)
    assert hows == ["updated", "updated and compacted", "updated"]
    build([str(tmp_path / "3.jsonl")], tmp_path / "fresh", BuildOptions(cache_dir=cache))
    assert _store_rows(out) == _store_rows(tmp_path / "fresh")

    monkeypatch.setattr(kg_store, "COMPACT_AFTER_UPDATES", 100)
    monkeypatch.setattr(kg_store, "COMPACT_AFTER_SHARE", 0.0)  # any churn at all passes the share
    corpus = _write(tmp_path / "4.jsonl", seed_records[:34])
    assert build([str(corpus)], out, BuildOptions(cache_dir=cache)).store == "updated and compacted"
