"""`kg serve`: a local, read-only SPARQL 1.1 Protocol endpoint over the graph.

pyoxigraph has no HTTP server in its Python API (the Oxigraph server is a separate Rust
binary), so this is a small `http.server` in front of the cached pyoxigraph Store:

* ``GET /sparql?query=…`` and ``POST /sparql`` (``application/sparql-query`` body or an
  ``application/x-www-form-urlencoded`` ``query=…`` form), as in the SPARQL 1.1 Protocol;
* results in the format the ``Accept`` header asks for: SPARQL JSON (default), XML, CSV,
  TSV; CONSTRUCT/DESCRIBE as Turtle (default) or N-Triples;
* a syntax error is ``400 Bad Request`` with the one-line message; updates are refused
  (``405``: the endpoint is read-only); bodies above 1 MB are refused (``413``).

Hostile input stays harmless (`EndpointServer`):

* queries are checked before parsing (`kg.sparql.guard`: nesting, size; SERVICE refused unless
  ``allow_service``): ``400``;
* each query runs in a warm worker process (`kg.sparql.pool.WorkerPool`) holding its own
  read-only store; past ``timeout`` seconds the worker is killed, which stops the work, and
  the client gets ``503``; a worker that crashes is replaced (``500``);
* every request is read whole by one reader thread (`kg.sparql.requests`) before a serving
  thread takes it, so a client trickling bytes holds a socket, not a thread; headers and body
  must arrive within ``request_deadline`` seconds in all, with no silence longer than
  ``io_timeout`` (else ``408``); one client host may hold ``per_client`` connections (more get
  ``503``); a fixed number of threads answer (more waiting requests get ``503``);
  ``Content-Length`` is required and validated (``411``/``400``/``413``); the listen backlog is 128;
* every refusal is one line given to ``log`` (the CLI writes it to stderr).

It binds 127.0.0.1 by default: the graph is served to this machine only. It answers only
requests whose ``Host`` header names it (`HostCheck`: an address, ``localhost``, or a name
allowed with ``allow_hosts``; else ``403``), so a web page whose name its owner points at
127.0.0.1 (DNS rebinding) cannot read the endpoint through the browser of the person running it.
An update sent as ``query=`` is refused as ``update=`` is (``405``).
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import queue
import socket
import socketserver
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pyoxigraph as ox

from kg.errors import KgError, QueryFailed, QuerySyntaxError, ServerError
from kg.generations import resolve
from kg.graph import graph_stamp
from kg.rdf.store import is_corruption, open_store, repair_store
from kg.rdf.terms import DEFAULT_BASE, PREFIXES
from kg.sparql.columns import explicit_projection, star_order
from kg.sparql.engine import StoreDamaged, oxigraph_syntax_error
from kg.sparql.guard import SERVICE_CALL, QueryTimedOut, UpdateRefused, check_query, expand_codepoints
from kg.sparql.hints import undeclared_terms
from kg.sparql.hosts import HostCheck, host_name
from kg.sparql.pool import PoolBusy, WorkerCrashed, WorkerPool
from kg.sparql.requests import RequestReader

MAX_BODY = 1_000_000
ENDPOINT_PATHS = ("/sparql", "/query")
DEFAULT_TIMEOUT = 10.0  # seconds a query may run
IO_TIMEOUT = 5.0  # seconds a socket may stay silent while a request is read or written
REQUEST_DEADLINE = 10.0  # seconds from accepting a connection to having its whole request
PER_CLIENT = 64  # connections one client host may have open at once
BACKLOG = 128
THREADS = 16  # connections served at once; queries run in `workers` processes

RESULT_TYPES: dict[str, ox.QueryResultsFormat] = {
    "application/sparql-results+json": ox.QueryResultsFormat.JSON,
    "application/json": ox.QueryResultsFormat.JSON,
    "application/sparql-results+xml": ox.QueryResultsFormat.XML,
    "application/xml": ox.QueryResultsFormat.XML,
    "text/csv": ox.QueryResultsFormat.CSV,
    "text/tab-separated-values": ox.QueryResultsFormat.TSV,
}
GRAPH_TYPES: dict[str, ox.RdfFormat] = {
    "text/turtle": ox.RdfFormat.TURTLE,
    "application/n-triples": ox.RdfFormat.N_TRIPLES,
    "application/ld+json": ox.RdfFormat.JSON_LD,
}

Log = Callable[[str], None]
_BUSY = b"too many connections; try again\n"
BUSY_RESPONSE = b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\n\r\n%s" % (len(_BUSY), _BUSY)


def _negotiate(accept: str, choices: Mapping[str, Any], default: str) -> str:
    """The first media type of the Accept header we can produce (q-values ignored), else `default`."""
    for part in accept.split(","):
        media = part.split(";")[0].strip().lower()
        if media in choices:
            return media
    return default


# --- what a worker process runs ------------------------------------------------------------


class FollowingStore:
    """A worker's own store of the build `directory` shows now: the cache opened read-only
    (or built in memory), and opened again when a build has switched the generation, so that
    every worker answers from the current build from the first request after the switch."""

    def __init__(self, directory: str, base: str) -> None:
        self.directory, self.base = directory, base
        self._stamp: dict[str, Any] | None = None
        self._store: ox.Store | None = None
        self.current()

    def current(self) -> ox.Store:
        view = resolve(self.directory)  # per request: a readlink and 256 bytes of graph.json
        try:
            stamp = graph_stamp(view.graph)
        except OSError:
            stamp = None  # graph.json gone mid-switch: keep answering from the open store
        if self._store is None or (stamp is not None and stamp != self._stamp):
            self._store = None  # close the old read-only store before opening the new one
            self._store = open_store(view, base=self.base)
            self._stamp = stamp
        return self._store

    def repair(self) -> None:
        """Rebuild the damaged store (`kg.rdf.store.repair_store`); the next `current` opens it."""
        self._store = None
        repair_store(self.directory, base=self.base)
        self._stamp = None


def open_worker_store(directory: str, base: str) -> FollowingStore:
    """A worker's state: its store, following the current generation."""
    return FollowingStore(directory, base)


