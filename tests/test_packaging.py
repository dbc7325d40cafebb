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


def test_package_data_carries_every_file_of_the_shipped_recognizer():
    import fnmatch

    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["kg"]
    model = ROOT / "src" / "kg" / "models" / "recognizer"
    files = [p.relative_to(ROOT / "src" / "kg").as_posix() for p in model.rglob("*") if p.is_file()]
    assert "models/recognizer/meta.json" in files and "models/recognizer/model-card.md" in files
    missing = [f for f in files if not any(fnmatch.fnmatch(f, pattern) and f.count("/") == pattern.count("/") for pattern in patterns)]
    assert missing == []
    assert sum((model / f.removeprefix("models/recognizer/")).stat().st_size for f in files) <= 20_000_000  # ≤ 20 MB


def test_package_data_carries_the_shipped_embedding_model():
    import fnmatch

    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["kg"]
    model = ROOT / "src" / "kg" / "models" / "minilm"
    files = sorted(p.relative_to(ROOT / "src" / "kg").as_posix() for p in model.rglob("*") if p.is_file())
    assert {"models/minilm/model-int8.onnx", "models/minilm/tokenizer.json", "models/minilm/README.md"} <= set(files)
    missing = [f for f in files if not any(fnmatch.fnmatch(f, pattern) and f.count("/") == pattern.count("/") for pattern in patterns)]
    assert missing == []
    assert sum((model / f.removeprefix("models/minilm/")).stat().st_size for f in files) <= 25_000_000  # ≤ 25 MB
