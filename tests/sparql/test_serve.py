"""`kg serve`: a SPARQL 1.1 Protocol endpoint on loopback, queried over real HTTP."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

from kg.cli import main
from kg.errors import ExitCode, ServerError
from kg.graph import save
from kg.sparql.serve import endpoint_url, make_server, serve_in_thread

QUERY = "SELECT ?id WHERE { ?p a fabio:ResearchPaper ; dcterms:identifier ?id } ORDER BY ?id"


@pytest.fixture(scope="module")
def endpoint(sample_graph, tmp_path_factory):
    folder = tmp_path_factory.mktemp("serve-sample")
    save(sample_graph(), folder)
    server = make_server(folder, host="127.0.0.1", port=0)
    thread = serve_in_thread(server)
    yield endpoint_url(server)
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


def fetch(request: urllib.request.Request | str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers["Content-Type"], response.read().decode("utf-8")
    except urllib.error.HTTPError as error:
        return error.code, error.headers["Content-Type"], error.read().decode("utf-8")


def ids(body: str) -> list[str]:
    return [row["id"]["value"] for row in json.loads(body)["results"]["bindings"]]


def test_get_json(endpoint: str) -> None:
    assert endpoint.startswith("http://127.0.0.1:") and endpoint.endswith("/sparql")
    status, content_type, body = fetch(endpoint + "?" + urllib.parse.urlencode({"query": QUERY}))
    assert status == 200
    assert content_type == "application/sparql-results+json; charset=utf-8"
    assert ids(body) == ["p1", "p2", "p3/x y"]


def test_post_form_and_direct_body(endpoint: str) -> None:
    form = urllib.request.Request(endpoint, data=urllib.parse.urlencode({"query": QUERY}).encode(), headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert ids(fetch(form)[2]) == ["p1", "p2", "p3/x y"]
    direct = urllib.request.Request(endpoint, data=QUERY.encode(), headers={"Content-Type": "application/sparql-query", "Accept": "text/csv"})
    status, content_type, body = fetch(direct)
    assert (status, content_type) == (200, "text/csv; charset=utf-8")
    assert body == "id\r\np1\r\np2\r\np3/x y\r\n"


def test_ask_and_construct(endpoint: str) -> None:
    status, _, body = fetch(endpoint + "?" + urllib.parse.urlencode({"query": "ASK { ?p kg:proposes ?c }"}))
    assert (status, json.loads(body)["boolean"]) == (200, True)
    construct = "CONSTRUCT { ?c skos:prefLabel ?l } WHERE { ?c a kg:Metric ; skos:prefLabel ?l }"
    request = urllib.request.Request(endpoint + "?" + urllib.parse.urlencode({"query": construct}), headers={"Accept": "application/n-triples"})
    status, content_type, body = fetch(request)
    assert (status, content_type) == (200, "application/n-triples; charset=utf-8")
    assert body == '<https://w3id.org/kg-ml/resource/concept/metric%2Ff1> <http://www.w3.org/2004/02/skos/core#prefLabel> "F1" .\n'


def test_errors(endpoint: str) -> None:
    status, content_type, body = fetch(endpoint + "?" + urllib.parse.urlencode({"query": "SELECT * WHERE { ?s ?p }"}))
    assert (status, content_type) == (400, "text/plain; charset=utf-8")
    assert body.startswith("SPARQL syntax error at line 1, column ")
    assert fetch(endpoint)[:1] == (400,)
    update = urllib.request.Request(endpoint, data=b"update=CLEAR+ALL", headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert fetch(update)[0] == 405
    update = urllib.request.Request(endpoint, data=b"CLEAR ALL", headers={"Content-Type": "application/sparql-update"})
    assert fetch(update)[0] == 405
    assert fetch(endpoint.replace("/sparql", "/elsewhere"))[0] == 404
    # the data is untouched
    assert ids(fetch(endpoint + "?" + urllib.parse.urlencode({"query": QUERY}))[2]) == ["p1", "p2", "p3/x y"]


def test_port_in_use_is_server_error(sample_dir) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(ServerError, match=rf"^cannot listen on 127\.0\.0\.1:{port}: "):
            make_server(sample_dir, port=port)


def test_cli_serve_missing_graph(tmp_path, capsys) -> None:
    assert main(["serve", "--graph", str(tmp_path / "nope"), "--port", "0"]) == ExitCode.GRAPH_NOT_FOUND
    assert capsys.readouterr().err.startswith("Error: no graph at ")


def test_kg_serve_command_over_http(sample_dir) -> None:
    """The real command in a subprocess: start on a free loopback port, query, stop."""
    process = subprocess.Popen(
        [sys.executable, "-m", "kg", "serve", "--graph", str(sample_dir), "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        line = process.stderr.readline()  # "SPARQL endpoint: http://127.0.0.1:PORT/sparql  (Ctrl-C to stop)"
        assert line.startswith("SPARQL endpoint: http://127.0.0.1:"), line
        url = line.split()[2]
        deadline = time.monotonic() + 20
        while True:
            try:
                status, _, body = fetch(url + "?" + urllib.parse.urlencode({"query": QUERY}))
                break
            except urllib.error.URLError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        assert status == 200
        assert ids(body) == ["p1", "p2", "p3/x y"]
        assert fetch(url + "?" + urllib.parse.urlencode({"query": "ASK " + "{" * 100 + "}" * 100}))[0] == 400
        refusal = process.stderr.readline()  # one line per refusal, on stderr
        assert refusal.endswith(" refused 127.0.0.1: 400 query refused: brackets nested 100 deep, above the limit of 64\n"), refusal
    finally:
        process.terminate()
        process.wait(timeout=10)
        process.stdout.close()
        process.stderr.close()


COUNT = "SELECT (COUNT(*) AS ?n) WHERE { ?p a fabio:ResearchPaper }"


def publish(out, graph) -> None:
    from kg.generations import Generation

    with Generation(out) as generation:
        save(graph, generation.folder)
        generation.publish()


def test_serve_follows_a_rebuild_with_one_answer_per_query(sample_graph, two_fields, tmp_path) -> None:
    """Workers held the store they opened: after a rebuild, one query got 16 old answers and
    24 new ones in 40 requests, depending on which worker took it."""
    out = tmp_path / "out"
    publish(out, sample_graph())  # 3 papers
    server = make_server(out, port=0, workers=2)
    thread = serve_in_thread(server)
    url = endpoint_url(server) + "?" + urllib.parse.urlencode({"query": COUNT})
    counts: list[int] = []
    stop = threading.Event()

    def ask() -> None:
        while not stop.is_set():
            status, _, body = fetch(url)
            assert status == 200, body
            counts.append(int(json.loads(body)["results"]["bindings"][0]["n"]["value"]))

    asking = threading.Thread(target=ask)
    try:
        asking.start()
        time.sleep(0.5)
        publish(out, two_fields())  # 12 papers, while the client queries
        switched = len(counts)
        time.sleep(1.5)
        stop.set()
        asking.join(timeout=20)
        after = counts[switched + 1:]  # a request in flight at the switch may see either
        assert len(after) >= 10 and set(after) == {12}, counts
        first_new = counts.index(12)
        assert set(counts[:first_new]) == {3} and set(counts[first_new:]) == {12}  # never back to the old build
    finally:
        stop.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