def answer(state: FollowingStore, request: tuple[str, str]) -> tuple[str, bytes]:
    """Run one query (already checked) and serialise it as `accept` asks: (media type, body).
    A store whose files prove damaged is rebuilt from the build's own files, and asked again."""
    try:
        return _answer(state.current(), request)
    except StoreDamaged as error:
        try:
            state.repair()
        except KgError as repair_error:
            raise QueryFailed(f"{error.message}, and rebuilding it failed: {repair_error.message}") from repair_error
        return _answer(state.current(), request)


def _answer(store: ox.Store, request: tuple[str, str]) -> tuple[str, bytes]:
    text, accept = request
    try:
        result = store.query(text, prefixes=PREFIXES)
        if isinstance(result, ox.QuerySolutions):
            result = _in_star_order(store, text, result)
        if isinstance(result, ox.QueryTriples):
            media = _negotiate(accept, GRAPH_TYPES, "text/turtle")
            return media, ox.serialize(result, format=GRAPH_TYPES[media]) or b""
        media = _negotiate(accept, RESULT_TYPES, "application/sparql-results+json")
        return media, result.serialize(format=RESULT_TYPES[media]) or b""
    except SyntaxError as error:
        raise oxigraph_syntax_error(str(error), text) from error
    except (OSError, ValueError, RuntimeError) as error:
        if is_corruption(error):
            raise StoreDamaged.of(error) from error
        raise QueryFailed(f"SPARQL query failed: {error}") from error


def _in_star_order(store: ox.Store, text: str, result: ox.QuerySolutions) -> ox.QuerySolutions:
    """A ``SELECT *`` asked again with its columns listed in the order the query names them
    (`kg.sparql.columns`), as `kg sparql` shows them; Oxigraph sorts them by name. Not one
    that calls a SERVICE (allowed): that would fetch twice."""
    names = [variable.value for variable in result.variables]
    order = star_order(text, names)
    if not order or list(order) == names or SERVICE_CALL.search(expand_codepoints(text)):
        return result
    again = store.query(explicit_projection(text, order), prefixes=PREFIXES)
    assert isinstance(again, ox.QuerySolutions)  # the same query, its projection spelt out
    return again


# --- HTTP ----------------------------------------------------------------------------------


