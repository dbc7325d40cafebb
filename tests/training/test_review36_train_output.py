"""What the hostile review of issue 36 found in `kg train -o` (failing tests; src unchanged).

`kg train` replaces its output folder whole when training ends (``shutil.rmtree(target)``),
whatever the folder holds: ``-o .`` empties the folder kg runs in (the gold file with it) and
then fails (exit 18, "cannot write .: Invalid argument"); ``-o OUT`` of a build deletes the
build, its store and whatever the user kept there; ``-o`` the cache folder deletes the cache,
which `kg build -o` now refuses (item 8). Only a model folder kg wrote should be replaced.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from kg.cli import main

GOLD = Path(__file__).resolve().parents[1] / "fixtures" / "extract" / "gold_tiny.jsonl"


def train(out: str, gold: Path = GOLD) -> int | None:
    return main(["train", str(gold), "--dev", str(gold), "-o", out, "--max-steps", "2", "-q"])


def test_train_into_the_working_folder_deletes_nothing_of_the_users(tmp_path, monkeypatch) -> None:
    work = tmp_path / "work"
    work.mkdir()
    gold = Path(shutil.copy(GOLD, work / "gold.jsonl"))
    (work / "thesis.tex").write_text("months of work\n", encoding="utf-8")
    monkeypatch.chdir(work)
    train(".", gold)
    assert {"gold.jsonl", "thesis.tex"} <= {p.name for p in work.iterdir()}
    assert (work / "thesis.tex").read_text(encoding="utf-8") == "months of work\n"


def test_train_into_a_build_output_folder_leaves_the_build(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    source = tmp_path / "papers.jsonl"
    source.write_text(json.dumps({"id": "a1", "title": "T", "abstract": "We propose the Transformer and train it on WMT."}) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    assert main(["build", str(source), "-o", str(out), "--no-cache"]) in (0, None)
    (out / "notes.txt").write_text("mine\n", encoding="utf-8")
    train(str(out))
    assert (out / "graph.json").is_file() and (out / "notes.txt").is_file()


def test_train_into_the_cache_folder_is_refused_as_build_is(tmp_path, monkeypatch) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "extract.sqlite").write_bytes(b"")
    monkeypatch.setenv("KG_CACHE_DIR", str(cache))
    assert train(str(cache)) == 18
    assert (cache / "extract.sqlite").exists()


def test_train_into_a_folder_that_is_no_model_is_refused_before_training(tmp_path) -> None:
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "thesis.tex").write_text("x", encoding="utf-8")
    assert train(str(folder)) == 18
    assert (folder / "thesis.tex").is_file()
