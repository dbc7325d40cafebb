"""Library messages name no CLI flag or command; the CLI adds them (`kg.cli.common.error_text`).

The `kg …` error lines stay what they were; the same errors raised by the library alone
state only the problem.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from kg.cli import main
from kg.errors import ExitCode, GraphNotFound, InputError, QueryFailed, QuerySyntaxError
from kg.graph import load, save
from kg.ingest import read_corpus
from kg.sparql import engine as sparql

SRC = Path(__file__).resolve().parents[2] / "src" / "kg"
CLI_WORDS = re.compile(r"--[a-z]|`kg [a-z]")


def message_texts(path: Path) -> list[str]:
    """Every string in a module but its docstrings (which may well name commands)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}
    return [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


@pytest.mark.parametrize("path", sorted(p for p in SRC.rglob("*.py") if "cli" not in p.relative_to(SRC).parts), ids=lambda p: str(p.relative_to(SRC)))
def test_library_strings_name_no_flag_or_command(path: Path) -> None:
    assert [text for text in message_texts(path) if CLI_WORDS.search(text)] == []


def test_missing_graph(tmp_path: Path, capsys) -> None:
    with pytest.raises(GraphNotFound) as caught:
        load(tmp_path / "nowhere")
    assert (caught.value.message, caught.value.folder) == (f"no graph at {tmp_path / 'nowhere' / 'graph.json'}", str(tmp_path / "nowhere"))
    assert main(["export", "--graph", str(tmp_path / "nowhere")]) == ExitCode.GRAPH_NOT_FOUND
    assert capsys.readouterr().err == f"Error: no graph at {tmp_path / 'nowhere' / 'graph.json'}; run `kg build INPUT… -o {tmp_path / 'nowhere'}` first\n"


@pytest.mark.parametrize("command", [["serve", "--port", "0"], ["html"], ["export"], ["related", "x"], ["sparql", "ASK {}"]])
def test_a_graph_folder_not_built_yet_is_named_in_the_build_suggested(tmp_path: Path, capsys, command: list[str]) -> None:
    """Issue 36: `kg serve --graph nonexistent` suggested `kg build … -o .` (so did html and export)."""
    missing = tmp_path / "nonexistent"
    assert main([*command, "--graph", str(missing)]) == ExitCode.GRAPH_NOT_FOUND
    assert capsys.readouterr().err == f"Error: no graph at {missing / 'graph.json'}; run `kg build INPUT… -o {missing}` first\n"
    other = tmp_path / "graph-file.json"  # a file named with its extension stays a file
    assert main([*command, "--graph", str(other)]) == ExitCode.GRAPH_NOT_FOUND
    assert capsys.readouterr().err == f"Error: no graph at {other}; run `kg build INPUT… -o {tmp_path}` first\n"


@pytest.mark.parametrize("command", [["serve", "--port", "0"], ["html"], ["export"], ["related", "x"], ["sparql", "ASK {}"]])
@pytest.mark.parametrize("name", ["out.v2", "graphs/2024.01"])
def test_a_dotted_graph_folder_not_built_yet_is_named_in_the_build_suggested(tmp_path: Path, capsys, name: str, command: list[str]) -> None:
    """Found by the hostile review of issue 36: a folder with a dot in its name was read as a file,
    and the build suggested was into its parent (`-o .`, `-o graphs`)."""
    missing = tmp_path / name
    assert main([*command, "--graph", str(missing)]) == ExitCode.GRAPH_NOT_FOUND
    err = capsys.readouterr().err
    assert f"run `kg build INPUT… -o {missing}` first" in err
    assert err == f"Error: no graph at {missing / 'graph.json'}; run `kg build INPUT… -o {missing}` first\n"


def test_invalid_record(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    Path("bad.jsonl").write_text("{not json}\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_corpus(["bad.jsonl"])
    assert caught.value.skippable
    assert "skip" not in caught.value.message
    assert main(["build", "bad.jsonl", "-o", "out", "--quiet"]) == ExitCode.MALFORMED_RECORD
    assert capsys.readouterr().err == f"Error: {caught.value.message} (--skip-invalid skips invalid records)\n"


@pytest.mark.parametrize(("query", "binding", "error", "library", "cli"), [
    ("ASK {}", "a b=x", QuerySyntaxError, "bindings: 'a b' is not a SPARQL variable name", "--bind: 'a b' is not a SPARQL variable name"),
    ("ASK {}", "p=<not an iri>", QuerySyntaxError, "binding p: invalid IRI <not an iri> (", "--bind p: invalid IRI <not an iri> ("),
    ("SELECT ?t WHERE { ?x dcterms:title ?t }", "p=x", QueryFailed, "binding p: the query must SELECT ?p to bind it", "--bind p: the query must SELECT ?p to bind it"),
])
def test_binding_errors(sample_graph, tmp_path: Path, capsys, query: str, binding: str, error: type, library: str, cli: str) -> None:
    save(sample_graph(), tmp_path)
    name, _, value = binding.partition("=")
    with pytest.raises(error) as caught:
        sparql.query(tmp_path, query, bindings={name: value})
    assert caught.value.message.startswith(library)
    assert main(["sparql", query, "--graph", str(tmp_path), "--bind", binding]) == error.exit_code
    assert capsys.readouterr().err.startswith(f"Error: {cli}")


def test_every_exit_code_is_in_the_documented_table() -> None:
    """The exit-code table of the documentation (docs/exit-codes.md) lists exactly kg's codes (and 130, interrupted)."""
    table = (SRC.parents[1] / "docs" / "exit-codes.md").read_text(encoding="utf-8")
    documented = {int(code) for code in re.findall(r"^\| (\d+) \|", table, flags=re.MULTILINE)}
    assert documented == {int(code) for code in ExitCode} | {130}