class SparqlHandler(BaseHTTPRequestHandler):
    server_version = "kg-sparql/1"
    server: EndpointServer

    def setup(self) -> None:
        # the request was read whole by the server's RequestReader: parse it from memory
        request: ReadRequest = self.request
        self.connection = request.sock
        self.rfile = io.BytesIO(request.data)
        self._reply = self.wfile = io.BytesIO()  # the whole answer, sent by the reader thread (`finish`)

    def finish(self) -> None:
        request: ReadRequest = self.request
        request.handed = True
        self.server.reply(request.sock, self.client_address, self._reply.getvalue())

    def log_message(self, format: str, *args: Any) -> None:  # successes are not logged
        pass

    def log_error(self, format: str, *args: Any) -> None:  # http.server's own refusals
        self.server.refused(self.client_address, " ".join((format % args).split()))

    def _host_refused(self) -> bool:
        """Answer ``403`` (and say so) when the ``Host`` header, or the host an absolute-form
        target names (``GET http://evil.example/sparql``), is not one of this server's, and
        ``400`` for two ``Host`` headers (the first was read, the second a proxy may read).
        Asked before any answer that holds data (a query's, the root's); a malformed request is
        refused for what it is first."""
        headers = self.headers.get_all("Host") or []
        if len(headers) > 1:  # which one a proxy or this server would read is anyone's guess: neither
            self._error(HTTPStatus.BAD_REQUEST, f"{len(headers)} Host headers; a request has one")
            return True
        names: list[str | None] = [*headers] or [None]
        target = urlsplit(self.path)
        if not self.path.startswith("/"):  # absolute-form (`GET http://evil.example/sparql`): the target names the host (RFC 9112 3.2.2)
            names.append(target.netloc.rpartition("@")[2])
        for header in names:
            name = self.server.hosts.refuses(header)
            if name is not None:
                self._error(HTTPStatus.FORBIDDEN, f"host {name!r} is not a name of this server (a web page may have pointed it here); allow the name when starting the server to answer it")
                return True
        return False

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        if url.path not in ENDPOINT_PATHS:
            if url.path == "/":
                if self._host_refused():
                    return None
                return self._send(HTTPStatus.OK, "text/plain; charset=utf-8", b"kg SPARQL endpoint: GET or POST /sparql?query=...\n")
            return self._error(HTTPStatus.NOT_FOUND, f"no such path {url.path}; the endpoint is /sparql")
        params = parse_qs(url.query, keep_blank_values=True)
        if "update" in params:
            return self._error(HTTPStatus.METHOD_NOT_ALLOWED, "this endpoint is read-only")
        self._answer(params.get("query", [None])[0])

    def do_POST(self) -> None:
        url = urlsplit(self.path)
        if url.path not in ENDPOINT_PATHS:
            return self._error(HTTPStatus.NOT_FOUND, f"no such path {url.path}; the endpoint is /sparql")
        body = self._body()
        if body is None:
            return
        content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if content_type == "application/sparql-query":
            return self._answer(body)
        if content_type == "application/x-www-form-urlencoded":
            params = parse_qs(body, keep_blank_values=True)
            if "update" in params:
                return self._error(HTTPStatus.METHOD_NOT_ALLOWED, "this endpoint is read-only")
            return self._answer(params.get("query", [None])[0])
        if content_type == "application/sparql-update":
            return self._error(HTTPStatus.METHOD_NOT_ALLOWED, "this endpoint is read-only")
        return self._error(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "send application/sparql-query or a form with query=")

    def _body(self) -> str | None:
        """The request body, or None after answering why it is refused."""
        if self.headers.get("Transfer-Encoding"):
            self._error(HTTPStatus.LENGTH_REQUIRED, "chunked bodies are not supported; send Content-Length")
            return None
        declared = self.headers.get_all("Content-Length") or []
        if not declared:
            self._error(HTTPStatus.LENGTH_REQUIRED, "Content-Length required")
            return None
        value = declared[0].strip()
        if len(set(declared)) > 1 or not value.isdigit() or not value.isascii():
            self._error(HTTPStatus.BAD_REQUEST, f"invalid Content-Length {', '.join(declared)[:40]!r}")
            return None
        length = int(value) if len(value) <= 12 else MAX_BODY + 1  # int() refuses 4,300+ digits
        if length > MAX_BODY:
            self._error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"request body above {MAX_BODY:,} bytes")
            return None
        data = self.rfile.read(length)  # in memory: the reader waited for the whole body
        if len(data) < length:
            self.server.refused(self.client_address, f"body ended after {len(data):,} of {length:,} bytes")
            self.close_connection = True
            return None
        return data.decode("utf-8", "replace")

    def _answer(self, query: str | None) -> None:
        if self._host_refused():  # before anything is run or sent back
            return
        if not query:
            return self._error(HTTPStatus.BAD_REQUEST, "missing query parameter")
        server = self.server
        try:
            check_query(query, allow_service=server.allow_service)
            media, body = server.pool.call((query, self.headers.get("Accept") or ""), timeout=server.query_timeout)
        except UpdateRefused as error:  # an update sent as query=: refused as update= is
            return self._error(HTTPStatus.METHOD_NOT_ALLOWED, f"this endpoint is read-only; {error.message}")
        except QuerySyntaxError as error:
            shown = f"\n{error.excerpt[0]}\n{error.excerpt[1]}" if error.excerpt else ""
            return self._error(HTTPStatus.BAD_REQUEST, error.message, detail=shown)
        except (QueryTimedOut, PoolBusy) as error:
            return self._error(HTTPStatus.SERVICE_UNAVAILABLE, error.message)
        except (WorkerCrashed, KgError) as error:
            return self._error(HTTPStatus.INTERNAL_SERVER_ERROR, error.message)
        warnings = [term.message() for term in undeclared_terms(query)]
        for warning in warnings:  # the query ran, but a misspelt term matches nothing
            server.refused(self.client_address, f"warning: {warning}")
        self._send(HTTPStatus.OK, f"{media}; charset=utf-8", body, warnings=warnings)

    def _error(self, status: HTTPStatus, message: str, detail: str = "") -> None:
        self.server.refused(self.client_address, f"{int(status)} {message}")
        self._send(status, "text/plain; charset=utf-8", (message + detail + "\n").encode("utf-8"))

    def _send(self, status: HTTPStatus, content_type: str, body: bytes, warnings: Sequence[str] = ()) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for warning in warnings:  # header values must be one line of Latin-1: the terms are ASCII names
            self.send_header("X-Kg-Warning", warning.encode("ascii", "backslashreplace").decode("ascii"))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class EndpointServer(socketserver.TCPServer):
    """A TCP server: accepted connections are read whole by one `RequestReader` thread, then
    answered by `threads` fixed threads; queries go to `pool`. A client with `per_client`
    connections open already, or a connection that finds every thread busy and the short
    queue full, gets ``503``."""

    allow_reuse_address = True
    request_queue_size = BACKLOG

    def __init__(
        self, address: tuple[str, int], pool: WorkerPool, *, query_timeout: float, io_timeout: float = IO_TIMEOUT,
        request_deadline: float = REQUEST_DEADLINE, threads: int = THREADS, per_client: int = PER_CLIENT,
        allow_service: bool = False, log: Log | None = None, hosts: HostCheck | None = None,
    ) -> None:
        self.pool, self.query_timeout, self.io_timeout = pool, query_timeout, io_timeout
        self.hosts = hosts or HostCheck()  # addresses and localhost
        self.allow_service, self.per_client = allow_service, per_client
        self._log = log
        self._pending: queue.Queue[tuple[socket.socket, Any, bytes] | None] = queue.Queue(maxsize=threads * 4)
        self._threads: list[threading.Thread] = []
        self._open: dict[str, int] = {}  # connections per client host, from accept to close
        self._open_lock = threading.Lock()
        self._reader: RequestReader | None = None
        super().__init__(address, SparqlHandler)  # on a bind error it calls server_close
        self._reader = RequestReader(self._request_ready, self._dropped, deadline=request_deadline, idle=io_timeout, max_body=MAX_BODY)
        self._threads = [threading.Thread(target=self._serve_connections, name=f"kg-http-{i}", daemon=True) for i in range(threads)]
        for thread in self._threads:
            thread.start()

    def refused(self, client: Any, reason: str) -> None:
        if self._log is not None:
            self._log(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} refused {_host(client)}: {reason}")

    def process_request(self, request: Any, client_address: Any) -> None:
        host = _host(client_address)
        with self._open_lock:
            count = self._open.get(host, 0)
            if count < self.per_client:
                self._open[host] = count + 1
        if count >= self.per_client:
            self.refused(client_address, f"503 too many connections from this client (limit {self.per_client})")
            self._busy(request)
            return
        assert self._reader is not None
        self._reader.add(request, client_address)

    def _request_ready(self, request: socket.socket, client_address: Any, data: bytes) -> None:
        try:
            self._pending.put_nowait((request, client_address, data))
        except queue.Full:
            self.refused(client_address, "503 too many connections")
            self._busy(request)
            self._dropped(client_address, None)

    def _busy(self, request: socket.socket) -> None:
        with contextlib.suppress(OSError):
            request.setblocking(True)
            request.settimeout(0.5)
            request.sendall(BUSY_RESPONSE)
        self.shutdown_request(request)

    def _dropped(self, client_address: Any, reason: str | None) -> None:
        if reason is not None:
            self.refused(client_address, reason)
        host = _host(client_address)
        with self._open_lock:
            left = self._open.get(host, 1) - 1
            if left > 0:
                self._open[host] = left
            else:
                self._open.pop(host, None)

    def _serve_connections(self) -> None:
        while (item := self._pending.get()) is not None:
            request, client_address, data = item
            read = ReadRequest(request, data)
            try:
                self.finish_request(read, client_address)  # type: ignore[arg-type]  # any request object goes; typeshed says a socket
            except Exception as error:  # noqa: BLE001 - one bad connection must not end the thread
                self.refused(client_address, f"connection dropped: {type(error).__name__}: {error}")
            finally:
                if not read.handed:  # the answer went to the reader thread, which closes the socket
                    self.shutdown_request(request)
                    self._dropped(client_address, None)

    def reply(self, request: socket.socket, client_address: Any, data: bytes) -> None:
        assert self._reader is not None
        self._reader.reply(request, client_address, data)

    def server_close(self) -> None:
        super().server_close()
        if self._reader is not None:
            self._reader.close()
        for _ in self._threads:
            with contextlib.suppress(queue.Full):
                self._pending.put_nowait(None)
        self.pool.close()


