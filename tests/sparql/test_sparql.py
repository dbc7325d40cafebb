"""kg.sparql.engine and `kg sparql` on the hand-made sample graph: exact rows, both backends."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from kg.cli import main
from kg.errors import ExitCode, InputNotFound, QueryFailed, QuerySyntaxError
from kg.graph import save
from kg.sparql import engine as sparql

BACKENDS = ("rdflib", "oxigraph")

# (query name, bindings, expected rows as plain strings)
EXPECTED = [
    ("papers_using_dataset", {}, [("MuSiQue", "p1", "HippoRAG: memory", "1"), ("MuSiQue", "p2", 'A study of <b>BERT</b> & "friends"', "1")]),
    ("papers_using_dataset", {"dataset": "MuSiQue"}, [("MuSiQue", "p1", "HippoRAG: memory", "1"), ("MuSiQue", "p2", 'A study of <b>BERT</b> & "friends"', "1")]),
    ("papers_using_dataset", {"dataset": "ImageNet"}, []),
    ("methods_per_task", {}, [("question answering", "HippoRAG", "1")]),
    ("hardware_per_paper", {}, [("p1", "HippoRAG: memory", "A100", "1")]),
    ("hardware_per_paper", {"paperId": "p2"}, []),
    ("shared_concepts", {"paperA": "p1", "paperB": "p2"}, [("p1", "p2", "Dataset", "MuSiQue"), ("p1", "p2", "Method", "HippoRAG")]),
    ("shared_concepts", {"paperA": "p2", "paperB": "p3/x y"}, []),
    ("related_shared_concepts", {"paperId": "p1"}, [("p1", "p2", 'A study of <b>BERT</b> & "friends"', "2"), ("p1", "p3/x y", "Transformers", "1")]),
    ("related_shared_concepts", {"paperId": "p3/x y"}, [("p3/x y", "p1", "HippoRAG: memory", "1")]),
]


def test_bundled_queries_include_the_five_examples() -> None:
    assert {"hardware_per_paper", "methods_per_task", "papers_using_dataset", "related_shared_concepts", "shared_concepts"} <= set(sparql.example_queries())


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("name", "bindings", "rows"), EXPECTED)
def test_example_query_rows(sparql_backends, backend: str, name: str, bindings: dict, rows: list, plain_rows) -> None:
    result = sparql_backends[backend].query(sparql.example_queries()[name], bindings)
    assert result.backend == backend
    assert plain_rows(result) == rows


@pytest.mark.parametrize(("name", "bindings", "rows"), EXPECTED)
def test_backends_return_identical_terms(sparql_backends, name: str, bindings: dict, rows: list) -> None:
    text = sparql.example_queries()[name]
    assert sparql_backends["rdflib"].query(text, bindings) == sparql_backends["oxigraph"].query(text, bindings)


@pytest.mark.parametrize("backend", BACKENDS)
def test_terms_keep_types(sparql_backends, backend: str) -> None:
    result = sparql_backends[backend].query("SELECT ?p (COUNT(?c) AS ?n) WHERE { ?p dcterms:subject ?c } GROUP BY ?p ORDER BY ?p")
    assert result.variables == ("p", "n")
    first = result.rows[0]
    assert first[0] == sparql.Term("uri", "https://w3id.org/kg-ml/resource/paper/p1")
    assert first[1] == sparql.Term("literal", "4", "http://www.w3.org/2001/XMLSchema#integer")


@pytest.mark.parametrize("backend", BACKENDS)
def test_ask_and_construct(sparql_backends, backend: str, plain_rows) -> None:
    assert sparql_backends[backend].query("ASK { ?p kg:proposes ?c }").boolean is True
    assert sparql_backends[backend].query("ASK { ?p kg:usesHardware ?c . ?p kg:reportsMetric ?m }").boolean is False
    built = sparql_backends[backend].query("CONSTRUCT { ?c skos:prefLabel ?l } WHERE { ?c a kg:Metric ; skos:prefLabel ?l }")
    assert built.variables == ("subject", "predicate", "object")
    assert plain_rows(built) == [("https://w3id.org/kg-ml/resource/concept/metric%2Ff1", "http://www.w3.org/2004/02/skos/core#prefLabel", "F1")]


@pytest.mark.parametrize("backend", BACKENDS)
def test_syntax_error_names_line_and_column(sparql_backends, backend: str) -> None:
    # rdflib's own parser says only "Expected SelectQuery"; kg reports Oxigraph's clearer
    # message for both sparql_backends. (Oxigraph may place the column one past the bad token.)
    with pytest.raises(QuerySyntaxError) as caught:
        sparql_backends[backend].query("SELECT ?s\nWHERE { ?s ?p\n}")
    assert re.fullmatch(r"SPARQL syntax error at line 3, column [12]: expected one of .+", caught.value.message)


@pytest.mark.parametrize("backend", BACKENDS)
def test_undeclared_prefix(sparql_backends, backend: str) -> None:
    with pytest.raises(QuerySyntaxError) as caught:
        sparql_backends[backend].query("SELECT * WHERE {\n  ?s nope:p ?o }")
    assert caught.value.message.startswith("SPARQL syntax error at line 2, column ")
    assert "undeclared prefix" in caught.value.message


@pytest.mark.parametrize("backend", BACKENDS)
def test_runtime_failure_is_query_failed(sparql_backends, backend: str) -> None:
    # SERVICE (allowed) to a closed loopback port: fails while running, never leaves the machine.
    service = "SELECT * WHERE { SERVICE <http://127.0.0.1:9/sparql> { ?s ?p ?o } }"
    with pytest.raises(QueryFailed) as caught:
        sparql_backends[backend].query(service, allow_service=True)
    assert caught.value.message.startswith("SPARQL query failed: ")
    with pytest.raises(QuerySyntaxError, match="^query refused: SERVICE"):  # refused by default
        sparql_backends[backend].query(service)


def test_bindings_are_checked() -> None:
    with pytest.raises(QuerySyntaxError, match="not a SPARQL variable name"):
        sparql.parse_bindings({"a b": "x"})
    with pytest.raises(QuerySyntaxError, match="invalid IRI"):
        sparql.parse_bindings({"p": "<not an iri>"})
    assert sparql.parse_bindings({"?p": "<https://x.org/a>"})["p"].value == "https://x.org/a"


@pytest.mark.parametrize("backend", BACKENDS)
def test_iri_binding(sparql_backends, backend: str, plain_rows) -> None:
    paper = "https://w3id.org/kg-ml/resource/paper/p3%2Fx%20y"
    result = sparql_backends[backend].query("SELECT ?p ?t WHERE { ?p dcterms:title ?t }", {"p": f"<{paper}>"})
    assert plain_rows(result) == [(paper, "Transformers")]
    # SEP-0007 substitution (Oxigraph) needs the bound variable in the projection: same rule on both
    with pytest.raises(QueryFailed) as caught:
        sparql_backends[backend].query("SELECT ?t WHERE { ?p dcterms:title ?t }", {"p": f"<{paper}>"})
    assert caught.value.message == "binding p: the query must SELECT ?p to bind it"  # `kg sparql` says --bind p


def test_read_query(tmp_path) -> None:
    path = tmp_path / "q.rq"
    path.write_text("ASK {}", encoding="utf-8")
    assert sparql.read_query(f"@{path}") == "ASK {}"
    assert sparql.read_query("@methods_per_task") == sparql.example_queries()["methods_per_task"]
    assert sparql.read_query("@methods_per_task.rq") == sparql.example_queries()["methods_per_task"]
    assert sparql.read_query("SELECT 1") == "SELECT 1"
    with pytest.raises(InputNotFound, match=r"^no query file missing\.rq \(bundled examples: hardware_per_paper, "):
        sparql.read_query("@missing.rq")


def test_auto_backend_by_size(sample_graph, tmp_path) -> None:
    graph = sample_graph()
    assert isinstance(sparql.open_backend(graph), sparql.RdflibBackend)
    save(graph, tmp_path)
    assert isinstance(sparql.open_backend(tmp_path), sparql.RdflibBackend)
    assert isinstance(sparql.open_backend(tmp_path, backend="oxigraph"), sparql.OxigraphBackend)


def test_oxigraph_store_is_cached_and_refreshed(sample_graph, tmp_path, plain_rows) -> None:
    graph = sample_graph()
    save(graph, tmp_path)
    count = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
    assert plain_rows(sparql.query(tmp_path, count, backend="oxigraph")) == [("322",)]
    stamp = tmp_path / "graph.oxigraph" / "kg-stamp.json"
    assert stamp.is_file()
    first = stamp.stat().st_mtime_ns
    assert plain_rows(sparql.query(tmp_path, count, backend="oxigraph")) == [("322",)]
    assert stamp.stat().st_mtime_ns == first  # reused, not rebuilt
    graph.remove_node("paper:p3/x y")
    save(graph, tmp_path)
    assert plain_rows(sparql.query(tmp_path, "SELECT (COUNT(*) AS ?n) WHERE { ?p a fabio:ResearchPaper }", backend="oxigraph")) == [("2",)]
    stamp.write_text("{corrupt", encoding="utf-8")
    assert plain_rows(sparql.query(tmp_path, "SELECT (COUNT(*) AS ?n) WHERE { ?p a fabio:ResearchPaper }", backend="oxigraph")) == [("2",)]
    assert not list(tmp_path.glob(".graph.oxigraph.*"))  # no temporary folders left


# --- the command line -------------------------------------------------------------------


def test_cli_csv_exact(sample_dir, capsys) -> None:
    code = main(["sparql", "@shared_concepts", "--graph", str(sample_dir), "--bind", "paperA=p1", "--bind", "paperB=p2", "--format", "csv"])
    assert code == 0
    assert capsys.readouterr().out == "paperA,paperB,type,concept\r\np1,p2,Dataset,MuSiQue\r\np1,p2,Method,HippoRAG\r\n"


def test_cli_csv_quotes(sample_dir, capsys) -> None:
    assert main(["sparql", "SELECT ?t WHERE { ?p dcterms:identifier 'p2' ; dcterms:title ?t }", "--graph", str(sample_dir), "--format", "csv", "--backend", "oxigraph"]) == 0
    assert capsys.readouterr().out == 't\r\n"A study of <b>BERT</b> & ""friends"""\r\n'


