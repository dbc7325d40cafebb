"""One user cache shared by every build: where it is, versions and stamps per entry, migration
of old files, many writers at once, damaged files while others hold them, unusable folders."""

from __future__ import annotations

import json
import multiprocessing
import os
import sqlite3
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

from kg.builder import BuildOptions, build
from kg.errors import CacheError, CacheFolderUnusable, CacheSetAside, CacheUnused, ExitCode
from kg.extract.cache import CACHE_FILE, TOUCH_SECONDS, ExtractionCache, content_key, holders_lock
from kg.extract.cache_location import ENV_VAR, CacheLocation, check_cache_dir, default_cache_dir, resolve_cache_dir
from kg.util.filelock import FileLock

VALUE = {"mentions": [], "definitions": [], "claims": []}
CORPUS = [
    {"id": "cnn", "abstract": "We train a convolutional network on ImageNet and report top-1 accuracy."},
    {"id": "bert", "abstract": "We fine-tune BERT for question answering on SQuAD with a single GPU."},
    {"id": "gan", "abstract": "A generative adversarial network (GAN) is trained on CelebA; we report FID."},
]


def rows(path: Path) -> list[tuple]:
    with sqlite3.connect(path) as db:
        found = db.execute("SELECT key, version, stamp FROM extraction ORDER BY key").fetchall()
    db.close()
    return found


# ---- where -----------------------------------------------------------------------------------


def test_the_option_wins_over_the_variable_which_wins_over_the_default(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "env"))
    assert resolve_cache_dir(tmp_path / "opt") == CacheLocation(tmp_path / "opt", "option")
    assert resolve_cache_dir() == CacheLocation(tmp_path / "env", "KG_CACHE_DIR")
    monkeypatch.delenv(ENV_VAR)
    assert resolve_cache_dir() == CacheLocation(default_cache_dir(), "default")
    assert resolve_cache_dir(tmp_path / "opt", no_cache=True) is None


def test_the_default_is_the_platform_user_cache_folder(monkeypatch, tmp_path):
    monkeypatch.delenv(ENV_VAR)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if sys.platform.startswith("linux"):
        assert default_cache_dir() == tmp_path / "xdg" / "kg"


def test_empty_values_count_as_unset_and_relative_ones_follow_the_working_folder(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV_VAR, "")
    assert resolve_cache_dir().source == "default"
    assert resolve_cache_dir("").source == "default"
    monkeypatch.setenv(ENV_VAR, "rel/cache")
    monkeypatch.chdir(tmp_path)
    location = resolve_cache_dir()
    assert location == CacheLocation(Path("rel/cache"), "KG_CACHE_DIR")
    _write(tmp_path / "c.jsonl", CORPUS[:1])
    assert build(["c.jsonl"], "out", BuildOptions(recognizer=None)).extracted == 1
    assert (tmp_path / "rel" / "cache" / CACHE_FILE).is_file()


def test_a_file_where_the_folder_should_be_is_one_clear_error(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(CacheFolderUnusable) as raised:
        check_cache_dir(CacheLocation(tmp_path / "file", "KG_CACHE_DIR"))
    assert raised.value.exit_code == ExitCode.CACHE_ERROR
    assert raised.value.message == f"cache folder {tmp_path / 'file'} (from KG_CACHE_DIR) is not a folder"
    with pytest.raises(CacheFolderUnusable, match=r"cache folder .*below \(the user cache folder\) cannot be made: Not a directory"):
        check_cache_dir(CacheLocation(tmp_path / "file" / "below", "default"))


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_folder_without_write_permission_is_one_clear_error(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    try:
        with pytest.raises(CacheFolderUnusable, match=r"cache folder .*locked \(as asked\) cannot be written: Permission denied"):
            check_cache_dir(CacheLocation(locked, "option"))
    finally:
        locked.chmod(0o700)


def test_a_read_only_file_system_is_one_clear_error_even_for_root(tmp_path):
    """Root ignores permission bits; a read-only mount stops it too (needs root and mount)."""
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,ro", "tmpfs", str(tmp_path)], capture_output=True).returncode != 0:
        pytest.skip("needs root and a mountable tmpfs (the chmod test covers other users)")
    try:
        with pytest.raises(CacheFolderUnusable, match="cache folder .* cannot be (made|written): Read-only file system"):
            check_cache_dir(CacheLocation(tmp_path / "kg", "default"))
    finally:
        subprocess.run(["umount", "-l", str(tmp_path)], check=False)


def test_an_unusable_folder_stops_a_build_before_it_writes_anything(monkeypatch, tmp_path):
    (tmp_path / "file").write_text("x")
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "file"))
    corpus = _write(tmp_path / "c.jsonl", CORPUS[:1])
    with pytest.raises(CacheFolderUnusable):
        build([str(corpus)], tmp_path / "out", BuildOptions(recognizer=None))
    assert not (tmp_path / "out").exists()
    assert build([str(corpus)], tmp_path / "out", BuildOptions(recognizer=None, no_cache=True)).extracted == 1  # --no-cache needs no folder


