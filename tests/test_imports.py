"""Heavy libraries are imported only by what needs them: `kg related` and `kg sparql` start fast.

Each check runs in a fresh interpreter, since this test process has imported everything.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kg.cli import COMMANDS
from kg.graph import save

HEAVY = ("spacy", "pyoxigraph", "networkx", "rdflib")


def imported_after(code: str) -> set[str]:
    """Which of HEAVY are in sys.modules after running `code` in a new interpreter."""
    probe = f"{code}\nimport sys\nprint(' '.join(name for name in {HEAVY!r} if name in sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return set(done.stdout.splitlines()[-1].split()) if done.stdout.strip() else set()


def test_rdf_terms_are_light() -> None:
    assert imported_after("import kg.rdf.terms") == set()


def test_cli_related_is_light() -> None:
    assert imported_after("import kg.cli, kg.cli.related") == set()


def test_cli_sparql_imports_only_pyoxigraph() -> None:
    assert imported_after("import kg.cli, kg.cli.sparql") == {"pyoxigraph"}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_no_command_module_imports_spacy(name: str) -> None:
    assert "spacy" not in imported_after(f"import {COMMANDS[name].split(':')[0]}")


def test_sparql_over_the_cached_store_needs_neither_networkx_nor_rdflib(sample_graph, tmp_path: Path) -> None:
    save(sample_graph(), tmp_path)
    run = f"from kg.cli import main\nassert main(['sparql', 'ASK {{}}', '--graph', {str(tmp_path)!r}, '--backend', 'oxigraph']) == 0"
    assert imported_after(run) == {"pyoxigraph", "networkx"}  # the first query builds the store from graph.json
    assert imported_after(run) == {"pyoxigraph"}  # later ones only open it


def test_leaderboard_over_its_index_imports_nothing_heavy(sample_graph, tmp_path: Path) -> None:
    from kg.leaderboard import write_index

    graph = sample_graph()
    save(graph, tmp_path)
    run = f"from kg.cli import main\nassert main(['leaderboard', 'musique', '--graph', {str(tmp_path)!r}]) == 0"
    assert imported_after(run) == {"networkx"}  # no index: graph.json is read
    write_index(graph, tmp_path)
    assert imported_after(run) == set()
