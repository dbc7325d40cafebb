"""The shape of tests/ and bench/: shared code lives in conftest.py, no file shadows a standard
library module, and the tests need nothing beyond `pip install -e '.[test]'`."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Scripts under tests/fixtures/ make fixtures by hand (make_tiny.py needs onnx, of the train extra); the tests never import them.
TEST_FILES = sorted(path for path in (ROOT / "tests").rglob("*.py") if "fixtures" not in path.relative_to(ROOT / "tests").parts)


def imported_modules(path: Path) -> set[str]:
    """Top-level names of every module `path` imports (`import a.b`, `from a import b`,
    `pytest.importorskip("a.b")`); a relative import counts as ".": a sibling module."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.add("." if node.level else node.module.split(".")[0])
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "importorskip"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            found.add(node.args[0].value.split(".")[0])
    return found


def test_no_test_module_imports_another() -> None:
    """Shared helpers are conftest.py fixtures; a test module importing another runs its tests'
    module code twice and ties the two files together."""
    local = {path.stem for path in TEST_FILES} | {"."}
    assert len(TEST_FILES) > 20 and "conftest" in local
    offenders = {path.name: sorted(imported_modules(path) & local) for path in TEST_FILES}
    assert {name: modules for name, modules in offenders.items() if modules} == {}


def test_the_import_check_sees_imports(tmp_path: Path) -> None:
    """The check above is not vacuous: it finds every form of import, nested ones too."""
    module = tmp_path / "test_example.py"
    module.write_text(
        "import os.path\nfrom test_rdf import sample_graph\nfrom . import helpers\n"
        "def test_x():\n    import conftest\n    jsonschema = pytest.importorskip('jsonschema.validators')\n",
        encoding="utf-8",
    )
    assert imported_modules(module) == {"os", "test_rdf", ".", "conftest", "jsonschema"}
    assert "playwright" in imported_modules(ROOT / "tests" / "html" / "test_html_browser.py")


def test_no_file_shadows_a_standard_library_module() -> None:
    """`python bench/x.py` puts bench/ first on sys.path and pytest puts tests/ there: a
    bench/html.py would be imported instead of the standard library's html."""
    scripts = sorted((ROOT / "bench").glob("*.py")) + TEST_FILES
    assert len(scripts) > len(TEST_FILES)
    assert [str(p.relative_to(ROOT)) for p in scripts if p.stem in sys.stdlib_module_names] == []


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_tests_import_only_declared_dependencies() -> None:
    """The README's test command installs `.[test]`: every third-party module a test imports
    must come from kg's dependencies or its `test` extra, not from another extra or by accident."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = project["dependencies"] + project["optional-dependencies"]["test"]
    declared = {_normalise(re.match(r"[A-Za-z0-9._-]+", requirement).group()) for requirement in requirements}
    local = {path.stem for path in TEST_FILES} | {".", "kg", "__future__"}
    distributions = packages_distributions()
    undeclared = {}
    for path in TEST_FILES:
        for module in sorted(imported_modules(path) - local - set(sys.stdlib_module_names)):
            providers = {_normalise(dist) for dist in distributions.get(module, [module])}
            if not providers & declared:
                undeclared[f"{path.name}: {module}"] = sorted(providers)
    assert undeclared == {}


def test_ci_lints_with_ruff_before_the_tests() -> None:
    """ruff (rules E, F, I, B at least, configured in pyproject.toml) runs in .ci/run before pytest."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "ruff check src tests bench" in ci and ci.index("ruff check") < ci.index("-m pytest")
    lint = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"]["lint"]
    assert {"E", "F", "I", "B"} <= set(lint["select"])


def test_ci_runs_the_type_checker_strict_and_builds_the_site_strict() -> None:
    """mypy, strict on src/kg as pyproject.toml configures it, and `mkdocs build --strict` run in
    .ci/run (uncommented), in a venv with the extras they need."""
    lines = [line for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines() if not line.lstrip().startswith("#")]
    assert any(re.search(r"\.venv/bin/mypy(\s|$|&)", line) and "typecheck" in line for line in lines)
    assert any("mkdocs build --strict" in line and "docs" in line for line in lines)
    mypy = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert mypy["strict"] is True and mypy["files"] == ["src/kg"]
    assert all("ignore_errors" not in override for override in mypy.get("overrides", []))


def _pytest_options() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]


def test_the_default_leg_leaves_out_the_opt_in_markers_and_ci_runs_each() -> None:
    """`pytest` alone leaves out the slow, torch and network tests (pyproject's addopts);
    .ci/run runs each of those legs after the default one, none commented out."""
    options = _pytest_options()
    left_out = set(re.findall(r"\bnot (\w+)", options["addopts"]))
    assert left_out == {"slow", "torch", "network"}
    assert left_out <= {marker.split(":")[0] for marker in options["markers"]}
    lines = [line for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines() if not line.lstrip().startswith("#")]
    default = next(i for i, line in enumerate(lines) if line.endswith(".venv/bin/python -m pytest"))
    for marker in left_out:
        assert [line for line in lines[default + 1 :] if re.search(rf"-m pytest -m \"?{marker}\b", line)], f".ci/run runs no {marker} leg"


def test_warnings_are_errors_but_for_named_third_party_ones() -> None:
    """Every warning fails its test, except those filtered by category, message and a module
    that is not kg's: a warning of kg's own is fixed or asserted with pytest.warns."""
    filters = _pytest_options()["filterwarnings"]
    assert filters[0] == "error" and len(filters) > 1
    for entry in filters[1:]:
        action, message, category, module = entry.split(":")[:4]
        assert action == "ignore" and message and category.endswith("Warning") and module, entry
        assert not re.match(module, "kg") and not re.match(module, "kg.cli"), entry
