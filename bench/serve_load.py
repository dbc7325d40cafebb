"""Load-test `kg serve` on loopback: requests/s, latency percentiles and errors per client count.

    .venv/bin/python bench/serve_load.py --graph OUT [--clients 8,32] [--requests 3000]
    .venv/bin/python bench/serve_load.py --url http://127.0.0.1:7878/sparql   # a running server

With ``--graph`` it starts ``python -m kg serve --graph OUT --port 0`` itself (``--python``
picks the interpreter, e.g. another worktree's venv to measure older code), waits for it,
loads it, and stops it. Only 127.0.0.1 is ever contacted; every request has a timeout and the
number of requests is bounded (``--requests`` per client count).

Each client is a thread opening one connection per request (the endpoint speaks HTTP/1.0) and
sending one of a few ordinary queries (a count, a lookup, a bundled example query). An error is
any non-200 answer, a reset, or a timeout. Prints one table row per client count.

``--trickle N`` adds N hostile clients for the whole run, each sending a request one byte every
``--trickle-pause`` seconds (2 by default) and reconnecting when cut off: they must not slow
the others down (before the requests were read whole, 16 of them held all 16 threads).
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse
from collections import Counter

QUERIES = (
    "SELECT (COUNT(*) AS ?n) WHERE { ?p a fabio:ResearchPaper }",
    "SELECT ?id ?t WHERE { ?p dcterms:identifier ?id ; dcterms:title ?t } ORDER BY ?id LIMIT 5",
    "SELECT ?c ?l WHERE { ?c a kg:Method ; skos:prefLabel ?l } LIMIT 20",
    "ASK { ?p kg:proposes ?c }",
)


def one_request(host: str, port: int, path: str, query: str, timeout: float) -> tuple[bool, float, str]:
    body = urllib.parse.urlencode({"query": query}).encode()
    started = time.perf_counter()
    connection = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        connection.request("POST", path, body=body, headers={"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/sparql-results+json"})
        response = connection.getresponse()
        response.read()
        ok = response.status == 200
        kind = "ok" if ok else f"HTTP {response.status}"
    except (OSError, http.client.HTTPException) as error:
        ok, kind = False, type(error).__name__
    finally:
        connection.close()
    return ok, time.perf_counter() - started, kind


def trickle(host: str, port: int, path: str, pause: float, stop: threading.Event, cut: Counter[str]) -> None:
    """One byte of a request every `pause` seconds, again and again, until `stop`."""
    import socket

    request = f"GET {path}?{urllib.parse.urlencode({'query': QUERIES[0]})} HTTP/1.0\r\n\r\n".encode()
    while not stop.is_set():
        try:
            with socket.create_connection((host, port), timeout=30) as sock:
                for byte in request:
                    if stop.wait(pause):
                        return
                    sock.sendall(bytes([byte]))
        except OSError:
            cut["trickler cut off"] += 1


def run(url: str, clients: int, requests: int, timeout: float) -> dict[str, object]:
    parts = urllib.parse.urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    if host not in ("127.0.0.1", "localhost"):
        raise SystemExit("serve_load only talks to loopback (127.0.0.1)")
    counter = itertools.count()
    latencies: list[float] = []
    outcomes: Counter[str] = Counter()
    lock = threading.Lock()

    def client() -> None:
        while (n := next(counter)) < requests:
            ok, seconds, kind = one_request(host, port, parts.path or "/sparql", QUERIES[n % len(QUERIES)], timeout)
            with lock:
                outcomes[kind] += 1
                if ok:
                    latencies.append(seconds)

    threads = [threading.Thread(target=client, daemon=True) for _ in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    latencies.sort()
    quantile = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] if latencies else float("nan")  # noqa: E731
    errors = sum(n for kind, n in outcomes.items() if kind != "ok")
    return {
        "clients": clients, "requests": requests, "rps": len(latencies) / elapsed, "p50": quantile(0.50),
        "p95": quantile(0.95), "p99": quantile(0.99), "errors": errors,
        "kinds": ", ".join(f"{k} {n}" for k, n in sorted(outcomes.items()) if k != "ok") or "-",
        "mean": statistics.fmean(latencies) if latencies else float("nan"),
    }


def start_server(python: str, graph: str, extra: list[str]) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen([python, "-m", "kg", "serve", "--graph", graph, "--port", "0", *extra], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    line = process.stderr.readline()
    if not line.startswith("SPARQL endpoint: "):
        process.kill()
        raise SystemExit(f"kg serve did not start: {line}{process.stderr.read()}")
    threading.Thread(target=process.stderr.read, daemon=True).start()  # drain the refusal log
    return process, line.split()[2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--graph", help="a built folder: start `kg serve` on it")
    where.add_argument("--url", help="a running endpoint on 127.0.0.1")
    parser.add_argument("--python", default=sys.executable, help="interpreter that runs `kg serve` (default: this one)")
    parser.add_argument("--clients", default="8,32", help="comma-separated client counts")
    parser.add_argument("--requests", type=int, default=3000, help="requests per client count")
    parser.add_argument("--timeout", type=float, default=10.0, help="per-request timeout, seconds")
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--trickle", type=int, default=0, help="hostile clients sending a byte every --trickle-pause seconds")
    parser.add_argument("--trickle-pause", type=float, default=2.0)
    parser.add_argument("serve_args", nargs="*", help="extra `kg serve` options (after --)")
    args = parser.parse_args()
    process = None
    url = args.url
    if args.graph:
        process, url = start_server(args.python, args.graph, args.serve_args)
    stop, cut = threading.Event(), Counter()
    try:
        time.sleep(0.5)
        parts = urllib.parse.urlsplit(url)
        for _ in range(args.trickle):
            threading.Thread(target=trickle, args=(parts.hostname, parts.port, parts.path or "/sparql", args.trickle_pause, stop, cut), daemon=True).start()
        if args.trickle:
            time.sleep(1.0)
            print(f"with {args.trickle} clients trickling one byte every {args.trickle_pause:g} s")
        run(url, 2, args.warmup, args.timeout)
        print(f"{'clients':>7}  {'requests':>8}  {'req/s':>7}  {'p50 ms':>7}  {'p95 ms':>7}  {'p99 ms':>7}  {'errors':>6}  kinds")
        for clients in (int(c) for c in args.clients.split(",")):
            r = run(url, clients, args.requests, args.timeout)
            print(f"{r['clients']:>7}  {r['requests']:>8}  {r['rps']:>7.0f}  {r['p50'] * 1000:>7.1f}  {r['p95'] * 1000:>7.1f}  {r['p99'] * 1000:>7.1f}  {r['errors']:>6}  {r['kinds']}", flush=True)
    finally:
        stop.set()
        if args.trickle:
            print(f"tricklers cut off by the server: {cut['trickler cut off']}")
        if process is not None:
            process.terminate()
            process.wait(timeout=10)


if __name__ == "__main__":
    main()
