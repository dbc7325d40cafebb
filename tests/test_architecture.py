"""The shape of the code: data flows one way (no import cycle), light modules stay light,
and the public API is plain functions."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

import kg

SRC = Path(kg.__file__).resolve().parent
MAX_LINES = 500  # per module; assets (page script and styles) are not modules


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(SRC.rglob("*.py"))}


def import_graph() -> nx.DiGraph:
    """kg module → kg modules it imports, from every import statement in it: top-level,
    inside functions and under ``if TYPE_CHECKING`` alike. ``from pkg import name`` points
    at ``pkg.name`` when that is a module, else at ``pkg``."""
    modules = _modules()
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative import
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
            for target in targets:
                if target in modules and target != name:
                    graph.add_edge(name, target)
    return graph


def test_the_import_graph_sees_lazy_and_type_checking_imports():
    graph = import_graph()
    assert graph.has_edge("kg.builder", "kg.concepts.find")  # imported inside build()
    assert graph.has_edge("kg.extract.components", "kg.extract.components.roles")  # imported inside register()
    assert graph.has_edge("kg.concepts.find", "kg.concepts.resolve") and graph.has_edge("kg.concepts.find", "kg.concepts.propagate")


def test_no_import_cycle_anywhere_in_kg():
    cycles = sorted(sorted(cycle) for cycle in nx.simple_cycles(import_graph()))
    assert cycles == [], "import cycles: " + "; ".join(" → ".join(cycle) for cycle in cycles)


# The stages in data-flow order: a package may import only packages of a lower layer or its own.
LAYERS: list[set[str]] = [
    {"kg", "model", "errors"},  # kg itself: the version and the lazily bound public API
    {"util", "text"},  # helpers and spaCy-free language knowledge
    {"results"},  # result claims: found while extracting, linked once concepts are resolved
    {"ingest"},
    {"extract"},
    {"concepts"},
    {"graph"},
    {"generations"},
    {"related_work", "rdf", "leaderboard"},  # readers of a built graph: related work, RDF, leaderboards
    {"sparql", "html"},
    {"training"},
    {"builder"},
    {"cli"},
    {"__main__"},
]
LAYER = {package: rank for rank, packages in enumerate(LAYERS) for package in packages}


def package_of(module: str) -> str:
    """kg.extract.papers → extract; kg.model → model; kg → kg."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "kg"


def package_graph() -> nx.DiGraph:
    graph = nx.DiGraph()
    for source, target in import_graph().edges():
        if package_of(source) != package_of(target):
            graph.add_edge(package_of(source), package_of(target))
    return graph


def test_every_package_has_a_layer():
    assert set(map(package_of, _modules())) <= set(LAYER)
    assert all((SRC / package / "__init__.py").is_file() for package in LAYER if package not in {"kg", "model", "errors", "graph", "generations", "leaderboard", "builder", "__main__"})


def test_packages_import_only_earlier_stages():
    upward = sorted(f"{a} → {b}" for a, b in package_graph().edges() if LAYER[b] >= LAYER[a])
    assert upward == [], "imports against the data flow: " + ", ".join(upward)


def test_the_package_rules_of_the_layout():
    graph = package_graph()
    assert set(graph.successors("util")) <= {"model", "errors"} and set(graph.successors("text")) <= {"model", "errors"}
    assert not nx.has_path(graph, "extract", "concepts")
    assert not nx.has_path(graph, "related_work", "html")
    assert not nx.has_path(graph, "rdf", "sparql")
    assert all(not nx.has_path(graph, package, "cli") for package in LAYER if package not in {"cli", "__main__"})


def test_no_module_imports_another_modules_private_names():
    """A name another module needs is public: `from kg.x import _helper` is refused."""
    modules = _modules()
    private = []
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("kg"):
                private += [f"{name}: {node.module}.{alias.name}" for alias in node.names if alias.name.startswith("_") and not alias.name.startswith("__")]
    assert private == []


def test_stages_import_forwards_only():
    """Extraction knows nothing of resolution, resolution nothing of propagation."""
    graph = import_graph()
    assert not nx.has_path(graph, "kg.extract.papers", "kg.concepts.resolve")
    assert not nx.has_path(graph, "kg.concepts.resolve", "kg.concepts.propagate")
    assert not nx.has_path(graph, "kg.concepts.propagate", "kg.concepts.resolve")
    # The page lists each paper's related papers, so html uses the ranking; the ranking
    # (which `kg related` loads without networkx) never reaches the page.
    assert not nx.has_path(graph, "kg.related_work.rank", "kg.html")


@pytest.mark.parametrize("path", sorted(_modules().values()), ids=lambda p: str(p.relative_to(SRC)))
def test_modules_stay_small(path):
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(SRC)} has {lines} lines"


def _imports_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print(' '.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(done.stdout.split())


@pytest.mark.parametrize("module", ["kg.text.words", "kg.text.markup", "kg.model", "kg.text.vocab", "kg.concepts.resolve", "kg.concepts.propagate", "kg.extract.components", "kg.related_work.lookup"])
def test_data_and_corpus_stages_do_not_import_spacy(module):
    loaded = _imports_after(f"import {module}")
    assert "spacy" not in loaded and "thinc" not in loaded


def test_public_api_is_plain_functions_even_after_importing_their_modules():
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import types, kg, kg.builder, kg.related_work.rank, kg.graph, kg.cli.build, kg.cli.related;"
            "print(all(isinstance(f, types.FunctionType) for f in (kg.build, kg.related, kg.load, kg.read_corpus)),"
            " kg.build is kg.builder.build, kg.related is kg.related_work.rank.related)",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert loaded.stdout.split() == ["True", "True", "True"]
