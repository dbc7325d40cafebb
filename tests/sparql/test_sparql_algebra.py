"""The guard checks what the engines will run (issue 23): escapes expanded, rdflib's parsed
algebra walked, flat chains bounded, and a crash of the engine is a refusal, not a segfault."""

from __future__ import annotations

import faulthandler
import os
import signal
import socket
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kg.cli import main
from kg.errors import ExitCode, QueryFailed, QuerySyntaxError
from kg.sparql.engine import QueryResult
from kg.sparql.guard import MAX_CLAUSES, QueryRefused, check_query, expand_codepoints, scan
from kg.sparql.pool import WorkerCrashed, call_with_timeout


@pytest.fixture
def listener() -> Iterator[tuple[str, socket.socket]]:
    """A loopback listener: (its URL, the socket); a test asserts nothing connected."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        sock.setblocking(False)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/sparql", sock


def connected(sock: socket.socket) -> bool:
    try:
        sock.accept()[0].close()
    except BlockingIOError:
        return False
    return True


def escaped(word: str) -> str:
    return "".join(f"\\u{ord(c):04X}" for c in word)


def test_codepoint_escapes_are_expanded_before_the_scan() -> None:
    assert expand_codepoints(r"\u0053ERVICE \U0000007B") == "SERVICE {"
    assert expand_codepoints(r"\UFFFFFFFF") == r"\UFFFFFFFF"  # no such character: left for the parser to refuse
    assert scan(r"SELECT * WHERE { \u0053ERVICE <x:> \u007B \u007B } }").service
    assert scan("SELECT * WHERE " + r"\u007B" * 100).depth == 100


@pytest.mark.parametrize("backend", ["rdflib", "oxigraph"])
@pytest.mark.parametrize("spelling", ["SERVICE", "\\u0053ERVICE", escaped("SERVICE"), "\\U00000053ervice"])
def test_service_in_any_spelling_never_leaves_the_machine(sample_dir, capsys, listener, backend: str, spelling: str) -> None:
    """On rdflib `\\u0053ERVICE` passed the text check and the request reached a local listener."""
    url, sock = listener
    query = f"SELECT * WHERE {{ {spelling} <{url}> {{ ?s ?p ?o }} }}"
    code = main(["sparql", query, "--graph", str(sample_dir), "--backend", backend])
    assert code == ExitCode.QUERY_SYNTAX
    assert capsys.readouterr().err.startswith("Error: query refused: SERVICE (federated queries) is disabled")
    assert not connected(sock)


def test_the_parsed_rdflib_algebra_is_checked_too(sparql_backends, listener) -> None:
    """Past the text check (e.g. a check with limits raised), the algebra walk still refuses."""
    url, sock = listener
    from rdflib.plugins.sparql import prepareQuery

    from kg.sparql.guard import check_algebra

    with pytest.raises(QueryRefused, match="SERVICE"):
        check_algebra(prepareQuery(f"SELECT * WHERE {{ {escaped('SERVICE')} <{url}> {{ ?s ?p ?o }} }}"))
    with pytest.raises(QueryRefused, match="FROM and FROM NAMED"):
        check_algebra(prepareQuery(f"SELECT * FROM NAMED <{url}> WHERE {{ GRAPH ?g {{ ?s ?p ?o }} }}"))
    with pytest.raises(QueryRefused, match="more than 50 nodes"):
        check_algebra(prepareQuery("SELECT * WHERE { ?s ?p ?o " + "FILTER(?o) " * 30 + "}"), max_nodes=50)
    check_algebra(prepareQuery(f"SELECT * WHERE {{ SERVICE <{url}> {{ ?s ?p ?o }} }}"), allow_service=True)
    assert not connected(sock)


@pytest.mark.parametrize("backend", ["rdflib", "oxigraph"])
def test_from_never_loads_a_remote_graph(sample_dir, capsys, listener, backend: str) -> None:
    url, sock = listener
    code = main(["sparql", f"SELECT * FROM <{url}> WHERE {{ ?s ?p ?o }} LIMIT 1", "--graph", str(sample_dir), "--backend", backend])
    if backend == "rdflib":  # rdflib would fetch the URL to make the default graph
        assert code == ExitCode.QUERY_SYNTAX and "FROM and FROM NAMED are not supported on the rdflib backend" in capsys.readouterr().err
    else:  # Oxigraph reads FROM as a graph of the store (here: an empty one)
        assert code == 0
    assert not connected(sock)


@pytest.mark.parametrize("clause", ["FILTER(?o) ", "BIND(1 AS ?x) ", "MINUS {{}} ", "OPTIONAL {{}} "])
def test_flat_clause_chains_are_refused_before_the_engine(sample_dir, capsys, clause: str) -> None:
    """FILTER×15,000, BIND×11,000 and MINUS×10,000 passed the guard and overflowed the stack."""
    query = "SELECT * WHERE { ?s ?p ?o " + "".join(clause.format(i=i) for i in range(10_000)) + "}"
    code = main(["sparql", query, "--graph", str(sample_dir), "--backend", "oxigraph", "--timeout", "0"])
    assert code == ExitCode.QUERY_SYNTAX
    assert capsys.readouterr().err == f"Error: query refused: 10,001 clauses (FILTER, BIND, MINUS, OPTIONAL, …), above the limit of {MAX_CLAUSES:,}\n"
    check_query("SELECT * WHERE { ?s ?p ?o " + "FILTER(?o) " * (MAX_CLAUSES - 1) + "}")  # SELECT is one


def test_a_crash_in_the_query_process_is_a_refusal_with_its_cause() -> None:
    def segfault() -> None:
        faulthandler.disable()  # pytest's handler would print the child's stack
        os.kill(os.getpid(), signal.SIGSEGV)

    for timeout in (None, 10):
        with pytest.raises(WorkerCrashed, match=r"^query refused: the query engine crashed on it \(SIGSEGV\); the query is probably too long or deep"):
            call_with_timeout(segfault, timeout=timeout)

    def library_error() -> None:
        raise Exception("You performed a query operation requiring a dataset")  # noqa: TRY002 - as rdflib does

    with pytest.raises(QueryFailed, match="^SPARQL query failed: Exception: You performed a query operation requiring a dataset$"):
        call_with_timeout(library_error, timeout=None)


@pytest.mark.parametrize("timeout", ["0", "10"])
def test_graph_patterns_run_on_rdflib(sample_dir, capsys, timeout: str) -> None:
    """`GRAPH ?g {…}` on rdflib died in the query process (exit 14), or gave a traceback."""
    code = main(["sparql", "SELECT ?g WHERE { GRAPH ?g { ?s ?p ?o } }", "--graph", str(sample_dir), "--backend", "rdflib", "--timeout", timeout])
    assert code is None or code == 0
    out = capsys.readouterr().out
    assert out.endswith("(0 rows, rdflib)\n")  # as on Oxigraph: the graph is the default graph


# --- the fuzzer: random flat and deep queries, both engines, no crash and no connection ------

TERMS = st.sampled_from(["?s", "?p", "?o", "?x", "1", '"a"', "kg:Method", "<urn:x>", "fabio:ResearchPaper"])


def _expression(depth: int) -> st.SearchStrategy[str]:
    leaf = TERMS
    if depth <= 0:
        return leaf
    inner = _expression(depth - 1)
    return st.one_of(
        leaf,
        st.tuples(inner, st.sampled_from(["+", "-", "*", "&&", "||", "=", "<"]), inner).map(" ".join),
        inner.map(lambda e: f"({e})"),
        st.tuples(st.sampled_from(["STR", "BOUND", "ISIRI", "LCASE"]), inner).map(lambda t: f"{t[0]}({t[1]})"),
    )


def _pattern(depth: int) -> st.SearchStrategy[str]:
    triple = st.tuples(TERMS, TERMS, TERMS).map(lambda t: " ".join(t) + " .")
    simple = st.one_of(triple, _expression(3).map(lambda e: f"FILTER({e})"), st.just("MINUS { ?s ?p ?o }"), st.just("BIND(1 AS ?b)"))
    if depth <= 0:
        return simple
    inner = _pattern(depth - 1)
    group = st.lists(inner, max_size=3).map(lambda parts: "{ " + " ".join(parts) + " }")
    return st.one_of(
        simple, group,
        st.tuples(group, group).map(lambda g: f"{g[0]} UNION {g[1]}"),
        group.map(lambda g: f"OPTIONAL {g}"),
        group.map(lambda g: f"GRAPH ?g {g}"),
        group.map(lambda g: f"FILTER EXISTS {g}"),
    )


@st.composite
def hostile_queries(draw, url: str) -> str:
    """A random query: nested patterns, with a flat run of one clause repeated up to 20,000
    times or brackets nested up to 5,000 deep, and sometimes SERVICE in some spelling."""
    body = " ".join(draw(st.lists(_pattern(3), max_size=4)))
    shape = draw(st.sampled_from(["none", "flat", "deep", "service"]))
    if shape == "flat":
        clause = draw(st.sampled_from(["FILTER(?o) ", "BIND(?o AS ?z) ", "MINUS {} ", "OPTIONAL {} ", "{} UNION ", "?s ?p ?o . ", "VALUES ?v { 1 } "]))
        body += " " + clause * draw(st.integers(1, 20_000)) + " {}"
    elif shape == "deep":
        opener, closer = draw(st.sampled_from([("{ ", " }"), ("FILTER(", ")"), ("OPTIONAL { ", " }"), ("{ SELECT * WHERE { ", " } }")]))
        n = draw(st.integers(1, 5_000))
        body += " " + opener * n + closer * n
    elif shape == "service":
        body += f" {draw(st.sampled_from(['SERVICE', escaped('SERVICE'), 'service', 'SERVICE SILENT']))} <{url}> {{ ?s ?p ?o }}"
    return f"SELECT * WHERE {{ {body} }} LIMIT 5"


@pytest.mark.parametrize("backend", ["rdflib", "oxigraph"])
def test_random_hostile_queries_neither_crash_nor_connect(sparql_backends, backend: str) -> None:
    engine = sparql_backends[backend]
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        sock.setblocking(False)
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/sparql"
        outcomes: dict[str, int] = {}

        @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
        @given(hostile_queries(url))
        def run(text: str) -> None:
            try:
                # A timeout is an allowed outcome (a run of 1,000 triple patterns joins for ever): 3 s, not 20, for each
                result = call_with_timeout(engine.query, text, timeout=3)
                assert isinstance(result, QueryResult)
                kind = "rows"
            except WorkerCrashed as crash:  # the engine died: the guard let through what it cannot run
                raise AssertionError(f"{crash.message}: {text[:200]}") from None
            except QuerySyntaxError as error:
                kind = "refused" if error.message.startswith("query refused") else "syntax"
            except QueryFailed as error:
                kind = "timeout" if "time limit" in error.message else "failed"
            outcomes[kind] = outcomes.get(kind, 0) + 1
            assert not connected(sock), text[:200]

        run()
        assert outcomes.get("refused", 0) > 0 and outcomes.get("rows", 0) > 0, outcomes


def test_random_hostile_queries_against_kg_serve(sample_dir) -> None:
    """The same fuzzer over HTTP: every answer is 200, 400 or a timeout's 503; never a crashed
    worker's 500, never a connection to the listener."""
    import urllib.error
    import urllib.parse
    import urllib.request

    from kg.sparql.serve import endpoint_url, make_server, serve_in_thread

    server = make_server(sample_dir, port=0, workers=1, timeout=2.0)  # a timeout's 503 is an allowed answer
    thread = serve_in_thread(server)
    statuses: dict[int, int] = {}
    try:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            sock.listen(16)
            sock.setblocking(False)
            url = f"http://127.0.0.1:{sock.getsockname()[1]}/sparql"

            @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
            @given(hostile_queries(url))
            def run(text: str) -> None:
                body = urllib.parse.urlencode({"query": text}).encode()
                request = urllib.request.Request(endpoint_url(server), data=body, headers={"Content-Type": "application/x-www-form-urlencoded"})
                try:
                    with urllib.request.urlopen(request, timeout=30) as response:
                        status = response.status
                except urllib.error.HTTPError as error:
                    status = error.code
                    assert status != 500, error.read()[:300]
                statuses[status] = statuses.get(status, 0) + 1
                assert status in (200, 400, 413, 503) and not connected(sock), text[:200]

            run()
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
    assert statuses.get(200, 0) > 0 and statuses.get(400, 0) > 0, statuses


