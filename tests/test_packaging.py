"""The installed package must carry every subpackage and data file, not only the editable checkout:
a wheel is built from the source tree (no registry: the installed setuptools builds it) and read."""

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "kg"
SCHEMAS = ROOT / "schemas"  # shipped as kg.schemas


def _files(folder: Path) -> set[str]:
    """Every file below `folder` that a checkout holds (not what running Python leaves there)."""
    return {
        path.relative_to(folder).as_posix()
        for path in folder.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    """A wheel built from a copy of the tree (building writes build/ and egg-info where it runs)."""
    work = tmp_path_factory.mktemp("packaging")
    source = work / "source"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in ("src", "schemas"):
        shutil.copytree(ROOT / name, source / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    built = subprocess.run(
        [sys.executable, "-c", "import sys; from setuptools import build_meta; print(build_meta.build_wheel(sys.argv[1]))", str(work / "dist")],
        cwd=source, capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )  # fmt: skip
    assert built.returncode == 0, built.stderr[-3000:]
    with zipfile.ZipFile(work / "dist" / built.stdout.split()[-1]) as archive:
        yield archive


def test_the_wheel_holds_every_subpackage(wheel):
    on_disk = {".".join(("kg", *path.parent.relative_to(PACKAGE).parts)) for path in PACKAGE.rglob("__init__.py")}
    assert {"kg", "kg.cli", "kg.related_work"} <= on_disk
    shipped = {name.removesuffix("/__init__.py").replace("/", ".") for name in wheel.namelist() if name.endswith("/__init__.py")}
    assert shipped == on_disk | {"kg.schemas"}


def test_the_wheel_holds_every_file_of_the_package_and_the_schemas_and_nothing_else(wheel):
    expected = {f"kg/{name}" for name in _files(PACKAGE)} | {f"kg/schemas/{name}" for name in _files(SCHEMAS)}
    assert {"kg/py.typed", "kg/assets/graph.js", "kg/models/recognizer/meta.json", "kg/schemas/shapes.ttl", "kg/schemas/vocab/methods.tsv"} <= expected
    shipped = {name for name in wheel.namelist() if not name.startswith("kg-0.1.0.dist-info/")}
    assert shipped == expected


def test_the_shipped_models_stay_small(wheel):
    sizes = {"recognizer": 0, "minilm": 0}
    for info in wheel.infolist():
        parts = info.filename.split("/")
        if parts[:2] == ["kg", "models"] and parts[2] in sizes:
            sizes[parts[2]] += info.file_size
    assert 0 < sizes["recognizer"] <= 25_000_000  # ≤ 25 MB: an int8 MiniLM token classifier (22.8 MB) and its tokenizer
    assert 0 < sizes["minilm"] <= 25_000_000  # ≤ 25 MB
