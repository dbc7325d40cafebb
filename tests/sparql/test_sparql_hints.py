"""SPARQL that helps (issue 25, item 4): a caret under the column, the expected tokens cut to the
likely few, and a warning with the closest declared terms for a kg: term the ontology lacks."""

from __future__ import annotations

import urllib.error
import urllib.parse
import urllib.request

import pytest

from kg.cli import main
from kg.errors import ExitCode, UnknownTerm
from kg.sparql import engine as sparql
from kg.sparql.hints import declared_terms, excerpt, likely_expected, undeclared_terms


def test_likely_expected_puts_closers_first_and_drops_character_classes() -> None:
    assert likely_expected('"&&", ")", "*", "+", "-", "/", "||"') == '")", "&&", "*", "+", …'
    assert likely_expected('",", ".", ";", "{", "}", [\'%\'], [\'-\' | \'0\' ..= \'9\']') == '"}", ".", ";", ",", …'
    assert likely_expected("HAVING, OFFSET") == "HAVING, OFFSET"


def test_excerpt_puts_the_caret_under_the_column() -> None:
    assert excerpt("SELECT *\nWHERE { ?s ?p ?o", 2, 17) == ("WHERE { ?s ?p ?o", " " * 16 + "^")
    line, caret = excerpt("x" * 150 + "!" + "y" * 150, 1, 151, width=40)
    assert line.startswith("…") and line.endswith("…") and line[caret.index("^")] == "!"


@pytest.mark.parametrize("backend", ["oxigraph", "rdflib"])
def test_a_syntax_error_shows_the_line_and_a_caret(sample_dir, capsys, backend: str) -> None:
    query = "SELECT ?x\nWHERE { ?x a kg:Method . FILTER(STRLEN(?x) > 3 }"
    assert main(["sparql", query, "--graph", str(sample_dir), "--backend", backend]) == ExitCode.QUERY_SYNTAX
    assert capsys.readouterr().err == (
        'Error: SPARQL syntax error at line 2, column 48: expected one of ")", "&&", "*", "+", …\n'
        "  WHERE { ?x a kg:Method . FILTER(STRLEN(?x) > 3 }\n"
        "  " + " " * 47 + "^\n"
    )


def test_undeclared_terms_and_their_closest_declared_ones() -> None:
    assert {"Method", "usesDataset", "proposes", "key"} <= declared_terms()
    found = undeclared_terms(
        'SELECT * WHERE { ?p kg:useDataset ?d ; a kg:method . ?c <https://w3id.org/kg-ml/ontology#usesMethd> ?m ; kg:usesDataset ?e '
        'FILTER(?x != "kg:inAString") } # kg:inAComment'
    )
    assert [(t.term, t.suggestions) for t in found] == [
        ("kg:useDataset", ("kg:usesDataset", "kg:Dataset")),
        ("kg:method", ("kg:Method", "kg:methodText")),
        ("<https://w3id.org/kg-ml/ontology#usesMethd>", ("kg:usesMethod",)),
    ]
    assert undeclared_terms("SELECT * WHERE { ?p kg:proposes ?c ; kg:usesDataset ?d }") == []
    for text in sparql.example_queries().values():
        assert undeclared_terms(text) == []


def test_kg_sparql_warns_of_a_misspelt_term_and_still_runs(sample_dir, capsys) -> None:
    code = main(["sparql", "SELECT ?p WHERE { ?p kg:useDataset ?d }", "--graph", str(sample_dir)])
    assert code in (None, 0)
    captured = capsys.readouterr()
    assert captured.err == "Warning: kg:useDataset is not a term of kg's ontology, so it matches nothing; did you mean kg:usesDataset or kg:Dataset?\n"
    assert "(0 rows" in captured.out
    with pytest.warns(UnknownTerm):
        sparql.query(sample_dir, "ASK { ?p kg:usesDatset ?d }")


def test_kg_serve_says_it_in_a_header_and_the_log(sample_dir) -> None:
    from kg.sparql.serve import endpoint_url, make_server, serve_in_thread

    log: list[str] = []
    server = make_server(sample_dir, port=0, workers=1, log=log.append)
    thread = serve_in_thread(server)
    try:
        url = endpoint_url(server) + "?" + urllib.parse.urlencode({"query": "SELECT ?p WHERE { ?p kg:useDataset ?d }"})
        with urllib.request.urlopen(url, timeout=20) as response:
            assert response.status == 200
            assert response.headers.get_all("X-Kg-Warning") == ["kg:useDataset is not a term of kg's ontology, so it matches nothing; did you mean kg:usesDataset or kg:Dataset?"]
        assert any("warning: kg:useDataset is not a term" in line for line in log)
        bad = endpoint_url(server) + "?" + urllib.parse.urlencode({"query": "SELECT ?x WHERE { ?x a kg:Method"})
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(bad, timeout=20)
        assert caught.value.code == 400
        assert caught.value.read().decode() == 'SPARQL syntax error at line 1, column 33: expected one of "}", ".", ";", ",", …\nSELECT ?x WHERE { ?x a kg:Method\n' + " " * 32 + "^\n"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
