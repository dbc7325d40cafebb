"""Query text checked before any parser sees it (kg.sparql.guard), and `kg sparql --timeout`."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kg.cli import main
from kg.errors import ExitCode, QueryFailed, QuerySyntaxError
from kg.graph import save
from kg.sparql import engine as sparql
from kg.sparql.guard import MAX_DEPTH, QueryRefused, QueryTimedOut, check_query, scan

# Text that may hold brackets, quotes and keywords without counting: (source, what it is).
INERT = st.sampled_from([
    '"{ ( [ SERVICE"', "'}}}) ]'", '"""multi { line\n ( " \' """', "'''{'''", r'"esc \" { "', r"'esc \' ('",
    "<http://x.org/a{b}>".replace("{", "").replace("}", "") + " ", "<urn:SERVICE>", "# { ( SERVICE comment\n",
    "?service", "$SERVICE", "ex:SERVICE", "service:x", "?a", "kg:Method", "1", "'x'@en", '"1"^^xsd:int',
])


@st.composite
def nested(draw, depth: int = 0) -> tuple[str, int]:
    """Random bracket nesting with inert text between: (text, its true depth)."""
    parts: list[str] = []
    deepest = depth
    for _ in range(draw(st.integers(0, 3 if depth < 12 else 0))):
        if draw(st.booleans()):
            parts.append(draw(INERT))
        else:
            opener, closer = draw(st.sampled_from(["{}", "()", "[]"]))
            inner, inner_depth = draw(nested(depth + 1))
            parts.append(f"{opener} {inner} {closer}")
            deepest = max(deepest, inner_depth)
    return " ".join(parts), deepest


@settings(max_examples=300, deadline=None)
@given(nested())
def test_depth_of_random_nestings(case: tuple[str, int]) -> None:
    text, depth = case
    shape = scan(text)
    assert shape.depth == depth
    assert shape.service is False


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("{}()[]<>#'\"\\ \nSERVICEab")), max_size=40))
def test_brackets_inside_strings_do_not_count(content: str) -> None:
    escaped = content.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    shape = scan(f'SELECT * WHERE {{ ?s ?p "{escaped}" }} # {content.splitlines()[0] if content.strip() else ""}')
    assert shape.depth == 1
    assert shape.service is False


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_scan_never_fails(text: str) -> None:
    scan(text)  # any text, unterminated strings and IRIs included


@pytest.mark.parametrize("query", [
    "SELECT * WHERE { SERVICE <http://127.0.0.1:9/> { ?s ?p ?o } }",
    "select * where { service silent <http://127.0.0.1:9/> { ?s ?p ?o } }",
    "SELECT * WHERE { ?s ?p ?o.SERVICE<http://127.0.0.1:9/>{} }",
    "SELECT * WHERE { SERVICE ?endpoint { ?s ?p ?o } }",
])
def test_service_is_found(query: str) -> None:
    assert scan(query).service
    with pytest.raises(QueryRefused, match="^query refused: SERVICE"):
        check_query(query)
    check_query(query, allow_service=True)


def test_limits() -> None:
    with pytest.raises(QueryRefused, match=r"^query refused: brackets nested 3,000 deep, above the limit of 64$"):
        check_query("SELECT * WHERE " + "{" * 3000 + "}" * 3000)
    with pytest.raises(QueryRefused, match="operators and UNIONs"):
        check_query("SELECT * WHERE { FILTER(1" + "+1" * 7000 + ") }")
    with pytest.raises(QueryRefused, match="operators and UNIONs"):
        check_query("SELECT * WHERE { {}" + " UNION {}" * 7000 + " }")
    with pytest.raises(QueryRefused, match="characters, above the limit"):
        check_query("#" * 300_000)
    check_query("SELECT * WHERE " + "{" * MAX_DEPTH + "}" * MAX_DEPTH)
    assert issubclass(QueryRefused, QuerySyntaxError) and issubclass(QueryTimedOut, QueryFailed)


def test_bundled_queries_pass() -> None:
    for text in sparql.example_queries().values():
        check_query(text)


@pytest.mark.parametrize("backend", ["oxigraph", "rdflib"])
def test_cli_deep_query_is_a_syntax_error(sample_dir, capsys, backend: str) -> None:
    """5,000 levels killed `kg sparql --backend oxigraph` with a segfault."""
    code = main(["sparql", "SELECT * WHERE " + "{" * 5000 + "}" * 5000, "--graph", str(sample_dir), "--backend", backend])
    assert code == ExitCode.QUERY_SYNTAX
    assert capsys.readouterr().err == "Error: query refused: brackets nested 5,000 deep, above the limit of 64\n"


def test_cli_service_refused_and_allowed(sample_dir, capsys) -> None:
    query = "SELECT * WHERE { SERVICE <http://127.0.0.1:9/sparql> { ?s ?p ?o } }"
    assert main(["sparql", query, "--graph", str(sample_dir), "--backend", "oxigraph"]) == ExitCode.QUERY_SYNTAX
    assert capsys.readouterr().err.startswith("Error: query refused: SERVICE (federated queries) is disabled")
    # allowed: it runs, and fails on the closed loopback port
    assert main(["sparql", query, "--graph", str(sample_dir), "--backend", "oxigraph", "--allow-service"]) == ExitCode.QUERY_FAILED


def child_pids() -> list[int]:
    """This process's live children (Linux /proc)."""
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":\t", 1) for line in status.read_text().splitlines() if ":\t" in line)
        except OSError:
            continue
        if fields.get("PPid", "").strip() == str(os.getpid()) and not fields.get("State", "").startswith("Z"):
            found.append(int(status.parent.name))
    return found


CROSS = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"  # 255^4 rows


@pytest.mark.parametrize("backend", ["oxigraph", "rdflib"])
def test_cli_timeout_stops_the_work(sample_dir, capsys, backend: str) -> None:
    others = set(child_pids())  # children of earlier tests, if any
    started = time.monotonic()
    code = main(["sparql", CROSS, "--graph", str(sample_dir), "--backend", backend, "--timeout", "1"])
    assert code == ExitCode.QUERY_FAILED
    assert capsys.readouterr().err == "Error: query stopped after the time limit of 1 s\n"
    assert time.monotonic() - started < 30
    assert set(child_pids()) <= others  # the child running it is gone


def test_timeout_keeps_errors_and_results(sample_dir) -> None:
    result = sparql.query(sample_dir, "SELECT ?id WHERE { ?p a fabio:ResearchPaper ; dcterms:identifier ?id } ORDER BY ?id", backend="oxigraph", timeout=30)
    assert [row[0].value for row in result.rows] == ["p1", "p2", "p3/x y"]
    with pytest.raises(QueryFailed) as caught:  # a binding error keeps its attributes across the fork
        sparql.query(sample_dir, "SELECT ?id WHERE { ?p dcterms:identifier ?id }", backend="oxigraph", bindings={"x": "1"}, timeout=30)
    assert caught.value.binding == "x"


def test_concurrent_first_queries_share_one_store(sample_graph, tmp_path) -> None:
    """Two first `kg sparql` on a fresh build raced on building the store (RocksDB corruption)."""
    save(sample_graph(), tmp_path)
    command = [sys.executable, "-m", "kg", "sparql", "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }", "--graph", str(tmp_path), "--backend", "oxigraph", "--format", "csv"]
    for _ in range(4):
        subprocess.run(["rm", "-rf", str(tmp_path / "graph.oxigraph")], check=True)
        runs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
        outputs = [run.communicate(timeout=120) for run in runs]
        assert [run.returncode for run in runs] == [0, 0], outputs
        assert [out for out, _ in outputs] == ["n\n322\n"] * 2  # text mode reads CRLF as \n
        assert sorted(p.name for p in tmp_path.iterdir() if "oxigraph" in p.name) == ["graph.oxigraph", "graph.oxigraph.lock"]
