"""The lists the SPARQL grammar writes without separators are counted by the guard too (issue 36,
item 9): a collection `( 1 1 … )` of 5,000 items crashed the engine (exit 14, `kg serve` 500)
instead of being refused before it ran (exit 13)."""

from __future__ import annotations

import re
import urllib.error
import urllib.parse
import urllib.request

import pytest

from kg.cli import main
from kg.errors import ExitCode
from kg.graph import save
from kg.sparql.guard import MAX_GROUPS, MAX_LIST_ITEMS, MAX_OPERATORS, MAX_SEPARATORS, MAX_TERMS, QueryRefused, check_query, scan
from kg.sparql.serve import endpoint_url, make_server, serve_in_thread

ITEMS = f"items in one ( … ) list (an RDF collection, a VALUES row, arguments), above the limit of {MAX_LIST_ITEMS:,}"
GROUPS = f"bracketed groups ({{ }}, ( ), [ ]), above the limit of {MAX_GROUPS:,}"
TERMS = f"terms (variables, IRIs, literals, …), above the limit of {MAX_TERMS:,}"
OPERATORS = f"operators and UNIONs, above the limit of {MAX_OPERATORS:,}"
SEPARATORS = f"triple patterns and list items (an RDF collection's item counts 2, an IRI DESCRIBE names 3), above the limit of {MAX_SEPARATORS:,}"

