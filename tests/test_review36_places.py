"""What the hostile review of issue 36 found in `kg.util.places` (failing tests; src unchanged).

The rule compares real paths (links resolved) and names (``.kg``, ``graph.oxigraph``); a bind
mount of the cache folder, or of a build's ``.kg`` or store, is the same folder under another
real path and name, so ``-o`` the bind of the cache folder builds among ``extract.sqlite``
(exit 0), as item 8 reported for links. Comparing device and inode numbers (os.path.samefile
on the folder and its parents) would see it. Needs root to mount; skipped elsewhere.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from kg.cli import main
from kg.errors import ExitCode


@pytest.fixture
def bind(tmp_path) -> Iterator:
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("needs root to bind-mount")
    mounted: list[Path] = []

    def mount(source: Path, target: Path) -> Path:
        target.mkdir(parents=True, exist_ok=True)
        if subprocess.run(["mount", "--bind", str(source), str(target)], capture_output=True).returncode != 0:
            pytest.skip("bind mounts are not allowed here")
        mounted.append(target)
        return target

    yield mount
    for target in reversed(mounted):
        subprocess.run(["umount", str(target)], check=False)


def test_o_a_bind_mount_of_the_cache_folder_is_refused(tmp_path, bind, capsys) -> None:
    source = tmp_path / "papers.jsonl"
    source.write_text(json.dumps({"id": "a1", "title": "T", "abstract": "We propose the Transformer and train it on WMT."}) + "\n", encoding="utf-8")
    cache = tmp_path / "cache"
    cache.mkdir()
    alias = bind(cache, tmp_path / "alias")
    code = main(["build", str(source), "-o", str(alias), "--cache", str(cache)])
    assert code == ExitCode.OUTPUT_ERROR, capsys.readouterr().err
    assert not (cache / "graph.json").exists()
