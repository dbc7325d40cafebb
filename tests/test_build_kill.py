"""Real `kg build` processes killed (SIGKILL) at random points, and two builds into one folder.

After every kill, out/ must show exactly one build: every output file equal to those of one of
two known-complete builds (corpus A: seeds/, corpus B: one seed file). The next complete build
must remove what the killed ones left. Kill times are seeded (``KG_KILL_SEED``, default 13);
a quarter fall anywhere in a build, a quarter once its ``build-…`` folder appears, a quarter once its
graph.json is written (the last files, the rename, the links and the switch), a quarter as soon as
the switch is made (the links and the clean-up after it): so both sides of the switch are hit
however much slower the machine runs than when the build was timed. The slow leg (``pytest -m slow``): 3 kills, then `test_many_random_kills` with 20; the default leg kills one build
(`test_a_killed_build_keeps_the_extractions_it_finished`).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kg.builder import OUTPUT_FILES, BuildOptions, build

KG = [sys.executable, "-m", "kg"]
EPOCH = "1700000000"


def visible(out: Path) -> dict[str, str | None]:
    seen: dict[str, str | None] = {}
    for name in OUTPUT_FILES:
        try:
            seen[name] = hashlib.sha256((out / name).read_bytes()).hexdigest()
        except FileNotFoundError:
            seen[name] = None
    return seen


def start(corpus: Path, out: Path) -> subprocess.Popen:
    env = {**os.environ, "SOURCE_DATE_EPOCH": EPOCH}
    return subprocess.Popen([*KG, "build", str(corpus), "-o", str(out), "--quiet", "--model", "none"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def building(out: Path, file: str | None = None) -> bool:
    """A build folder exists in out/.kg (holding `file`, when given)."""
    state = out / ".kg"
    try:
        return any(p.name.startswith("build-") and (file is None or (p / file).exists()) for p in state.iterdir())
    except FileNotFoundError:
        return False


@pytest.fixture(scope="module")
def references(seeds: Path, tmp_path_factory) -> dict:
    """The two known-complete builds (their visible file hashes) and how long one takes."""
    root = tmp_path_factory.mktemp("kill-refs")
    corpora = {"A": seeds, "B": sorted(seeds.glob("*.txt"))[0]}
    hashes = {}
    saved = os.environ.get("SOURCE_DATE_EPOCH")
    os.environ["SOURCE_DATE_EPOCH"] = EPOCH
    try:
        for key, corpus in corpora.items():
            build([str(corpus)], root / key, BuildOptions(recognizer=None))
            hashes[key] = visible(root / key)
    finally:
        if saved is None:
            del os.environ["SOURCE_DATE_EPOCH"]
        else:
            os.environ["SOURCE_DATE_EPOCH"] = saved
    assert hashes["A"] != hashes["B"] and None not in hashes["A"].values()
    return {"corpora": corpora, "hashes": hashes}


def timed_build(corpus: Path, out: Path) -> tuple[float, float, float]:
    """A complete build as a subprocess: seconds in all, from its build folder on, and from
    its graph.json on (the last writes and the switch)."""
    began = time.monotonic()
    writing = late = None
    with start(corpus, out) as process:  # closes its pipes
        while process.poll() is None:
            if writing is None and building(out):
                writing = time.monotonic()
            if late is None and building(out, "graph.json"):
                late = time.monotonic()
            time.sleep(0.002)
        assert process.returncode == 0, process.stderr.read()
    ended = time.monotonic()
    return ended - began, ended - (writing or began), ended - (late or writing or began)


def current(out: Path) -> str | None:
    try:
        return os.readlink(out / ".kg" / "current")
    except OSError:
        return None


def wait_for(process: subprocess.Popen, ready) -> None:
    deadline = time.monotonic() + 60
    while not ready() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)


def kill_builds(references: dict, out: Path, kills: int, seed: int) -> dict[str, int]:
    corpora, hashes = references["corpora"], references["hashes"]
    rng = random.Random(seed)
    # Warm the extraction cache for both corpora, then time a build: kills then land in builds
    # that read, extract (from the cache), write and switch in a few seconds.
    timed_build(corpora["A"], out)
    timed_build(corpora["B"], out)
    total, writing, late = timed_build(corpora["A"], out)
    shows, outcome = "A", {"old": 0, "new": 0, "finished": 0, "left_behind": 0}
    for _ in range(kills):
        target = "B" if shows == "A" else "A"
        published = current(out)
        process = start(corpora[target], out)
        phase = rng.randrange(4)
        if phase == 0:  # anywhere
            time.sleep(rng.uniform(0, total))
        elif phase == 1:  # once it writes its folder: loading, extraction, every file
            wait_for(process, lambda: building(out))
            time.sleep(rng.uniform(0, writing * 1.2))
        elif phase == 2:  # once graph.json is written: Turtle, page, index, rename, links, switch
            wait_for(process, lambda: building(out, "graph.json"))
            time.sleep(rng.uniform(0, late * 1.3))
        else:  # as soon as the switch is made: the links and the clean-up after it
            wait_for(process, lambda before=published: current(out) != before)
        finished = process.poll() is not None
        process.send_signal(signal.SIGKILL)
        process.wait()
        process.stdout.close()
        process.stderr.close()
        now = visible(out)
        assert now in (hashes["A"], hashes["B"]), f"out/ mixes two builds: {now}"
        if finished:
            assert process.returncode == 0 and now == hashes[target]
            outcome["finished"] += 1
        else:
            outcome["new" if now == hashes[target] else "old"] += 1
        outcome["left_behind"] += building(out)
        shows = "A" if now == hashes["A"] else "B"
    # The next complete build cleans up: one lock, the pointer, the new and the previous generation.
    target = "B" if shows == "A" else "A"
    previous = os.readlink(out / ".kg" / "current")
    timed_build(corpora[target], out)
    assert visible(out) == hashes[target]
    assert sorted(os.listdir(out / ".kg")) == sorted(["current", "lock", previous, os.readlink(out / ".kg" / "current")])
    assert not [name for name in os.listdir(out) if name.endswith(".tmp")]
    return outcome


# Real processes killed at random: the slow leg. In the default one, tests/test_generations.py
# looks at out/ after every rename a build makes, and at a second build meeting the lock.
@pytest.mark.slow
def test_random_kills_leave_one_generation(references, tmp_path):
    seed = int(os.environ.get("KG_KILL_SEED", "13"))
    outcome = kill_builds(references, tmp_path / "out", kills=3, seed=seed)
    assert outcome["old"] + outcome["new"] + outcome["finished"] == 3


@pytest.mark.slow
def test_many_random_kills(references, tmp_path):
    """20 kills (about 2 minutes): the slow leg, ``pytest -m slow``."""
    seed = int(os.environ.get("KG_KILL_SEED", "13"))
    outcome = kill_builds(references, tmp_path / "out", kills=20, seed=seed)
    print(f"\n20 kills (seed {seed}): {outcome}")
    assert outcome["old"] > 0 and outcome["new"] + outcome["finished"] > 0  # both sides of the switch were hit


@pytest.mark.slow
def test_a_second_concurrent_build_fails_at_once_and_the_first_completes(references, tmp_path):
    corpora, hashes = references["corpora"], references["hashes"]
    out = tmp_path / "out"
    first = start(corpora["A"], out)
    deadline = time.monotonic() + 120
    while not building(out) and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    assert first.poll() is None, "the first build ended before the second could start"
    second = subprocess.run([*KG, "build", str(corpora["B"]), "-o", str(out), "--quiet", "--model", "none"], capture_output=True, text=True, timeout=120)
    still_running = first.poll() is None
    _, first_err = first.communicate(timeout=300)
    assert (second.returncode, second.stdout) == (23, "")
    assert second.stderr == (
        f"Error: {out}/ is being built by another kg build (which holds {out}/.kg/lock); "
        "wait for it to finish, or build into another folder (-o DIR)\n"
    )
    assert still_running  # the second did not wait for the first
    assert (first.returncode, first_err) == (0, "")
    assert visible(out) == hashes["A"]


def _processes_writing(out: Path) -> list[int]:
    """Pids of live processes whose command line names `out` (a build and its workers)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if str(out) in (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_a_killed_build_keeps_the_extractions_it_finished(tmp_path, private_cache):
    """Results reach the cache in batches of 64 while the build runs, not only at its end:
    kill the build once two batches are in (while spaCy works on six long abstracts, the last
    batch), and find them there, intact."""
    from kg.extract.cache import CACHE_FILE, ExtractionCache, content_key
    from kg.extract.pipeline import pipeline_version

    short = [{"id": f"a{i:03d}", "title": f"Paper {i}", "abstract": f"We train model M{i} on dataset D{i} and report accuracy {i}."} for i in range(192)]
    sentence = "We study a transformer model with attention layers on a large benchmark dataset. "
    long = [{"id": f"z{i}", "title": f"Long {i}", "abstract": f"Long paper {i}. " + sentence * 1000} for i in range(6)]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in short + long), encoding="utf-8")
    out = tmp_path / "out"
    cache = private_cache / CACHE_FILE  # KG_CACHE_DIR, which the build's process inherits
    process = start(corpus, out)

    def rows() -> int:
        try:
            with sqlite3.connect(f"file:{cache}?mode=ro", uri=True, timeout=5) as db:
                return db.execute("SELECT COUNT(*) FROM extraction").fetchone()[0]
        except sqlite3.Error:
            return 0

    deadline = time.monotonic() + 240
    # every paper's title is extracted and cached beside its abstract: 256 rows hold 128 abstracts
    while rows() < 256 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert process.poll() is None, "the build ended before it could be killed"
    process.send_signal(signal.SIGKILL)
    process.wait()
    process.stdout.close()
    process.stderr.close()
    assert process.returncode == -signal.SIGKILL
    # its extraction workers (default -j: the cores) end with it instead of waiting forever
    deadline = time.monotonic() + 10
    while _processes_writing(out) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _processes_writing(out) == []
    version = pipeline_version(recognizer=None)
    with ExtractionCache(cache.parent) as store:  # checked rows only: checksum and shape
        found = store.get_many(content_key(r["abstract"], version) for r in short)
        unfinished = store.get_many(content_key(" ".join(r["abstract"].split()), version) for r in long)
    assert len(found) >= 128
    assert unfinished == {}  # killed while spaCy was on the long abstracts: saved before extraction ended
    assert not (out / "graph.json").exists()  # the killed first build published nothing
