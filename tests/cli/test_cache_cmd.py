"""`kg cache info | prune | clear`, and the cache options of `kg build` / `kg extract`."""

from __future__ import annotations

import io
import json
import sqlite3
import time
from pathlib import Path

import pytest

import kg.cli.cache as cache_cli
from kg.builder import current_cache_versions
from kg.cli import main
from kg.errors import ExitCode
from kg.extract.cache import CACHE_FILE, ExtractionCache
from kg.extract.pipeline import pipeline_version
from kg.related_work.embed import CACHE_FILE as EMBED_FILE
from kg.related_work.embed import MODEL_NAME

VALUE = {"mentions": [], "definitions": [], "claims": []}
CORPUS = '{"id": "cnn", "abstract": "We train a convolutional network on ImageNet and report top-1 accuracy."}\n'


def fill(folder: Path, version: str | None, keys: list[str], *, file_name: str = CACHE_FILE, age_days: int = 0) -> None:
    with ExtractionCache(folder, validate=None, file_name=file_name, version=version) as cache:
        cache.put_many(dict.fromkeys(keys, VALUE))
    if age_days:
        with sqlite3.connect(folder / file_name) as db:
            db.executemany("UPDATE extraction SET stamp = ? WHERE key = ?", [(int(time.time()) - age_days * 86_400, k) for k in keys])
        db.close()


