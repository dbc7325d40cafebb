"""`kg serve`: a local, read-only SPARQL 1.1 Protocol endpoint over the graph.

pyoxigraph has no HTTP server in its Python API (the Oxigraph server is a separate Rust
binary), so this is a small `http.server` in front of the cached pyoxigraph Store:

* ``GET /sparql?query=…`` and ``POST /sparql`` (``application/sparql-query`` body or an
  ``application/x-www-form-urlencoded`` ``query=…`` form), as in the SPARQL 1.1 Protocol;
* results in the format the ``Accept`` header asks for: SPARQL JSON (default), XML, CSV,
  TSV; CONSTRUCT/DESCRIBE as Turtle (default) or N-Triples;
* a syntax error is ``400 Bad Request`` with the one-line message; updates are refused
  (``405``: the endpoint is read-only); bodies above 1 MB are refused (``413``).

It binds 127.0.0.1 by default: the graph is served to this machine only.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pyoxigraph as ox

from kg.errors import ServerError
from kg.rdf.terms import DEFAULT_BASE, PREFIXES
from kg.store import open_store
from kg.sparql import _oxigraph_syntax_error

MAX_BODY = 1_000_000
ENDPOINT_PATHS = ("/sparql", "/query")

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


def _negotiate(accept: str, choices: Mapping[str, Any], default: str) -> str:
    """The first media type of the Accept header we can produce (q-values ignored), else `default`."""
    for part in accept.split(","):
        media = part.split(";")[0].strip().lower()
        if media in choices:
            return media
    return default


class SparqlHandler(BaseHTTPRequestHandler):
    server_version = "kg-sparql/1"
    store: ox.Store  # set on the subclass made by make_server

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the CLI says what runs
        pass

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        if url.path not in ENDPOINT_PATHS:
            if url.path == "/":
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
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            return self._error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"request body above {MAX_BODY:,} bytes")
        body = self.rfile.read(length).decode("utf-8", "replace")
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

    def _answer(self, query: str | None) -> None:
        if not query:
            return self._error(HTTPStatus.BAD_REQUEST, "missing query parameter")
        try:
            result = self.store.query(query, prefixes=PREFIXES)
            accept = self.headers.get("Accept") or ""
            if isinstance(result, ox.QueryTriples):
                media = _negotiate(accept, GRAPH_TYPES, "text/turtle")
                body = ox.serialize(result, format=GRAPH_TYPES[media])
            else:
                media = _negotiate(accept, RESULT_TYPES, "application/sparql-results+json")
                body = result.serialize(format=RESULT_TYPES[media])
        except SyntaxError as error:
            return self._error(HTTPStatus.BAD_REQUEST, _oxigraph_syntax_error(str(error)).message)
        except (OSError, ValueError, RuntimeError) as error:
            return self._error(HTTPStatus.INTERNAL_SERVER_ERROR, f"SPARQL query failed: {error}")
        self._send(HTTPStatus.OK, f"{media}; charset=utf-8", body or b"")

    def _error(self, status: HTTPStatus, message: str) -> None:
        self._send(status, "text/plain; charset=utf-8", (message + "\n").encode("utf-8"))

    def _send(self, status: HTTPStatus, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def make_server(store: ox.Store, *, host: str = "127.0.0.1", port: int = 7878) -> ThreadingHTTPServer:
    """A server (not yet serving) answering SPARQL over `store`; port 0 picks a free one."""
    handler = type("BoundSparqlHandler", (SparqlHandler,), {"store": store})
    try:
        server = ThreadingHTTPServer((host, port), handler)
    except OSError as error:
        raise ServerError(f"cannot listen on {host}:{port}: {error.strerror or error}") from error
    server.daemon_threads = True
    return server


def endpoint_url(server: ThreadingHTTPServer) -> str:
    host, port = server.server_address[:2]
    host = f"[{host}]" if ":" in str(host) else host
    return f"http://{host}:{port}/sparql"


def open_server(directory: str | os.PathLike[str] = "out", *, host: str = "127.0.0.1", port: int = 7878, base: str = DEFAULT_BASE) -> ThreadingHTTPServer:
    """Load (or reuse the cached) Oxigraph store of the graph in `directory` and bind a server."""
    from kg.graph import GRAPH_FILE, load

    folder = Path(directory)
    if not (folder / GRAPH_FILE if folder.is_dir() else folder).is_file():
        load(folder)  # raises GraphNotFound with the usual message
    return make_server(open_store(folder, base=base), host=host, port=port)


def serve_in_thread(server: ThreadingHTTPServer) -> threading.Thread:
    """Run `server` in a daemon thread (tests, notebooks); stop with server.shutdown()."""
    thread = threading.Thread(target=server.serve_forever, name="kg-sparql", daemon=True)
    thread.start()
    return thread
