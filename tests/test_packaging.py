"""The installed package must carry every subpackage and data file, not only the editable checkout."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_subpackage_is_listed_in_pyproject():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    on_disk = {
        ".".join(path.parent.relative_to(ROOT / "src").parts)
        for path in (ROOT / "src").rglob("__init__.py")
    }
    on_disk.add("kg.schemas")  # mapped from the top-level schemas/ folder
    assert set(config["packages"]) == on_disk
    assert config["package-dir"]["kg.schemas"] == "schemas"