def test_cli_json_exact(sample_dir, capsys) -> None:
    code = main(["sparql", "SELECT ?p ?n WHERE { ?p kg:hasConceptLink ?l . ?l kg:role 'proposed' ; kg:mentionCount ?n }", "--graph", str(sample_dir), "--format", "json"])
    assert code == 0
    assert json.loads(capsys.readouterr().out) == {
        "head": {"vars": ["p", "n"]},
        "results": {"bindings": [{
            "p": {"type": "uri", "value": "https://w3id.org/kg-ml/resource/paper/p1"},
            "n": {"type": "literal", "value": "1", "datatype": "http://www.w3.org/2001/XMLSchema#integer"},
        }]},
    }


def test_cli_json_ask(sample_dir, capsys) -> None:
    assert main(["sparql", "ASK { ?p kg:usesHardware ?h }", "--graph", str(sample_dir), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"head": {}, "boolean": True}


def test_cli_table(sample_dir, capsys) -> None:
    assert main(["sparql", "@hardware_per_paper", "--graph", str(sample_dir), "--backend", "oxigraph"]) == 0
    assert capsys.readouterr().out == (
        "paperId  title             hardware  mentions\n"
        "-------  ----------------  --------  --------\n"
        "p1       HippoRAG: memory  A100      1\n"
        "(1 row, oxigraph)\n"
    )


def test_cli_syntax_error(sample_dir, capsys) -> None:
    code = main(["sparql", "SELECT * WHERE { ?s ?p }", "--graph", str(sample_dir)])
    assert code == ExitCode.QUERY_SYNTAX == 13
    err = capsys.readouterr().err
    # one Error line, then the query line and a caret under the column (kg.sparql.hints)
    assert re.fullmatch(r"Error: SPARQL syntax error at line 1, column (2[45]): expected one of [^\n]+\n  SELECT \* WHERE \{ \?s \?p \}\n {2}( +)\^\n", err)
    column = int(re.search(r"column (\d+)", err).group(1))
    assert err.split("\n")[2] == " " * (column + 1) + "^"


def test_cli_missing_graph_and_query_file(sample_dir, capsys) -> None:
    assert main(["sparql", "ASK {}", "--graph", str(sample_dir / "none")]) == ExitCode.GRAPH_NOT_FOUND
    assert capsys.readouterr().err.startswith(f"Error: no graph at {sample_dir / 'none'}")
    assert main(["sparql", "@nope.rq", "--graph", str(sample_dir)]) == ExitCode.FILE_NOT_FOUND
    assert capsys.readouterr().err.startswith("Error: no query file nope.rq (bundled examples: ")


def test_cli_bad_bind_is_usage_error(sample_dir, capsys) -> None:
    assert main(["sparql", "ASK {}", "--graph", str(sample_dir), "--bind", "novalue"]) == ExitCode.USAGE
    assert "expected NAME=VALUE, got 'novalue'" in capsys.readouterr().err


def test_kg_sparql_does_not_import_spacy(sample_dir) -> None:
    code = (
        "import sys\nfrom kg.cli import main\n"
        f"status = main(['sparql', 'ASK {{}}', '--graph', {str(sample_dir)!r}])\n"
        "assert status == 0, status\n"
        "assert 'spacy' not in sys.modules, 'spacy imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "yes\n"
