"""The extraction cache key holds what shapes extraction (a declared version, spaCy, the models,
the data files and word lists by value), not source bytes: moving code or editing a comment keeps
every cached extraction."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import kg

SRC = Path(kg.__file__).resolve().parent

PROBE = "from kg.extract.pipeline import pipeline_version; print(pipeline_version()); print(pipeline_version(recognizer=None))"


def versions_of(package: Path) -> list[str]:
    """pipeline_version() of the kg package at `package` (a copy), in a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(package.parent)!r}); import kg; assert kg.__file__.startswith({str(package)!r}); {PROBE}"],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    return done.stdout.split()


def copy_kg(tmp_path: Path) -> Path:
    copy = tmp_path / "src" / "kg"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def test_comments_and_moved_code_keep_the_cache_key(tmp_path: Path) -> None:
    copy = copy_kg(tmp_path)
    for module in ("words.py", "vocab.py", "model.py", "pipeline.py"):
        path = next(copy.rglob(module))
        path.write_text("# a comment that changes no output\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    helper = next(copy.rglob("markup.py"))
    (helper.parent / "markup_moved.py").write_text(helper.read_text(encoding="utf-8"), encoding="utf-8")  # code added elsewhere
    assert versions_of(copy) == versions_of(SRC)


def test_a_changed_word_list_changes_the_cache_key(tmp_path: Path) -> None:
    copy = copy_kg(tmp_path)
    words = next(copy.rglob("words.py"))
    text = words.read_text(encoding="utf-8")
    assert '"a an the this these those that such our their its"' in text
    words.write_text(text.replace('"a an the this these those that such our their its"', '"a an the this these those that such our their its my"'), encoding="utf-8")
    before, after = versions_of(SRC), versions_of(copy)
    assert before[0] != after[0] and before[1] != after[1]
    assert before[0].split("+")[1:] == after[0].split("+")[1:]  # only kg's own part moved