# ---- entries: versions and stamps ------------------------------------------------------------


def test_rows_carry_their_version_and_when_they_were_written(tmp_path):
    before = int(time.time())
    with ExtractionCache(tmp_path, version="pipe-1") as cache:
        cache.put_many({"k1": VALUE})
    with ExtractionCache(tmp_path, version="pipe-2") as cache:
        cache.put_many({"k2": VALUE})
        assert cache.entries_by_version() == {"pipe-1": 1, "pipe-2": 1}
    (k1, v1, s1), (k2, v2, s2) = rows(tmp_path / CACHE_FILE)
    assert (k1, v1, k2, v2) == ("k1", "pipe-1", "k2", "pipe-2")
    assert before <= s1 <= s2 <= time.time()


def test_a_read_refreshes_a_stamp_only_once_it_is_a_day_old(tmp_path):
    with ExtractionCache(tmp_path, version="v") as cache:
        cache.put_many({"fresh": VALUE, "old": VALUE})
    day_and_a_bit = int(time.time()) - TOUCH_SECONDS - 60
    with sqlite3.connect(tmp_path / CACHE_FILE) as db:
        db.execute("UPDATE extraction SET stamp = ? WHERE key = 'old'", (day_and_a_bit,))
        fresh_stamp = db.execute("SELECT stamp FROM extraction WHERE key = 'fresh'").fetchone()[0] - 5
        db.execute("UPDATE extraction SET stamp = ? WHERE key = 'fresh'", (fresh_stamp,))
    db.close()
    with ExtractionCache(tmp_path, version="v") as cache:
        assert cache.get_many(["fresh", "old"]) == {"fresh": VALUE, "old": VALUE}
    stamps = {key: stamp for key, _, stamp in rows(tmp_path / CACHE_FILE)}
    assert stamps["fresh"] == fresh_stamp  # read within the day: not rewritten
    assert stamps["old"] >= time.time() - 5  # read after a day: now


def test_an_old_three_column_cache_is_migrated_and_keeps_working(tmp_path):
    """A cache from before versions were recorded: every row stays usable, its version is
    unknown (NULL) until a build reads it under its key, its stamp is the migration's time."""
    keys = [content_key(f"abstract {i}", "pipe-1") for i in range(3)]
    payload = json.dumps(VALUE, sort_keys=True, separators=(",", ":"))
    import hashlib

    with sqlite3.connect(tmp_path / CACHE_FILE) as db:
        db.execute("CREATE TABLE extraction (key TEXT PRIMARY KEY, checksum TEXT NOT NULL, payload TEXT NOT NULL)")
        db.executemany("INSERT INTO extraction VALUES (?, ?, ?)", [(k, hashlib.sha256(payload.encode()).hexdigest(), payload) for k in keys])
    db.close()
    before = int(time.time())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no set-aside: it is not damaged
        with ExtractionCache(tmp_path, version="pipe-1") as cache:
            assert cache.entries_by_version() == {None: 3}
            assert cache.get_many(keys[:2]) == {keys[0]: VALUE, keys[1]: VALUE}
            assert cache.corrupt == 0
    found = rows(tmp_path / CACHE_FILE)
    assert [version for _, version, _ in found] == [{keys[0]: "pipe-1", keys[1]: "pipe-1", keys[2]: None}[k] for k, _, _ in found]
    assert all(stamp >= before for _, _, stamp in found)
    with ExtractionCache(tmp_path, version="pipe-1") as cache:  # opened again: nothing to migrate
        assert cache.get_many(keys) == dict.fromkeys(keys, VALUE)
    assert not any(".damaged-" in p.name for p in tmp_path.iterdir())


