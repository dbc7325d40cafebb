"""`kg serve` answers only its own host names (DNS rebinding), and refuses an update sent as
`query=` as it refuses `update=` (issue 36, smaller items)."""

from __future__ import annotations

import urllib.error
import urllib.parse
import urllib.request

import pytest

from kg.cli import main
from kg.errors import ExitCode
from kg.graph import save
from kg.sparql.guard import UpdateRefused, check_query, update_keyword
from kg.sparql.hosts import HostCheck
from kg.sparql.serve import endpoint_url, make_server, serve_in_thread

ASK = "ASK { ?s ?p ?o }"


@pytest.fixture(scope="module")
def server(sample_graph, tmp_path_factory):
    folder = tmp_path_factory.mktemp("serve-hosts")
    save(sample_graph(), folder)
    lines: list[str] = []
    server = make_server(folder, host="127.0.0.1", port=0, workers=1, log=lines.append, allow_hosts=("kg.internal",))
    thread = serve_in_thread(server)
    yield endpoint_url(server), lines
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


def ask(url: str, *, host: str | None = None, data: bytes | None = None, content_type: str | None = None, query: str = ASK) -> tuple[int, str]:
    headers = {} if host is None else {"Host": host}
    if content_type:
        headers["Content-Type"] = content_type
    target = url if data is not None else url + "?" + urllib.parse.urlencode({"query": query})
    try:
        with urllib.request.urlopen(urllib.request.Request(target, data=data, headers=headers), timeout=30) as response:
            return response.status, response.read().decode("utf-8")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8")


@pytest.mark.parametrize("host", ["evil.example", "evil.example:7878", "EVIL.example.", "localhost.evil.example", "127.0.0.1.nip.io"])
def test_a_host_name_the_server_does_not_have_is_refused(server, host: str) -> None:
    """A page at http://evil.example:7878/ whose name was pointed at 127.0.0.1 read the endpoint."""
    url, lines = server
    name = host.lower().split(":")[0].rstrip(".")
    for method in ("GET", "POST"):
        data = None if method == "GET" else ASK.encode()
        status, body = ask(url, host=host, data=data, content_type="application/sparql-query" if data else None)
        assert status == 403
        assert body == f"host {name!r} is not a name of this server (a web page may have pointed it here); allow the name when starting the server to answer it\n"
    assert lines[-1].endswith(f"403 host {name!r} is not a name of this server (a web page may have pointed it here); allow the name when starting the server to answer it")


@pytest.mark.parametrize("host", [None, "127.0.0.1", "127.0.0.1:7878", "localhost:7878", "LOCALHOST", "[::1]:7878", "10.1.2.3", "kg.internal:80"])
def test_addresses_localhost_and_allowed_names_are_answered(server, host: str | None) -> None:
    url, _ = server
    assert ask(url, host=host) == (200, '{"head":{},"boolean":true}')


def test_a_request_without_a_host_header_is_answered() -> None:
    """HTTP/1.0 by hand has no Host; a browser always sends one."""
    assert HostCheck().refuses(None) is None
    assert HostCheck().refuses("") == "(empty)"


def test_the_host_kg_serve_was_bound_to_is_answered(sample_graph, tmp_path) -> None:
    save(sample_graph(), tmp_path)
    server = make_server(tmp_path, host="localhost", port=0, workers=1)
    assert server.hosts.refuses("localhost:1") is None and server.hosts.refuses("evil.example") == "evil.example"
    server.server_close()


@pytest.mark.parametrize("query", ["INSERT DATA { <urn:a> <urn:b> <urn:c> }", "PREFIX ex: <urn:x#>\nDELETE WHERE { ?s ?p ?o }", "clear all", "# a comment\nLOAD <http://127.0.0.1:9/x>"])
def test_an_update_sent_as_a_query_is_refused_as_an_update(server, query: str) -> None:
    """`query=INSERT DATA …` got a syntax error (`expected CONSTRUCT`), not the documented refusal."""
    url, _ = server
    keyword = update_keyword(query)
    message = f"this endpoint is read-only; updates are refused: {keyword} is a SPARQL update, and the graph is read-only (ask SELECT, ASK, CONSTRUCT or DESCRIBE)\n"
    assert ask(url, query=query) == (405, message)
    form = urllib.parse.urlencode({"query": query}).encode()
    assert ask(url, data=form, content_type="application/x-www-form-urlencoded") == (405, message)
    assert ask(url, query="SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")[0] == 200  # nothing changed, nothing fetched


def test_kg_sparql_refuses_an_update_with_exit_13(sample_dir, capsys) -> None:
    assert main(["sparql", "INSERT DATA { <urn:a> <urn:b> <urn:c> }", "--graph", str(sample_dir)]) == ExitCode.QUERY_SYNTAX
    assert capsys.readouterr().err == "Error: updates are refused: INSERT is a SPARQL update, and the graph is read-only (ask SELECT, ASK, CONSTRUCT or DESCRIBE)\n"


@pytest.mark.parametrize("query", ["SELECT * WHERE { ?s <urn:insert> ?o }", 'ASK { ?s ?p "DELETE" }', "PREFIX insert: <urn:x#>\nSELECT * WHERE { ?s insert:p ?o }"])
def test_a_query_that_mentions_update_words_is_a_query(query: str) -> None:
    assert update_keyword(query) is None
    check_query(query)
    with pytest.raises(UpdateRefused):
        check_query("WITH <urn:g> DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }")



def raw_request(url: str, request: bytes) -> tuple[int, str]:
    """`request` sent as written (urllib sends one Host, and an origin-form target)."""
    import socket

    parts = urllib.parse.urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), body.decode("utf-8")


def test_two_host_headers_are_refused(server) -> None:
    """Found by the hostile review of issue 36: `Host: localhost` then `Host: evil.example` was
    answered 200 (only the first was read; a proxy in front may read the other)."""
    url, lines = server
    target = "/sparql?" + urllib.parse.urlencode({"query": ASK})
    for first, second in [("localhost", "evil.example"), ("localhost", "localhost")]:
        request = f"GET {target} HTTP/1.1\r\nHost: {first}\r\nHost: {second}\r\nConnection: close\r\n\r\n".encode()
        assert raw_request(url, request) == (400, "2 Host headers; a request has one\n")
    assert lines[-1].endswith("400 2 Host headers; a request has one")


@pytest.mark.parametrize(("authority", "status"), [("evil.example:18878", 403), ("127.0.0.1:1", 200), ("user@evil.example", 403), ("kg.internal", 200)])
def test_an_absolute_form_target_naming_another_host_is_refused(server, authority: str, status: int) -> None:
    """Found by the hostile review of issue 36: `GET http://evil.example:18878/sparql?…` with
    `Host: localhost` was answered 200; the target's host is the request's (RFC 9112)."""
    url, _ = server
    target = f"http://{authority}/sparql?" + urllib.parse.urlencode({"query": ASK})
    for method, body in [("GET", b""), ("POST", ASK.encode())]:
        extra = f"Content-Type: application/sparql-query\r\nContent-Length: {len(body)}\r\n" if body else ""
        request = f"{method} {target if method == 'GET' else target.split('?')[0]} HTTP/1.1\r\nHost: localhost\r\n{extra}Connection: close\r\n\r\n".encode() + body
        answer = raw_request(url, request)
        assert answer[0] == status, answer
        if status == 403:
            assert answer[1] == "host 'evil.example' is not a name of this server (a web page may have pointed it here); allow the name when starting the server to answer it\n"