# Every list-like shape of the grammar: (name, query of n items, what refuses it, items of a refused one).
SHAPES = [
    ("a collection as object (the issue's)", lambda n: "SELECT * WHERE { ?s <a:p> ( " + "1 " * n + ") }", ITEMS, MAX_LIST_ITEMS + 1),
    ("a collection as subject", lambda n: "SELECT * WHERE { ( " + "?x " * n + ") <a:p> ?o }", ITEMS, MAX_LIST_ITEMS + 1),
    ("a collection of empty lists", lambda n: "SELECT * WHERE { ?s <a:p> ( " + "() " * n + ") }", ITEMS, MAX_LIST_ITEMS + 1),
    ("a collection in a path's object", lambda n: "SELECT * WHERE { ?s <a:p>/<a:q> ( " + '"x" ' * n + ") }", ITEMS, MAX_LIST_ITEMS + 1),
    ("a VALUES variable list", lambda n: "SELECT * WHERE { VALUES (" + " ".join(f"?v{i}" for i in range(n)) + ") { } }", ITEMS, MAX_LIST_ITEMS + 1),
    ("a VALUES row", lambda n: "SELECT * WHERE { VALUES (?a) { (" + " 1" * n + ") } }", ITEMS, MAX_LIST_ITEMS + 1),
    ("function arguments", lambda n: 'SELECT (CONCAT(' + ", ".join(['"a"'] * n) + ") AS ?c) WHERE { }", ITEMS, MAX_LIST_ITEMS + 1),
    ("an IN list", lambda n: "SELECT * WHERE { ?s ?p ?o FILTER(?o IN (" + ", ".join(["1"] * n) + ")) }", ITEMS, MAX_LIST_ITEMS + 1),
    ("VALUES rows", lambda n: "SELECT * WHERE { VALUES (?a) { " + "(1) " * n + "} }", GROUPS, MAX_GROUPS),
    ("groups in a row", lambda n: "SELECT * WHERE { " + "{ ?s ?p ?o } " * n + "}", GROUPS, MAX_GROUPS),
    ("empty groups in a row", lambda n: "SELECT * WHERE { " + "{} " * n + "}", GROUPS, MAX_GROUPS),
    ("a one-variable VALUES block", lambda n: "SELECT * WHERE { VALUES ?a { " + "1 " * n + "} }", TERMS, MAX_TERMS),
    ("a SELECT list", lambda n: "SELECT " + " ".join(f"?v{i}" for i in range(n)) + " WHERE { ?s ?p ?o }", TERMS, MAX_TERMS),
    ("ORDER BY conditions", lambda n: "SELECT * WHERE { ?s ?p ?o } ORDER BY " + "?s " * n, TERMS, MAX_TERMS),
    ("GROUP BY conditions", lambda n: "SELECT ?s WHERE { ?s ?p ?o } GROUP BY " + "?s " * n, TERMS, MAX_TERMS),
    ("FROM clauses", lambda n: "SELECT * " + "FROM <a:g> " * n + "WHERE { ?s ?p ?o }", TERMS, MAX_TERMS),
    ("DESCRIBE variables", lambda n: "DESCRIBE " + " ".join(f"?v{i}" for i in range(n)) + " WHERE { ?s ?p ?o }", TERMS, MAX_TERMS),
    ("PREFIX declarations", lambda n: "".join(f"PREFIX p{i}:<a:>" for i in range(n)) + "SELECT * WHERE { ?s ?p ?o }", TERMS, MAX_TERMS),
    ("a path sequence", lambda n: "SELECT * WHERE { ?s " + "/".join(["<a:p>"] * n) + " ?o }", OPERATORS, MAX_OPERATORS),
    ("a path alternative", lambda n: "SELECT * WHERE { ?s " + "|".join(["<a:p>"] * n) + " ?o }", OPERATORS, MAX_OPERATORS),
    ("a negated property set", lambda n: "SELECT * WHERE { ?s !(" + "|".join(["<a:p>"] * n) + ") ?o }", OPERATORS, MAX_OPERATORS),
    ("inverse paths", lambda n: "SELECT * WHERE { ?s " + "^" * n + "<a:p> ?o }", OPERATORS, MAX_OPERATORS),
    ("an object list", lambda n: "SELECT * WHERE { ?s <a:p> " + ", ".join(["1"] * n) + " }", SEPARATORS, MAX_SEPARATORS),
    ("a predicate list", lambda n: "SELECT * WHERE { ?s " + " ; ".join(["<a:p> 1"] * n) + " }", SEPARATORS, MAX_SEPARATORS),
    ("triple patterns", lambda n: "SELECT * WHERE { " + "?s ?p ?o . " * n + "}", SEPARATORS, MAX_SEPARATORS),
    ("a CONSTRUCT template", lambda n: "CONSTRUCT { " + "?s ?p ?o . " * n + "} WHERE { ?s ?p ?o }", SEPARATORS, MAX_SEPARATORS),
    # Found by the hostile review of issue 36: each under every limit, these crashed the engine.
    ("DESCRIBE IRIs", lambda n: "DESCRIBE " + "<a:x> " * n, SEPARATORS, MAX_SEPARATORS // 3),
    ("DESCRIBE prefixed names", lambda n: "PREFIX e: <a:> DESCRIBE " + "e:x " * n + "WHERE { ?s ?p ?o }", SEPARATORS, MAX_SEPARATORS // 3),
    ("collections in all", lambda n: "SELECT * WHERE { " + " . ".join(f"?s <a:p{i}> ( " + "1 " * 10 + ")" for i in range(n // 10)) + " }", SEPARATORS, MAX_SEPARATORS // 2),
]


@pytest.mark.parametrize(("name", "make", "message", "size"), SHAPES, ids=[shape[0] for shape in SHAPES])
def test_every_list_shape_is_refused_over_its_limit(name: str, make, message: str, size: int) -> None:
    with pytest.raises(QueryRefused, match=r"^query refused: [\d,]+ " + re.escape(message) + "$"):
        check_query(make(size + 10))


@pytest.mark.parametrize(("name", "make", "message", "size"), SHAPES, ids=[shape[0] for shape in SHAPES])
def test_a_list_well_within_its_limit_passes(name: str, make, message: str, size: int) -> None:
    check_query(make(size // 4))


def test_the_limits_count_exactly() -> None:
    collection = "SELECT * WHERE { ?s <a:p> ( " + "1 " * MAX_LIST_ITEMS + ") }"
    assert scan(collection).list_items == MAX_LIST_ITEMS
    check_query(collection)
    assert scan("SELECT * WHERE { ?s <a:p> ( 1 ( 2 3 ) [ <a:q> 4 ] \"5\" <a:x> ex:y _:z true ) }").list_items == 8
    assert scan("SELECT * WHERE { ?s ?p 1.5, -2, .5e3, 7 . ?s a ex:o. }").terms == 9
    assert scan("SELECT * WHERE { ?s <a:p> [ <a:q> [] ], () }").groups == 4
    unclosed = "SELECT * WHERE { ?s <a:p> ( " + "1 " * (MAX_LIST_ITEMS + 1)
    assert scan(unclosed).list_items == MAX_LIST_ITEMS + 1  # an unterminated list counts as well


@pytest.mark.parametrize("backend", ["oxigraph", "rdflib"])
def test_the_reported_collection_is_refused_before_it_runs(sample_dir, capsys, backend: str) -> None:
    """`SELECT * WHERE { ?s <a:p> ( 1 1 1 … 5,000 items ) }`: exit 14 (the engine crashed), now 13."""
    query = "SELECT * WHERE { ?s <a:p> ( " + "1 " * 5000 + ") }"
    assert main(["sparql", query, "--graph", str(sample_dir), "--backend", backend]) == ExitCode.QUERY_SYNTAX
    assert capsys.readouterr().err == f"Error: query refused: 5,000 {ITEMS}\n"


def test_a_collection_at_the_limit_does_not_crash_the_engine(sample_dir, capsys) -> None:
    """The limit is far below the crash (~4,500 items): at it, the query runs (or runs out of time)."""
    query = "SELECT * WHERE { ?s <a:p> ( " + "1 " * MAX_LIST_ITEMS + ") }"
    code = main(["sparql", query, "--graph", str(sample_dir), "--backend", "oxigraph", "--timeout", "3"])
    err = capsys.readouterr().err
    assert "crashed" not in err
    assert code in (0, None) or (code == ExitCode.QUERY_FAILED and err == "Error: query stopped after the time limit of 3 s\n")


def test_kg_serve_refuses_the_reported_collection_with_400(sample_graph, tmp_path) -> None:
    """It answered 500 and replaced its worker."""
    save(sample_graph(), tmp_path)
    lines: list[str] = []
    server = make_server(tmp_path, host="127.0.0.1", port=0, workers=1, log=lines.append)
    thread = serve_in_thread(server)
    try:
        query = "SELECT * WHERE { ?s <a:p> ( " + "1 " * 5000 + ") }"
        request = urllib.request.Request(endpoint_url(server), data=query.encode(), headers={"Content-Type": "application/sparql-query"})
        with pytest.raises(urllib.error.HTTPError) as answer:
            urllib.request.urlopen(request, timeout=30)
        assert answer.value.code == 400
        assert answer.value.read().decode("utf-8") == f"query refused: 5,000 {ITEMS}\n"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
    assert len(lines) == 1 and lines[0].endswith(f"400 query refused: 5,000 {ITEMS}")


# Found by the hostile review of issue 36: shapes under every limit of the guard that still crashed
# Oxigraph (SIGSEGV: exit 14, `kg serve` 500): a DESCRIBE of 3,000 IRIs (the terms limit is
# 10,000), and five collections of 990 items each (each under the 1,000 items of one list; the
# triple patterns they stand for were not counted as separators are).
COLLECTION = "( " + "1 " * 990 + ")"
CRASHING = {
    "DESCRIBE of 3,000 IRIs": "DESCRIBE " + "<http://x/> " * 3000,
    "five collections of 990 items": "SELECT * WHERE { " + " . ".join(f"?s <a:p{i}> {COLLECTION}" for i in range(5)) + " }",
    "an object list of five collections": "SELECT * WHERE { ?s <a:p> " + ", ".join([COLLECTION] * 5) + " }",
    "a collection of five collections": "SELECT * WHERE { ?s <a:p> ( " + " ".join([COLLECTION] * 5) + " ) }",
}


@pytest.mark.parametrize("query", CRASHING.values(), ids=CRASHING.keys())
def test_a_shape_that_crashes_oxigraph_is_refused_by_the_guard(query: str) -> None:
    with pytest.raises(QueryRefused, match=re.escape(SEPARATORS)):
        check_query(query)


@pytest.mark.parametrize("query", CRASHING.values(), ids=CRASHING.keys())
def test_a_shape_that_crashes_oxigraph_is_exit_13_not_14(sample_dir, capsys, query: str) -> None:
    code = main(["sparql", query, "--graph", str(sample_dir), "--backend", "oxigraph", "--timeout", "20"])
    err = capsys.readouterr().err
    assert "crashed" not in err, err
    assert code == ExitCode.QUERY_SYNTAX, err


def test_patterns_collections_and_describe_targets_add_up() -> None:
    """Each alone under the limit, together over it: the engine's stack is spent by all of them."""
    triples = "?s ?p ?o . " * 800
    collection = "?s <a:p> ( " + "1 " * 500 + ")"
    assert scan("SELECT * WHERE { " + triples + collection + " }").patterns == 800 + 2 * 500
    check_query("SELECT * WHERE { " + triples + collection + " }")
    describe = "DESCRIBE " + "<a:x> " * 200 + "?d WHERE { " + triples + collection + " }"
    assert scan(describe).patterns == 800 + 2 * 500 + 3 * 200
    with pytest.raises(QueryRefused, match=r"^query refused: 2,400 " + re.escape(SEPARATORS) + "$"):
        check_query(describe)
    # What is no collection costs nothing more: VALUES rows, function calls, IN lists, expressions.
    other = "SELECT * WHERE { VALUES (?a ?b) { (1 2) (3 4) } FILTER ex:f(1, 2) FILTER(?a IN (1, 2)) BIND(CONCAT(?a, (?b)) AS ?c) }"
    assert scan(other).collection_items == 0
    assert scan("SELECT * WHERE { ?s a ( 1 ( 2 3 ) [ <a:q> ( 4 ) ] ) }").collection_items == 3 + 2 + 1


@pytest.mark.parametrize("query", [
    "DESCRIBE " + "<a:x> " * (MAX_SEPARATORS // 3),
    "SELECT * WHERE { ?s <a:p> ( " + " ".join(["( " + "1 " * 99 + ")"] * 9) + " ) }",
], ids=["DESCRIBE at the limit", "a collection of collections at the limit"])
def test_a_query_at_the_patterns_limit_does_not_crash_the_engine(sample_dir, capsys, query: str) -> None:
    check_query(query)
    code = main(["sparql", query, "--graph", str(sample_dir), "--backend", "oxigraph", "--timeout", "3"])
    err = capsys.readouterr().err
    assert "crashed" not in err
    assert code in (0, None) or (code == ExitCode.QUERY_FAILED and err == "Error: query stopped after the time limit of 3 s\n")


def test_a_typed_literal_is_one_term_and_no_operator() -> None:
    """Found by the hostile review of issue 36: `"1"^^xsd:integer` counted as two `^` operators
    (and two terms), so a VALUES block of 600 typed literals was refused as "1,201 operators"."""
    typed = "PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> SELECT * WHERE { VALUES ?x { " + '"1"^^xsd:integer ' * 600 + "} }"
    shape = scan(typed)
    assert (shape.operators, shape.terms) == (1, 600 + 3)  # SELECT's `*`; the literals, ?x, and the PREFIX's name and IRI
    check_query(typed)
    assert scan('SELECT * WHERE { ?s ?p "1" ^^ <a:t>, \'2\'^^<a:t> }').terms == 4
    # `^^` after no string is two inverse-path operators, as each `^` is.
    assert scan("SELECT * WHERE { ?s " + "^^" * 600 + "<a:p> ?o }").operators == 1 + 1200
    with pytest.raises(QueryRefused, match=re.escape(OPERATORS)):
        check_query("SELECT * WHERE { ?s " + "^^" * 600 + "<a:p> ?o }")
