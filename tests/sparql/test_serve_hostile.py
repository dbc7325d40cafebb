"""`kg serve` against hostile requests (issue 13), on loopback only, every wait bounded."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

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
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
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
    (b"Content-Length: " + b"9" * 5000 + b"\r\n", b"413"),  # int() of 4,300+ digits raised: no reply
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
    assert answer.startswith(b"HTTP/1.0 408 Request Timeout") and answer.endswith(b"the connection stayed silent for 1 s\n")
    assert time.monotonic() - started < 5  # dropped after io_timeout (1 s)
    idle = [socket.create_connection(server.server_address[:2], timeout=10) for _ in range(10)]
    try:
        started = time.monotonic()
        assert get(server, OK_QUERY)[0] == 200  # silent connections hold no thread (4 here)
        assert time.monotonic() - started < 1
        for sock in idle:  # each is told, then closed, once silent for io_timeout
            assert sock.recv(1024).startswith(b"HTTP/1.0 408")
        assert time.monotonic() - started < 10
    finally:
        for sock in idle:
            sock.close()
    assert any("timed out" in line for line in log), log


def trickle(server, data: bytes, pause: float, stop: threading.Event, answers: list) -> None:
    """Send `data` one byte every `pause` seconds; keep what the server answers."""
    with socket.create_connection(server.server_address[:2], timeout=30) as sock:
        try:
            for byte in data:
                if stop.is_set():
                    return
                sock.sendall(bytes([byte]))
                time.sleep(pause)
            answers.append(sock.recv(1024))
        except OSError:  # the server closed it (and may have said why first)
            with contextlib.suppress(OSError):
                answers.append(sock.recv(1024))


def test_trickling_clients_do_not_starve_the_server(served) -> None:
    """16 clients sending a byte every 0.3 s used to hold all 16 threads for as long as they
    kept trickling: a per-receive timeout never fired."""
    server, log = served(threads=4, request_deadline=3.0)
    stop, answers = threading.Event(), []
    request = b"GET /sparql?query=" + urllib.parse.quote(OK_QUERY).encode() + b" HTTP/1.0\r\n\r\n"
    tricklers = [threading.Thread(target=trickle, args=(server, request, 0.3, stop, answers)) for _ in range(16)]
    for thread in tricklers:
        thread.start()
    try:
        time.sleep(0.5)
        for _ in range(20):  # everyone else is answered at once, while they trickle
            started = time.monotonic()
            assert get(server, OK_QUERY)[0] == 200
            assert time.monotonic() - started < 1
        for thread in tricklers:  # and each trickler is cut off at the whole-request deadline
            thread.join(timeout=15)
        assert len(answers) == 16 and all(a.startswith(b"HTTP/1.0 408") for a in answers), answers[:2]
        assert sum("did not arrive whole within 3 s" in line for line in log) == 16
    finally:
        stop.set()


def test_too_many_connections_get_503_not_a_reset(served) -> None:
    server, log = served(threads=1, per_client=5)
    hold = [socket.create_connection(server.server_address[:2], timeout=10) for _ in range(12)]
    try:
        time.sleep(0.3)
        answers = []
        for sock in hold[5:]:  # 5 are being read; the rest were told to come back
            sock.settimeout(3)
            try:
                answers.append(sock.recv(1024))
            except TimeoutError:
                answers.append(b"")
        assert all(a.startswith(b"HTTP/1.0 503 Service Unavailable") for a in answers), answers
        assert sum("503 too many connections from this client (limit 5)" in line for line in log) == 7
    finally:
        for sock in hold:
            sock.close()
    time.sleep(0.3)
    assert get(server, OK_QUERY)[0] == 200  # closed connections no longer count
    assert BACKLOG >= 64 and server.socket.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)


def test_clients_that_never_read_their_answer_do_not_stall_the_server(seeds_out) -> None:
    """64 clients asking for a large answer and never reading it held every serving thread
    (a normal ASK took 20.9 s): each answer blocked its thread until the write timed out."""
    log: list[str] = []
    server = make_server(seeds_out, port=0, log=log.append, timeout=10.0, io_timeout=2.0, threads=4, workers=2)
    thread = serve_in_thread(server)
    big = urllib.parse.urlencode({"query": "SELECT * WHERE { ?s ?p ?o }"})
    hold = []
    try:
        for _ in range(24):
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
            sock.connect(server.server_address[:2])
            sock.sendall(f"GET /sparql?{big} HTTP/1.0\r\n\r\n".encode())
            hold.append(sock)
        time.sleep(2.0)  # their answers are computed and stuck in the send queue
        for _ in range(5):
            started = time.monotonic()
            assert get(server, OK_QUERY, timeout=10)[0] == 200
            assert time.monotonic() - started < 2.0
        deadline = time.monotonic() + 15
        while not any("did not read its answer" in line for line in log):
            assert time.monotonic() < deadline, log[-3:]
            time.sleep(0.2)
    finally:
        for sock in hold:
            sock.close()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
