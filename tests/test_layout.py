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
TEST_FILES = sorted((ROOT / "tests").rglob("*.py"))


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