def test_a_damaged_file_is_not_moved_while_another_process_holds_it(tmp_path, monkeypatch):
    """Moved from under a process still writing it, the file would take that process's writes
    along: while another user holds the lock, this one goes without the cache instead."""
    import kg.extract.cache as cache_module

    monkeypatch.setattr(cache_module, "SET_ASIDE_WAIT", 0.2)
    path = tmp_path / CACHE_FILE
    path.write_bytes(os.urandom(8192))
    other = FileLock(holders_lock(path))
    assert other.share(1)  # what an ExtractionCache in another process holds
    try:
        with pytest.warns(CacheUnused, match="another kg process has it open; going without the cache this time"):
            cache = ExtractionCache(tmp_path, version="v")
        with cache:
            assert cache.unused and cache.get_many(["k"]) == {}
            cache.put_many({"k": VALUE})  # a no-op, not an error
        assert not any(".damaged-" in p.name for p in tmp_path.iterdir())
    finally:
        other.close()
    with pytest.warns(CacheSetAside):  # once nobody holds it, the next user sets it aside
        with ExtractionCache(tmp_path, version="v") as cache:
            cache.put_many({"k": VALUE})
            assert cache.get_many(["k"]) == {"k": VALUE}


def _open_damaged(folder: str, worker: int) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # set aside, or gone without: either is fine here
        with ExtractionCache(folder, version="v") as cache:
            cache.put_many({f"k{worker}": VALUE})
            if cache.unused is None:
                assert cache.get_many([f"k{worker}"]) == {f"k{worker}": VALUE}


def test_processes_finding_one_damaged_file_at_once_move_it_aside_once(tmp_path):
    """Each sees the damage; one moves the file aside, the others find a new file there and
    use it (or go without): the new file is never moved aside in turn."""
    (tmp_path / CACHE_FILE).write_bytes(os.urandom(8192))
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_open_damaged, args=(str(tmp_path), w)) for w in range(4)]
    for process in workers:
        process.start()
    for process in workers:
        process.join(timeout=120)
    assert [p.exitcode for p in workers] == [0] * 4
    aside = [p.name for p in tmp_path.iterdir() if ".damaged-" in p.name and not p.name.endswith(("-wal", "-shm", "-journal"))]
    assert len(aside) == 1, aside
    with ExtractionCache(tmp_path) as cache:
        assert 1 <= sum(cache.entries_by_version().values()) <= 4


def test_two_users_that_found_the_same_damage_move_only_the_damaged_file(tmp_path, monkeypatch):
    """Both have seen the damage before either moves the file (a barrier holds them there): the
    first moves it aside; the second then finds another file at the path and leaves it alone."""
    import threading

    original = ExtractionCache._connect
    both_failed = threading.Barrier(2, timeout=10)

    def connect_then_wait(self):
        try:
            return original(self)
        except sqlite3.DatabaseError:
            both_failed.wait()
            raise

    monkeypatch.setattr(ExtractionCache, "_connect", connect_then_wait)
    (tmp_path / CACHE_FILE).write_bytes(os.urandom(8192))
    errors: list[BaseException] = []

    def use(worker: int) -> None:
        try:
            with ExtractionCache(tmp_path, version="v") as cache:
                cache.put_many({f"k{worker}": VALUE})
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=use, args=(w,)) for w in range(2)]
    with pytest.warns(CacheSetAside, match=r"could not be used .*; moved it to extract\.sqlite\.damaged-"):
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
    assert errors == []
    aside = [p.name for p in tmp_path.iterdir() if ".damaged-" in p.name and not p.name.endswith(("-wal", "-shm", "-journal"))]
    assert len(aside) == 1, aside
    with ExtractionCache(tmp_path) as cache:
        assert cache.get_many(["k0", "k1"]) == {"k0": VALUE, "k1": VALUE}  # both wrote into the one new file


# ---- many writers at once ----------------------------------------------------------------------


