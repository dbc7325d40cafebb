"""Extraction at scale: cache, worker processes and Dask all give the same results."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

import pytest

import kg.extract.runner as runner
from kg.builder import BuildOptions, build
from kg.extract.cache import CACHE_FILE
from kg.ingest import read_corpus

GRAPH_OUTPUTS = ("entities.jsonl", "concepts.jsonl", "graph.json", "graph.ttl", "graph.html", "related.idx", "leaderboard.idx")


@pytest.fixture(scope="module")
def seed_papers(seeds):
    return read_corpus([str(seeds)]).papers


@pytest.fixture(scope="module")
def serial_extractions(seed_papers):
    extractions, stats = runner.run_extraction(seed_papers, cache_dir=None)
    assert (stats.extracted, stats.cached) == (len(seed_papers), 0)
    return extractions


@pytest.fixture(autouse=True)
def _reproducible_timestamps(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")


def test_worker_processes_match_serial(seed_papers, serial_extractions, monkeypatch):
    monkeypatch.setattr(runner, "LOCAL_CHUNK", 5)  # several chunks across the 2 workers
    extractions, stats = runner.run_extraction(seed_papers, cache_dir=None, workers=2)
    assert stats.extracted == len(seed_papers)
    assert extractions == serial_extractions


def test_dask_cluster_matches_serial(seed_papers, serial_extractions, monkeypatch):
    distributed = pytest.importorskip("dask.distributed")
    monkeypatch.setattr(runner, "DASK_CHUNK", 10)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True, dashboard_address=None) as cluster:
        extractions, stats = runner.run_extraction(seed_papers, cache_dir=None, dask_address=cluster.scheduler_address)
    assert stats.extracted == len(seed_papers)
    assert extractions == serial_extractions


def test_cache_serves_unchanged_papers_and_extracts_new_ones(seed_papers, serial_extractions, tmp_path):
    first, second = seed_papers[:30], seed_papers
    _, stats = runner.run_extraction(first, cache_dir=tmp_path)
    assert (stats.cached, stats.extracted) == (0, 30)
    extractions, stats = runner.run_extraction(second, cache_dir=tmp_path)
    assert (stats.cached, stats.extracted, stats.corrupt) == (30, len(second) - 30, 0)
    assert extractions == serial_extractions


def test_new_pipeline_version_invalidates_the_cache(seed_papers, tmp_path, monkeypatch):
    runner.run_extraction(seed_papers[:5], cache_dir=tmp_path)
    monkeypatch.setattr(runner, "pipeline_version", lambda **options: "some-other-version")
    _, stats = runner.run_extraction(seed_papers[:5], cache_dir=tmp_path)
    assert (stats.cached, stats.extracted) == (0, 5)


def test_corrupt_cache_entries_are_recomputed_not_trusted(seed_papers, serial_extractions, tmp_path):
    runner.run_extraction(seed_papers, cache_dir=tmp_path)
    db = sqlite3.connect(tmp_path / CACHE_FILE)
    with db:  # damage two rows: one payload edited (checksum no longer matches), one truncated
        keys = [row[0] for row in db.execute("SELECT key FROM extraction ORDER BY key LIMIT 2")]
        db.execute("UPDATE extraction SET payload = replace(payload, '\"METHOD\"', '\"TASK\"') WHERE key = ?", (keys[0],))
        db.execute("UPDATE extraction SET payload = substr(payload, 1, 10) WHERE key = ?", (keys[1],))
    db.close()
    extractions, stats = runner.run_extraction(seed_papers, cache_dir=tmp_path)
    assert (stats.corrupt, stats.extracted, stats.cached) == (2, 2, len(seed_papers) - 2)
    assert extractions == serial_extractions
    _, stats = runner.run_extraction(seed_papers, cache_dir=tmp_path)  # repaired on the way
    assert (stats.corrupt, stats.cached) == (0, len(seed_papers))


def _shuffled_seed_jsonl(papers, path: Path, seed: int) -> None:
    records = [{"title": "", "abstract": p.abstract, "venue": p.venue, "year": p.year} for p in papers]
    random.Random(seed).shuffle(records)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def test_build_is_byte_identical_for_any_workers_and_input_order(seed_papers, tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "LOCAL_CHUNK", 5)
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    _shuffled_seed_jsonl(seed_papers, a, seed=1)
    _shuffled_seed_jsonl(seed_papers, b, seed=2)
    assert a.read_text() != b.read_text()
    build([str(a)], tmp_path / "out1", BuildOptions(workers=1, no_cache=True))
    summary = build([str(b)], tmp_path / "out2", BuildOptions(workers=2, no_cache=True))
    assert summary.papers == len(seed_papers)
    for name in GRAPH_OUTPUTS:
        assert (tmp_path / "out1" / name).read_bytes() == (tmp_path / "out2" / name).read_bytes(), name

    def without_source(path: Path) -> list[dict]:
        return [{k: v for k, v in json.loads(line).items() if k != "source"} for line in path.read_text().splitlines()]

    # papers.jsonl differs only in `source` (file:line where each record was read).
    assert without_source(tmp_path / "out1" / "papers.jsonl") == without_source(tmp_path / "out2" / "papers.jsonl")


def test_rebuild_uses_cache_and_shared_cache_folder(seeds, seeds_build, session_cache, tmp_path):
    shared = tmp_path / "shared-cache"
    first = build([str(seeds)], tmp_path / "out1", BuildOptions(cache_dir=shared))
    assert (first.extracted, first.cached) == (38, 0)
    again = build([str(seeds)], tmp_path / "out2", BuildOptions(cache_dir=shared))
    assert (again.extracted, again.cached) == (0, 38)
    assert (shared / CACHE_FILE).is_file() and not (tmp_path / "out2" / "cache").exists()
    for name in GRAPH_OUTPUTS:
        assert (tmp_path / "out1" / name).read_bytes() == (tmp_path / "out2" / name).read_bytes(), name
    # Without cache_dir the cache is the user's: KG_CACHE_DIR here (conftest's seeds_build is such a build).
    assert (session_cache / CACHE_FILE).is_file() and not (seeds_build.out / "cache").exists() and seeds_build.summary.extracted == 38


def test_kg_extract_uses_the_cache_and_workers_like_kg_build(seeds, tmp_path, capsys, monkeypatch):
    """`kg extract` runs the front half `kg build` runs: a build's cache serves it, and
    -j 2 prints the same lines as one process."""
    from kg.cli import main

    monkeypatch.setattr(runner, "LOCAL_CHUNK", 5)
    assert main(["extract", str(seeds), "-j", "2"]) == 0
    in_processes = capsys.readouterr().out
    assert main(["extract", str(seeds), "-j", "1", "--cache", str(tmp_path / "cache")]) == 0
    filled = capsys.readouterr().out
    with sqlite3.connect(tmp_path / "cache" / CACHE_FILE) as db:
        assert db.execute("SELECT count(*) FROM extraction").fetchone()[0] == 38
    calls = []
    monkeypatch.setattr(runner, "extract_papers", lambda papers, **options: calls.append(len(papers)) or iter(()))
    assert main(["extract", str(seeds), "--cache", str(tmp_path / "cache")]) == 0
    assert capsys.readouterr().out == filled == in_processes
    assert calls == []  # every paper came from the cache: extraction (and spaCy) never started


def test_results_reach_the_cache_in_small_batches_as_they_come(tmp_path, monkeypatch):
    """One transaction per 64 results, and sooner when the oldest unsaved result has waited
    `_FLUSH_SECONDS`: a build killed mid-way keeps all but its last batch (a kill of a real
    build: tests/test_build_kill.py)."""
    import time

    from kg.extract.cache import ExtractionCache
    from kg.model import Paper, PaperExtraction

    papers = [Paper(id=f"p{i:03d}", title="", abstract=f"Abstract number {i}.") for i in range(150)]

    def slow_after_ten(items, **options):
        for number, paper in enumerate(items):
            if number == 10:
                time.sleep(0.3)  # spaCy busy on a long batch: the first ten have waited
            yield PaperExtraction(paper.id)

    batches: list[int] = []
    real_put = ExtractionCache.put_many
    monkeypatch.setattr(ExtractionCache, "put_many", lambda self, items: (batches.append(len(items)), real_put(self, items)))
    monkeypatch.setattr(runner, "extract_papers", slow_after_ten)
    monkeypatch.setattr(runner, "_FLUSH_SECONDS", 0.2)
    _, stats = runner.run_extraction(papers, cache_dir=tmp_path, recognizer=None)
    assert stats.extracted == 150
    assert batches == [11, 64, 64, 11]  # the 11th came 0.3 s after the first: flushed by age


def test_a_title_is_extracted_with_offsets_into_it_and_cached_like_an_abstract(tmp_path):
    from kg.model import Paper

    title = "FooNet: Graph Neural Networks for Anomaly Detection on ImageNet"
    papers = [
        Paper(id="t", title=title, abstract="We propose a model for images. It uses a transformer."),
        Paper(id="d", title="We propose a model for images", abstract="We propose a model for images. It uses ImageNet.", title_derived=True),
    ]
    first, stats = runner.run_extraction(papers, cache_dir=tmp_path)
    assert (stats.extracted, stats.cached) == (2, 0)
    in_title = [(m.start, m.end, m.text, m.label, m.source) for m in first[0].mentions if m.where == "title"]
    assert in_title == [
        (0, 6, "FooNet", "METHOD", "coinage"),
        (8, 29, "Graph Neural Networks", "METHOD", "vocab"),  # read in sentence case, written as the title writes it
        (34, 51, "Anomaly Detection", "TASK", "vocab"),
        (55, 63, "ImageNet", "DATASET", "vocab"),
    ]
    assert all(title[m.start : m.end] == m.text for m in first[0].mentions if m.where == "title")
    assert {m.where for m in first[1].mentions} == {"abstract"}  # a derived title is not read
    again, stats = runner.run_extraction(papers, cache_dir=tmp_path)
    assert (stats.extracted, stats.cached) == (0, 2) and again == first
