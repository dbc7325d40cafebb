"""`kg serve` against hostile requests (issue 13), on loopback only, every wait bounded."""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

from kg.graph import save
from kg.sparql.serve import BACKLOG, endpoint_url, make_server, serve_in_thread

OK_QUERY = "SELECT (COUNT(*) AS ?n) WHERE { ?p a fabio:ResearchPaper }"
CROSS = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"  # 255^4 rows


@pytest.fixture(scope="module")
def graph_dir(sample_graph, tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    save(sample_graph(), folder)
    return folder


@pytest.fixture
def served(graph_dir):
    """A server with short limits: (server, log lines). Stopped after the test."""
    started: list = []

    def start(**options):
        log: list[str] = []
        server = make_server(graph_dir, port=0, log=log.append, **{"timeout": 1.0, "io_timeout": 1.0, "threads": 4, "workers": 1, **options})
        thread = serve_in_thread(server)
        started.append((server, thread))
        return server, log

    yield start
    for server, thread in started:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of `pid` so far (Linux /proc); 0 once it has gone."""
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def get(server, query: str, timeout: float = 15) -> tuple[int, str]:
    url = endpoint_url(server) + "?" + urllib.parse.urlencode({"query": query})
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def raw(server, data: bytes, *, wait: float = 5) -> bytes:
    """Send `data` on a fresh connection; everything the server answers until it closes."""
    with socket.create_connection(server.server_address[:2], timeout=wait) as sock:
        sock.sendall(data)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
        return b"".join(chunks)


def test_deep_nesting_is_400_and_the_server_lives(served) -> None:
    server, log = served()
    status, body = get(server, "SELECT * WHERE " + "{" * 3000 + "}" * 3000)
    assert (status, body) == (400, "query refused: brackets nested 3,000 deep, above the limit of 64\n")
    assert get(server, OK_QUERY)[0] == 200
    assert log[0].endswith(" refused 127.0.0.1: 400 query refused: brackets nested 3,000 deep, above the limit of 64")


def test_service_is_refused_and_nothing_leaves(served) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.settimeout(2)
        target = f"http://127.0.0.1:{listener.getsockname()[1]}/sparql"
        server, _ = served()
        status, body = get(server, f"SELECT * WHERE {{ SERVICE <{target}> {{ ?s ?p ?o }} }}")
        assert status == 400 and body.startswith("query refused: SERVICE")
        with pytest.raises(TimeoutError):
            listener.accept()  # no outbound request was made
        # the control: with --allow-service the same query does reach the listener
        allowing, _ = served(allow_service=True, timeout=3.0)
        answer: list = []
        asking = threading.Thread(target=lambda: answer.append(get(allowing, f"SELECT * WHERE {{ SERVICE <{target}> {{ ?s ?p ?o }} }}")))
        asking.start()
        connection, _ = listener.accept()
        connection.close()
        asking.join(timeout=15)
        assert answer and answer[0][0] in (500, 503)


def test_timeout_kills_the_work(served) -> None:
    server, log = served()
    before = set(server.pool.pids())
    started = time.monotonic()
    status, body = get(server, CROSS)
    assert (status, body) == (503, "query stopped after the time limit of 1 s\n")
    assert time.monotonic() - started < 10
    for pid in before:  # the worker that ran it is gone (killed and reaped)
        assert not os.path.exists(f"/proc/{pid}")
    deadline = time.monotonic() + 30
    while get(server, OK_QUERY)[0] != 200:  # a replacement worker answers
        assert time.monotonic() < deadline
        time.sleep(0.2)
    workers = server.pool.pids()
    spent = {pid: cpu_seconds(pid) for pid in workers}
    time.sleep(1.0)
    assert all(cpu_seconds(pid) - spent[pid] < 0.5 for pid in workers)  # nothing still burning CPU
    assert any("503 query stopped after the time limit of 1 s" in line for line in log)


def test_a_crashed_worker_is_replaced(served) -> None:
    server, _ = served()
    for pid in server.pool.pids():
        os.kill(pid, signal.SIGKILL)
    statuses = []
    deadline = time.monotonic() + 30
    while not statuses or statuses[-1] != 200:
        statuses.append(get(server, OK_QUERY)[0])
        assert time.monotonic() < deadline, statuses
        time.sleep(0.1)
    assert set(statuses) <= {200, 500, 503}


@pytest.mark.parametrize(("headers", "status"), [
    (b"", b"411"),
    (b"Content-Length: abc\r\n", b"400"),
    (b"Content-Length: -1\r\n", b"400"),
    (b"Content-Length: 1e3\r\n", b"400"),
    (b"Content-Length: 5\r\nContent-Length: 6\r\n", b"400"),
    (b"Content-Length: 99999999999\r\n", b"413"),
    (b"Transfer-Encoding: chunked\r\n", b"411"),
])
def test_content_length_is_validated(served, headers: bytes, status: bytes) -> None:
    server, log = served()
    started = time.monotonic()
    answer = raw(server, b"POST /sparql HTTP/1.1\r\nHost: x\r\nContent-Type: application/sparql-query\r\n" + headers + b"\r\n")
    assert answer.startswith(b"HTTP/1.0 " + status), answer
    assert b"Traceback" not in answer and time.monotonic() - started < 5
    assert len(log) == 1 and "\n" not in log[0]


def test_short_body_and_silent_connections_are_dropped(served) -> None:
    server, log = served()
    started = time.monotonic()
    answer = raw(server, b"POST /sparql HTTP/1.0\r\nContent-Type: application/sparql-query\r\nContent-Length: 100\r\n\r\nASK {}", wait=10)
    assert answer == b"" and time.monotonic() - started < 5  # dropped after io_timeout (1 s)
    idle = [socket.create_connection(server.server_address[:2], timeout=10) for _ in range(10)]
    try:
        assert get(server, OK_QUERY)[0] == 200  # served once the 10 silent ones ahead of it are dropped
        started = time.monotonic()
        for sock in idle:  # each is closed by the server (EOF) or refused with 503 (queue full)
            data = sock.recv(1024)
            assert data == b"" or data.startswith(b"HTTP/1.0 503"), data
        assert time.monotonic() - started < 10
    finally:
        for sock in idle:
            sock.close()
    assert any("timed out" in line for line in log), log


def test_too_many_connections_get_503_not_a_reset(served) -> None:
    server, log = served(threads=1)
    hold = [socket.create_connection(server.server_address[:2], timeout=10) for _ in range(12)]
    try:
        time.sleep(0.3)
        answers = []
        for sock in hold[5:]:  # 1 in a thread + 4 queued; the rest were told to come back
            sock.settimeout(3)
            try:
                answers.append(sock.recv(1024))
            except TimeoutError:
                answers.append(b"")
        assert any(a.startswith(b"HTTP/1.0 503 Service Unavailable") for a in answers)
        assert any("503 too many connections" in line for line in log)
    finally:
        for sock in hold:
            sock.close()
    assert BACKLOG >= 64 and server.socket.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)