@dataclass
class ReadRequest:
    """A connection whose request `RequestReader` has read whole (`data`); `handed` once its
    answer went back to the reader thread to send."""

    sock: socket.socket
    data: bytes
    handed: bool = False


def _host(client: Any) -> str:
    return str(client[0]) if isinstance(client, tuple) else str(client)


def make_server(
    directory: str | os.PathLike[str], *, host: str = "127.0.0.1", port: int = 7878, base: str = DEFAULT_BASE,
    timeout: float = DEFAULT_TIMEOUT, workers: int = 2, threads: int = THREADS, io_timeout: float = IO_TIMEOUT,
    request_deadline: float = REQUEST_DEADLINE, per_client: int = PER_CLIENT, allow_service: bool = False, log: Log | None = None,
    allow_hosts: Sequence[str] = (),
) -> EndpointServer:
    """A server (not yet serving) answering SPARQL over the graph in `directory` (its store
    built or reused first); port 0 picks a free one. `workers` processes run the queries,
    each following the generation `directory` shows (`FollowingStore`). It answers requests
    whose ``Host`` is an address, ``localhost``, `host` or one of `allow_hosts` (`HostCheck`)."""
    open_store(directory, base=base)  # build the cache once, here, before the workers open it
    pool = WorkerPool(functools.partial(open_worker_store, str(directory), base), answer, size=max(1, workers))
    try:
        return EndpointServer(
            (host, port), pool, query_timeout=timeout, io_timeout=io_timeout, request_deadline=request_deadline,
            threads=threads, per_client=per_client, allow_service=allow_service, log=log,
            hosts=HostCheck(frozenset(host_name(name) for name in (host, *allow_hosts))),
        )
    except OSError as error:
        pool.close()
        raise ServerError(f"cannot listen on {host}:{port}: {error.strerror or error}") from error


def endpoint_url(server: socketserver.TCPServer) -> str:
    address, port = server.server_address[:2]
    host = address.decode() if isinstance(address, (bytes, bytearray)) else address  # bound: a str, but typeshed allows bytes
    host = f"[{host}]" if ":" in host else host
    return f"http://{host}:{port}/sparql"


def open_server(directory: str | os.PathLike[str] = "out", **options: Any) -> EndpointServer:
    """Check `directory` holds a graph, then `make_server` over it (options as there)."""
    from kg.graph import GRAPH_FILE, load

    folder = Path(directory)
    if not (folder / GRAPH_FILE if folder.is_dir() else folder).is_file():
        load(folder)  # raises GraphNotFound with the usual message
    return make_server(folder, **options)


def serve_in_thread(server: socketserver.TCPServer) -> threading.Thread:
    """Run `server` in a daemon thread (tests, notebooks); stop with server.shutdown()."""
    thread = threading.Thread(target=server.serve_forever, name="kg-sparql", daemon=True)
    thread.start()
    return thread