def _writer(folder: str, worker: int, batches: int) -> None:
    with ExtractionCache(folder, version=f"v{worker % 2}") as cache:
        for batch in range(batches):
            cache.put_many({f"w{worker}-{batch}-{i}": VALUE for i in range(64)})
            assert cache.get_many([f"w{worker}-{batch}-0", f"w{(worker + 1) % 8}-0-0"]).get(f"w{worker}-{batch}-0") == VALUE


def test_many_processes_write_one_cache_at_once(tmp_path):
    """Eight processes, each opening a new cache file at the same moment and writing 20
    transactions of 64 rows while reading the others': none fails, every row is there."""
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_writer, args=(str(tmp_path), w, 20)) for w in range(8)]
    for process in workers:
        process.start()
    for process in workers:
        process.join(timeout=300)
    assert [p.exitcode for p in workers] == [0] * 8
    with ExtractionCache(tmp_path) as cache:
        assert cache.entries_by_version() == {"v0": 4 * 20 * 64, "v1": 4 * 20 * 64}
        assert cache.corrupt == 0
    assert not any(".damaged-" in p.name for p in tmp_path.iterdir())


def _open_at_once(folder: str, start, failures) -> None:
    start.wait()
    try:
        with ExtractionCache(folder) as cache:
            cache.put_many({f"k{os.getpid()}": VALUE})
    except CacheError as error:
        failures.put(str(error))


@pytest.mark.parametrize("rounds", [8, pytest.param(40, marks=pytest.mark.slow)])
def test_processes_opening_a_new_cache_at_the_same_moment_all_use_it(tmp_path, rounds: int):
    """Switching a new file to WAL needs it alone, and SQLite refused ("database is locked")
    without waiting when another process had it open: two builds starting on a new cache
    failed (1 in ~100 in CI). Rounds of 4 processes released together on a new folder (8 by
    default, 40 in the slow leg)."""
    context = multiprocessing.get_context("fork")
    failures = context.Queue()
    for round_ in range(rounds):
        folder, start = tmp_path / f"r{round_}", context.Barrier(4)
        workers = [context.Process(target=_open_at_once, args=(str(folder), start, failures)) for _ in range(4)]
        for process in workers:
            process.start()
        for process in workers:
            process.join(timeout=120)
        assert [p.exitcode for p in workers] == [0] * 4
    assert failures.empty(), failures.get()


# ---- builds sharing the cache --------------------------------------------------------------


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


GRAPH_FILES = ("papers.jsonl", "entities.jsonl", "concepts.jsonl", "graph.ttl")


def test_a_second_output_folder_takes_every_paper_from_the_shared_cache(seeds, tmp_path, private_cache, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    first = build([str(seeds)], tmp_path / "a")
    second = build([str(seeds)], tmp_path / "b")
    assert (first.extracted, first.cached) == (38, 0)
    assert (second.extracted, second.cached) == (0, 38)
    assert (private_cache / CACHE_FILE).is_file() and not (tmp_path / "a" / "cache").exists()
    for name in GRAPH_FILES:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


@pytest.mark.slow
def test_two_builds_at_once_into_two_folders_share_one_cache(seeds, tmp_path, private_cache):
    """Two real `kg build` processes over the same papers, one cache, started together: both
    succeed and give identical graphs; the cache holds each paper once, under one version."""
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1767225600"}  # KG_CACHE_DIR: this test's
    command = [sys.executable, "-m", "kg", "build", str(seeds), "--quiet", "-j", "1", "-o"]
    processes = [subprocess.Popen([*command, str(tmp_path / name)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for name in ("a", "b")]
    results = [(p.wait(timeout=600), *p.communicate()) for p in processes]
    assert results == [(0, "", ""), (0, "", "")]
    for name in GRAPH_FILES:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    with ExtractionCache(private_cache) as cache:
        assert list(cache.entries_by_version().values()) == [38]
    third = build([str(seeds)], tmp_path / "c")
    assert (third.extracted, third.cached) == (0, 38)


def test_a_cache_error_names_the_file(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(CacheError) as raised:
        ExtractionCache(tmp_path / "file")
    assert str(tmp_path / "file" / CACHE_FILE) in raised.value.message