def info_json(capsys, *args: str) -> dict:
    assert main(["cache", "info", "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_info_says_where_and_why(capsys, tmp_path, monkeypatch, private_cache):
    assert info_json(capsys)["folder"] == str(private_cache) and info_json(capsys)["source"] == "KG_CACHE_DIR"
    shown = info_json(capsys, "--cache", str(tmp_path / "mine"))
    assert (shown["folder"], shown["source"]) == (str(tmp_path / "mine"), "--cache")  # --cache wins over the variable
    monkeypatch.delenv("KG_CACHE_DIR")
    shown = info_json(capsys)
    assert (shown["folder"], shown["source"]) == (str(Path(str(private_cache.parent / "xdg")) / "kg"), "default")
    assert not (tmp_path / "mine").exists()  # info creates nothing


def test_info_counts_entries_per_file_and_version_and_marks_the_current_ones(capsys, private_cache):
    shipped, rules = pipeline_version(), pipeline_version(recognizer=None)
    fill(private_cache, shipped, ["a", "b", "c"])
    fill(private_cache, "kg-x0-old", ["d"])
    fill(private_cache, MODEL_NAME, ["e"], file_name=EMBED_FILE)
    shown = info_json(capsys)
    files = {f["name"]: f for f in shown["files"]}
    assert files[CACHE_FILE]["entries"] == 4 and files[EMBED_FILE]["entries"] == 1
    assert files[CACHE_FILE]["versions"] == [{"version": shipped, "entries": 3, "current": True}, {"version": "kg-x0-old", "entries": 1, "current": False}]
    assert [c["version"] for c in files[CACHE_FILE]["current"]] == [shipped, rules]
    assert files[EMBED_FILE]["versions"] == [{"version": MODEL_NAME, "entries": 1, "current": True}]
    assert shown["size"] == sum(f["size"] for f in shown["files"]) > 0
    assert main(["cache", "info"]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"Cache folder  {private_cache}  (from KG_CACHE_DIR; --cache DIR overrides it)\nSize on disk  ")
    assert "extract.sqlite  4 entries, " in text
    assert f"          3  {shipped}  (current: the shipped recognizer)\n" in text
    assert "          1  kg-x0-old  (not current: prune drops it)\n" in text
    assert f"          0  {rules}  (current: rules alone)\n" in text


def test_info_on_a_damaged_file_says_so_without_a_traceback(capsys, private_cache):
    private_cache.mkdir(parents=True)
    (private_cache / CACHE_FILE).write_bytes(b"not a database" * 500)
    assert main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert "extract.sqlite  7.0 kB, cannot be read (file is not a database): the next build moves it aside" in out


def test_prune_drops_versions_no_longer_current_and_reclaims_space(capsys, private_cache):
    shipped = pipeline_version()
    fill(private_cache, shipped, ["keep"])
    fill(private_cache, "kg-x0-old", [f"old{i}" for i in range(2000)])
    fill(private_cache, "other-model", ["vec"], file_name=EMBED_FILE)
    size_before = (private_cache / CACHE_FILE).stat().st_size
    assert main(["cache", "prune"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Pruned {private_cache}\n  extract.sqlite  dropped 2,000 entries\n        2,000  kg-x0-old\n  embed.sqlite  dropped 1 entries\n            1  other-model\nReclaimed ")
    with ExtractionCache(private_cache) as cache:
        assert cache.entries_by_version() == {shipped: 1}
    assert (private_cache / CACHE_FILE).stat().st_size < size_before  # VACUUM gave the pages back


def test_prune_keeps_a_custom_recognizer_only_when_it_is_passed(capsys, tmp_path, private_cache):
    import shutil

    from kg.extract.pipeline import recognizer_path
    from kg.model import DEFAULT_RECOGNIZER

    model = Path(shutil.copytree(recognizer_path(DEFAULT_RECOGNIZER), tmp_path / "my-model"))
    (model / "meta.json").write_text((model / "meta.json").read_text(encoding="utf-8").replace("}", ', "kg_test": 1}', 1), encoding="utf-8")
    custom = pipeline_version(recognizer=str(model))
    assert custom not in current_cache_versions()[CACHE_FILE] and custom in current_cache_versions([str(model)])[CACHE_FILE]
    fill(private_cache, custom, ["mine"])
    assert main(["cache", "prune", "--recognizer", str(model)]) == 0
    assert "dropped 0 entries" in capsys.readouterr().out
    assert main(["cache", "prune"]) == 0
    assert f"            1  {custom}" in capsys.readouterr().out


def test_prune_older_than_drops_entries_not_written_or_used_since(capsys, private_cache):
    shipped = pipeline_version()
    fill(private_cache, shipped, ["recent"])
    fill(private_cache, shipped, ["stale"], age_days=40)
    fill(private_cache, None, ["unknown-recent"])
    fill(private_cache, None, ["unknown-stale"], age_days=40)
    assert main(["cache", "prune"]) == 0  # no --older-than: current and unknown versions stay
    assert "dropped 0 entries" in capsys.readouterr().out
    assert main(["cache", "prune", "--older-than", "30"]) == 0
    assert "extract.sqlite  dropped 2 entries" in capsys.readouterr().out
    with ExtractionCache(private_cache) as cache:
        assert cache.entries_by_version() == {shipped: 1, None: 1}
    assert main(["cache", "prune", "--older-than", "-1"]) == ExitCode.USAGE
    assert main(["cache", "prune", "--older-than", "1" + "0" * 30]) == ExitCode.USAGE  # not an overflow traceback


def test_clear_asks_first_and_without_a_terminal_refuses(capsys, monkeypatch, private_cache):
    fill(private_cache, "v", ["a"])
    assert main(["cache", "clear"]) == ExitCode.CONFIRMATION_NEEDED == 26
    err = capsys.readouterr().err
    assert err == f"Error: not removing the cache in {private_cache}: no terminal to confirm on; pass --yes\n"
    assert (private_cache / CACHE_FILE).is_file()
    monkeypatch.setattr(cache_cli, "stdin_is_terminal", lambda: True)
    monkeypatch.setattr("sys.stdin", io.StringIO("n\n"))
    assert main(["cache", "clear"]) == 0
    assert capsys.readouterr().out.endswith("Nothing removed.\n") and (private_cache / CACHE_FILE).is_file()
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    assert main(["cache", "clear"]) == 0
    assert "Removed " in capsys.readouterr().out and not (private_cache / CACHE_FILE).exists()


def test_clear_yes_removes_kg_files_only(capsys, private_cache):
    fill(private_cache, "v", ["a"])
    fill(private_cache, "m", ["b"], file_name=EMBED_FILE)
    (private_cache / f"{CACHE_FILE}.damaged-20260101T000000-1").write_bytes(b"x" * 10)
    (private_cache / "notes.txt").write_text("mine")
    assert main(["cache", "clear", "--yes"]) == 0
    assert capsys.readouterr().out.startswith(f"Removed 3 files from {private_cache} (")
    assert sorted(p.name for p in private_cache.iterdir()) == sorted([f"{CACHE_FILE}.lock", f"{EMBED_FILE}.lock", "notes.txt"])  # lock files stay (see kg.util.filelock)
    assert main(["cache", "clear", "--yes"]) == 0
    assert capsys.readouterr().out == f"Nothing to remove in {private_cache}\n"


def test_clear_refuses_while_a_build_has_the_cache_open(capsys, monkeypatch, private_cache):
    import kg.extract.cache_files as cache_files

    monkeypatch.setattr(cache_files, "CLEAR_WAIT", 0.1)
    fill(private_cache, "v", ["a"])
    with ExtractionCache(private_cache):
        assert main(["cache", "clear", "--yes"]) == ExitCode.CACHE_ERROR
    assert capsys.readouterr().err == f"Error: cache {private_cache / CACHE_FILE} is in use by another kg process (a build?); nothing of it was removed\n"
    assert (private_cache / CACHE_FILE).is_file()


def test_build_and_extract_share_the_user_cache_and_honour_the_options(capsys, tmp_path, monkeypatch, private_cache):
    monkeypatch.chdir(tmp_path)
    Path("c.jsonl").write_text(CORPUS, encoding="utf-8")
    assert main(["build", "c.jsonl", "-o", "one", "--model", "none"]) == 0
    assert "1  papers run through spaCy, 0 from the cache" in capsys.readouterr().out
    assert main(["build", "c.jsonl", "-o", "two", "--model", "none"]) == 0
    assert "0  papers run through spaCy, 1 from the cache" in capsys.readouterr().out
    assert main(["extract", "c.jsonl", "--model", "none"]) == 0  # kg extract: the same cache
    with ExtractionCache(private_cache) as cache:
        assert cache.entries_by_version() == {pipeline_version(recognizer=None): 1}
    assert main(["build", "c.jsonl", "-o", "three", "--model", "none", "--cache", "elsewhere"]) == 0  # --cache wins
    assert "1  papers run through spaCy, 0 from the cache" in capsys.readouterr().out and (tmp_path / "elsewhere" / CACHE_FILE).is_file()
    assert main(["extract", "c.jsonl", "--model", "none", "--no-cache", "--cache", "none-made"]) == 0
    assert not (tmp_path / "none-made").exists()


@pytest.mark.parametrize("command", ["build", "extract"])
def test_an_unusable_cache_folder_is_one_error_line(capsys, tmp_path, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    Path("c.jsonl").write_text(CORPUS, encoding="utf-8")
    Path("a-file").write_text("x")
    monkeypatch.setenv("KG_CACHE_DIR", str(tmp_path / "a-file"))
    assert main([command, "c.jsonl", "--model", "none"]) == ExitCode.CACHE_ERROR
    captured = capsys.readouterr()
    assert captured.err == (
        f"Error: cache folder {tmp_path / 'a-file'} (from KG_CACHE_DIR) is not a folder; choose another with --cache DIR or KG_CACHE_DIR, or run without one: --no-cache\n"
    )
    assert captured.out == "" and not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", [["info"], ["prune"], ["clear", "--yes"]])
def test_a_file_where_the_cache_folder_goes_is_one_error_line(capsys, tmp_path, monkeypatch, command):
    """As for builds (exit 16), from KG_CACHE_DIR and from --cache alike; it used to say "none yet"."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("mine")
    monkeypatch.setenv("KG_CACHE_DIR", str(blocker))
    assert main(["cache", *command]) == ExitCode.CACHE_ERROR
    assert capsys.readouterr().err.startswith(f"Error: cache folder {blocker} (from KG_CACHE_DIR) is not a folder")
    monkeypatch.delenv("KG_CACHE_DIR")
    assert main(["cache", *command, "--cache", str(blocker)]) == ExitCode.CACHE_ERROR
    err = capsys.readouterr().err
    assert err == f"Error: cache folder {blocker} (from --cache) is not a folder; choose another with --cache DIR or KG_CACHE_DIR\n"
    assert blocker.read_text() == "mine"


def test_info_on_a_read_only_folder_says_a_build_stops_not_that_it_moves_the_file(tmpfs, tmp_path, capsys, monkeypatch):
    import subprocess

    disk = tmpfs(1024)
    cache = disk / "kg"
    fill(cache, "v1", ["a", "b"])
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
    monkeypatch.setenv("KG_CACHE_DIR", str(cache))
    assert main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert "a build stops on it too" in out and "moves it aside" not in out
    assert main(["build", "seeds-never-read", "-o", str(tmp_path / "out")]) == ExitCode.CACHE_ERROR  # before reading any input
    assert "cannot be written" in capsys.readouterr().err
