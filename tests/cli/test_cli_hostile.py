"""The second hostile re-test of issue 23: options and outputs that gave tracebacks or damaged
a published build (the SERVICE escape and slow readers are in tests/sparql/)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kg.cli import main
from kg.errors import ExitCode

ASK = "ASK { ?s ?p ?o }"


@pytest.fixture
def out(seeds_out, tmp_path) -> Path:
    return Path(shutil.copytree(seeds_out, tmp_path / "out", symlinks=True))


@pytest.mark.parametrize(("command", "name"), [
    (["html", "-o", "{out}/graph.json"], "graph.json"),
    (["export", "--format", "graphml", "-o", "{out}/graph.json"], "graph.json"),
    (["export", "--format", "ttl", "-o", "{out}/papers.jsonl"], "papers.jsonl"),
])
def test_html_and_export_never_replace_another_output_of_the_build(out, capsys, command: list[str], name: str) -> None:
    """`kg export -f graphml -o out/graph.json` replaced the graph every reader needs."""
    before = (out / name).read_bytes()
    code = main([*(part.replace("{out}", str(out)) for part in command), "--graph", str(out)])
    assert code == ExitCode.OUTPUT_ERROR
    assert f"it is the build's own {name}" in capsys.readouterr().err
    assert (out / name).is_symlink() and (out / name).read_bytes() == before


@pytest.mark.parametrize("value", ["inf", "nan", "1e10", "1e300", "-1"])
@pytest.mark.parametrize("command", ["sparql", "serve"])
def test_a_timeout_that_is_no_number_of_seconds_is_a_usage_error(out, capsys, value: str, command: str) -> None:
    """`--timeout inf` overflowed select() with a traceback; `kg serve --timeout inf` dropped every connection."""
    argv = ["sparql", ASK] if command == "sparql" else ["serve", "--port", "0"]
    assert main([*argv, "--graph", str(out), "--timeout", value]) == ExitCode.USAGE
    assert "Invalid value for '--timeout'" in capsys.readouterr().err


@pytest.mark.parametrize("base", ["", "foo", "http://a b/", "urn:x", "http://x/#", "http://x/?q="])
@pytest.mark.parametrize("command", [["sparql", ASK], ["export", "-o", "-"]])
def test_a_base_that_is_no_iri_is_a_usage_error(out, capsys, base: str, command: list[str]) -> None:
    assert main([*command, "--graph", str(out), "--base", base]) == ExitCode.USAGE
    assert "is not an absolute http(s) IRI" in capsys.readouterr().err


@pytest.mark.parametrize("backend", ["rdflib", "oxigraph"])
def test_a_lone_surrogate_escape_is_refused(out, capsys, backend: str) -> None:
    assert main(["sparql", 'SELECT ("\\uD800" AS ?x) WHERE {}', "--graph", str(out), "--backend", backend]) == ExitCode.QUERY_SYNTAX
    assert capsys.readouterr().err == "Error: query refused: it holds a lone surrogate U+D800, which is not a character\n"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("args", [["sparql", "SELECT * WHERE { ?s ?p ?o }"], ["related", "HippoRAG"], ["export", "-f", "nt", "-o", "-"]])
def test_a_full_standard_output_is_one_line(out, args: list[str]) -> None:
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "kg", *args, "--graph", str(out)], stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    assert done.returncode == ExitCode.OUTPUT_ERROR
    assert done.stderr == "Error: cannot write the output: No space left on device\n"


def test_a_huge_focus_depth_stops_when_nothing_new_is_found(out, tmp_path, capsys) -> None:
    """`kg html --focus … --depth 1000000000` ran on for 30 s and more."""
    import time

    started = time.monotonic()
    assert main(["html", "--graph", str(out), "--focus", "HippoRAG", "--depth", "1000000000", "-o", str(tmp_path / "f.html")]) in (None, 0)
    assert time.monotonic() - started < 30 and (tmp_path / "f.html").is_file()
