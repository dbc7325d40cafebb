"""Time kg's RDF export and every example SPARQL query on a big graph, with both backends.

    .venv/bin/python bench/sparql.py [--graph /work/bench-data/graph-30k] [--repeat 3]

The graph is one `kg build` wrote (`bash bench/make_30k.sh` builds 34,916 corpus
papers into /work/bench-data/graph-30k). Prints, in one run:

* graph size and triple count; export times (Turtle and N-Triples, streamed by pyoxigraph);
* load time per backend (rdflib in-memory Graph; Oxigraph in memory, and the on-disk store
  `kg sparql` caches next to graph.json: first build, then re-open);
* per example query (parameters picked from the graph, worst cases where it matters):
  rows, median seconds over --repeat runs per backend, rdflib/Oxigraph ratio, and whether
  both backends returned the same rows;
* with ``--process`` (the figures a user sees): the store `kg build` writes (bulk-loaded from
  graph.ttl; built here if the folder lacks a current one), the first `kg sparql` after the
  build, and every example query as a `kg sparql … --format csv` process, wall time from
  fork to exit (median of --repeat), with the rows it printed. Needs the graph folder
  itself (not --papers). ``--only-process`` skips everything else.

Nothing is asserted: this prints figures. Goal: every example query ≤ 1 s with Oxigraph.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from kg.graph import load
from kg.rdf import store as kg_store
from kg.rdf import writers
from kg.sparql import engine as sparql


def timed(fn, *args, **kwargs):
    started = time.perf_counter()
    value = fn(*args, **kwargs)
    return value, time.perf_counter() - started


class QueryTimeout(BaseException):  # not Exception: library code must not swallow it
    pass


def with_timeout(seconds: float, fn, *args):
    """Run fn(*args), raising QueryTimeout after `seconds` (SIGALRM: rdflib is pure Python)."""

    def expire(signum, frame):
        raise QueryTimeout

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return fn(*args)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def pick_bindings(graph) -> dict[str, list[dict[str, str]]]:
    """Parameters for the example queries, chosen from the graph so each query has work to do."""
    nodes = graph.nodes
    links = [(u, v) for u, v, d in graph.edges(data=True) if d.get("kind") == "mentions"]
    per_concept = Counter(v for _, v in links)
    per_paper = Counter(u for u, _ in links)

    def top(kind: str) -> str:
        key = max((c for c in per_concept if nodes[c]["type"] == kind), key=lambda c: (per_concept[c], c))
        return nodes[key]["label"]

    busiest = max(per_paper, key=lambda p: (per_paper[p], p))  # the paper with most concepts
    concepts = {v for u, v in links if u == busiest}
    partner = Counter(u for u, v in links if v in concepts and u != busiest)
    other = max(partner, key=lambda p: (partner[p], p))
    typical = sorted(per_paper, key=lambda p: (per_paper[p], p))[len(per_paper) // 2]
    # the paper whose concepts reach the most links of other papers: the most rows for a ranking
    reach = Counter()
    for u, v in links:
        reach[u] += per_concept[v]
    widest = max(reach, key=lambda p: (reach[p], p))
    ranked = [{"paperId": nodes[p]["id"]} for p in dict.fromkeys((busiest, widest, typical))]  # each paper once
    return {
        "papers_using_dataset": [{}, {"dataset": top("DATASET")}],
        "methods_per_task": [{}, {"task": top("TASK")}],
        "hardware_per_paper": [{}, {"paperId": nodes[busiest]["id"]}],
        "shared_concepts": [{"paperA": nodes[busiest]["id"], "paperB": nodes[other]["id"]}],
        "related_shared_concepts": ranked,
        "related_weighted": ranked,
    }


def process_figures(folder: str, bindings: dict[str, list[dict[str, str]]], *, repeat: int) -> int:
    """Wall time of `kg sparql` processes over `folder`'s cached store, as a user runs them."""
    import subprocess

    say = lambda *parts: print(*parts, flush=True)  # noqa: E731
    kg = str(Path(sys.executable).with_name("kg"))
    stamp = kg_store._stamp(Path(folder) / "graph.json", kg_store.DEFAULT_BASE)
    if kg_store._open_current(Path(folder) / kg_store.STORE_DIR, stamp) is None:
        graph = load(folder)
        turtle = Path(folder) / writers.TURTLE_FILE
        _, seconds = timed(kg_store.write_store, graph, folder, turtle=turtle if turtle.is_file() else None)
        say(f"store as `kg build` writes it (bulk load of graph.ttl): {seconds:6.1f} s")
        del graph

    def run(*argv: str) -> tuple[float, str]:
        started = time.perf_counter()
        done = subprocess.run([kg, "sparql", *argv, "--graph", folder, "--backend", "oxigraph", "--format", "csv"], capture_output=True, text=True)
        seconds = time.perf_counter() - started
        if done.returncode not in (0, 23):
            raise SystemExit(f"kg sparql {' '.join(argv)} exited {done.returncode}: {done.stderr.strip()}")
        return seconds, done.stdout

    seconds, _ = run("ASK {}")
    say(f"first `kg sparql` after the build (ASK {{}}: open the store, answer): {seconds:.3f} s")
    header = f"{'query':<26} {'bindings':<44} {'rows':>6} {'process s':>10}"
    say(header)
    say("-" * len(header))
    worst = 0.0
    for name, variants in bindings.items():
        for binding in variants:
            argv = [f"@{name}"] + [arg for k, v in binding.items() for arg in ("--bind", f"{k}={v}")]
            runs = [run(*argv) for _ in range(max(1, repeat))]
            median = statistics.median(seconds for seconds, _ in runs)
            rows = runs[0][1].count("\n") - 1  # text mode reads CRLF as \n
            worst = max(worst, median)
            shown = (", ".join(f"{k}={v[:18]}" for k, v in binding.items()) or "(none)")[:44]
            say(f"{name:<26} {shown:<44} {rows:>6} {median:>10.3f}")
    say(f"slowest example query as a `kg sparql` process: {worst:.3f} s")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--graph", default="/work/bench-data/graph-30k", help="folder with graph.json from kg build")
    parser.add_argument("--repeat", type=int, default=3, help="runs per query and backend (median reported)")
    parser.add_argument("--backends", default="oxigraph,oxigraph-disk,rdflib", help="comma-separated: oxigraph (in memory), oxigraph-disk (the store `kg sparql` caches), rdflib")
    parser.add_argument("--papers", type=int, default=None, help="use only the first N papers (by id) and what they link to")
    parser.add_argument("--timeout", type=float, default=120.0, help="give up on a query after this many seconds (rdflib can take many minutes)")
    parser.add_argument("--rdflib-max-triples", type=int, default=3_000_000, help="skip rdflib above this many triples (it needs ~1.5 GB and ~80 s per million)")
    parser.add_argument("--process", action="store_true", help="also time `kg sparql` processes over the folder's cached store (first query, each example query)")
    parser.add_argument("--only-process", action="store_true", help="only the --process figures (no export, no in-process backends)")
    args = parser.parse_args(argv)
    if args.only_process:
        return process_figures(args.graph, pick_bindings(load(args.graph)), repeat=args.repeat)
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    say = lambda *parts: print(*parts, flush=True)  # noqa: E731

    graph, seconds = timed(load, args.graph)
    if args.papers is not None:
        keep = sorted(k for k, d in graph.nodes(data=True) if d.get("kind") == "paper")[: args.papers]
        keep_set = set(keep) | {v for k in keep for v in graph.successors(k)}
        keep_set |= {b for c in list(keep_set) for b in graph.successors(c) if graph.nodes[b].get("kind") == "concept"}
        graph = graph.subgraph(keep_set).copy()
    papers = sum(1 for _, d in graph.nodes(data=True) if d.get("kind") == "paper")
    concepts = graph.number_of_nodes() - papers
    say(f"graph {args.graph}: {papers:,} papers, {concepts:,} concepts, {graph.number_of_edges():,} edges (graph.json loaded in {seconds:.1f} s)")

    scratch = Path(tempfile.mkdtemp(prefix="kg-bench-sparql-"))
    try:
        count = 0
        for fmt in ("ttl", "nt"):
            count, seconds = timed(writers.write_rdf, graph, scratch / f"graph.{fmt}", format=fmt)
            size = (scratch / f"graph.{fmt}").stat().st_size
            say(f"export {fmt:>3}: {seconds:6.1f} s  ({count:,} triples, {size / 1e6:,.0f} MB, {count / seconds:,.0f} triples/s)")
        _, seconds = timed(writers.write_nt_shards, graph, scratch / "shards" / "graph.nt", shards=4)
        say(f"export nt --shards 4: {seconds:6.1f} s")
        shutil.rmtree(scratch / "shards")

        loaded: dict[str, object] = {}
        if "oxigraph" in backends:
            backend, seconds = timed(sparql.open_backend, graph, backend="oxigraph")
            say(f"load oxigraph (in memory, from the graph): {seconds:6.1f} s")
            loaded["oxigraph"] = backend
        if "oxigraph-disk" in backends:
            from kg.graph import save

            save(graph, scratch)
            _, seconds = timed(kg_store.open_store, scratch)
            say(f"load oxigraph-disk (first `kg sparql`: build the cached store): {seconds:6.1f} s")
            backend, seconds = timed(sparql.open_backend, scratch, backend="oxigraph")
            say(f"load oxigraph-disk (later `kg sparql`: re-open the cache): {seconds:6.3f} s")
            loaded["oxigraph-disk"] = backend
        if "rdflib" in backends:
            if count > args.rdflib_max_triples:
                say(f"rdflib skipped: {count:,} triples > --rdflib-max-triples {args.rdflib_max_triples:,} (use --papers N for a subset both can hold)")
            else:
                backend, seconds = timed(sparql.open_backend, graph, backend="rdflib")
                say(f"load rdflib (in-memory Graph from the graph): {seconds:6.1f} s")
                loaded["rdflib"] = backend

        examples = sparql.example_queries()
        say("")
        both = "rdflib" in loaded and "oxigraph" in loaded
        header = f"{'query':<26} {'bindings':<44} {'rows':>6}" + "".join(f" {b + ' s':>15}" for b in loaded) + ("  rdflib/ox  same" if both else "")
        say(header)
        say("-" * len(header))
        worst: dict[str, float] = {}
        for name, variants in pick_bindings(graph).items():
            for bindings in variants:
                times, results = {}, {}
                for label, backend in loaded.items():
                    runs = []
                    for _ in range(max(1, args.repeat)):
                        try:
                            result, seconds = timed(with_timeout, args.timeout, backend.query, examples[name], bindings)
                        except QueryTimeout:
                            runs, result = [float("inf")], None
                            break
                        runs.append(seconds)
                    times[label], results[label] = statistics.median(runs), result
                    worst[label] = max(worst.get(label, 0.0), times[label])
                shown = (", ".join(f"{k}={v[:18]}" for k, v in bindings.items()) or "(none)")[:44]
                rows = next((len(r.rows) for r in results.values() if r is not None), -1)
                cell = lambda t: f" {t:>15.3f}" if t != float("inf") else f" {'>' + format(args.timeout, 'g') + ' s':>15}"  # noqa: E731
                line = f"{name:<26} {shown:<44} {rows:>6}" + "".join(cell(times[b]) for b in loaded)
                if both:
                    same = "?" if None in (results["rdflib"], results["oxigraph"]) else ("yes" if results["rdflib"] == results["oxigraph"] else "NO")
                    ratio = times["rdflib"] / times["oxigraph"]
                    line += f"  {(format(ratio, '>9.1f') + '×') if ratio != float('inf') else '>' + format(args.timeout / times['oxigraph'], '.0f') + '×':>10}  {same}"
                say(line)
        say("")
        for label, seconds in worst.items():
            say(f"slowest example query on {label}: {seconds:.3f} s")
        if args.process and args.papers is None:
            say("")
            process_figures(args.graph, pick_bindings(graph), repeat=args.repeat)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