@pytest.mark.parametrize("backend", ["rdflib", "oxigraph"])
@pytest.mark.parametrize("hider", ["e:x\\#", "e:x\\'", 'e:x\\"', "e:a\\#b\\'c"])
def test_a_prefixed_name_escape_hides_nothing(sample_dir, capsys, listener, backend: str, hider: str) -> None:
    """`e:x\\#` was read as the start of a comment and `e:x\\'` as a string, so the SERVICE on
    the same line went unseen and Oxigraph (`kg sparql`, `kg serve`) called the listener."""
    url, sock = listener
    query = f"PREFIX e: <http://x/> SELECT * WHERE {{ BIND({hider} AS ?z) SERVICE <{url}> {{ ?s ?p ?o }} }}"
    assert main(["sparql", query, "--graph", str(sample_dir), "--backend", backend]) == ExitCode.QUERY_SYNTAX
    assert capsys.readouterr().err.startswith("Error: query refused: SERVICE")
    assert scan(f"SELECT * WHERE {{ BIND({hider} AS ?z) " + "{" * 100 + "}" * 100 + " }").depth == 101
    assert not connected(sock)


SERVICE_CALLS = [
    "FILTER(?a<'x>'||1>2) {call}",  # a fake IRI `<'x>` opened a string to the end of the line
    "BIND('\\u0027' AS ?q) {call} }} #'''",  # the escape expands to a long-string opener
    'BIND("\\u0022" AS ?q) {call} }} #"""',
    "?s ?p 1{call}",  # a number glued to the keyword
    "{call_commented}",
]


@pytest.mark.parametrize("backend", ["rdflib", "oxigraph"])
@pytest.mark.parametrize("shape", SERVICE_CALLS)
def test_service_hidden_from_a_tokenizer_is_still_refused(sample_dir, capsys, listener, backend: str, shape: str) -> None:
    """The third hostile round: each of these reached the listener through Oxigraph and kg serve
    (and rdflib's syntax-error path, which asked Oxigraph for a better message)."""
    url, sock = listener
    body = shape.format(call=f"SERVICE <{url}> {{ ?x ?y ?z }}", call_commented=f"SERVICE#c\n<{url}> {{ ?x ?y ?z }}")
    query = f"SELECT * WHERE {{ ?s ?p ?a {body} }}"
    assert main(["sparql", query, "--graph", str(sample_dir), "--backend", backend]) == ExitCode.QUERY_SYNTAX
    assert "query refused: SERVICE" in capsys.readouterr().err
    assert not connected(sock)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="'\"<>#\\u0027{}()?1 \n", max_size=12), st.sampled_from(["SERVICE", "service", "SeRvIcE", "\\u0053ERVICE"]),
       st.sampled_from([" ", "", "\n", " #x\n", " SILENT "]), st.sampled_from(["<http://127.0.0.1:9/>", "?s", "ex:e", ":e"]))
def test_any_service_call_is_refused_whatever_surrounds_it(before: str, keyword: str, gap: str, target: str) -> None:
    """Whatever comes before (quotes, brackets, `#`, escapes, digits), unless it makes the word
    part of another name (`?SERVICE` is a variable, `uSERVICE` no keyword)."""
    assume(not before or before[-1] not in "?u027")
    with pytest.raises(QueryRefused, match="SERVICE"):
        check_query(f"SELECT * WHERE {{ {before}{keyword}{gap}{target} {{ ?s ?p ?o }} }}")


def test_the_word_service_in_ordinary_text_still_runs(sparql_backends) -> None:
    check_query("SELECT * WHERE { ?service ?p ?o FILTER(CONTAINS(STR(?o), 'web service for')) } # a service note")
