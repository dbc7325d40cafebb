"""How much slower a SPARQL store answers after many small updates, and after compaction.

    .venv/bin/python bench/store_churn.py [--graph /work/bench-data/graph-22k] [--updates 16] [--papers 40]

Copies the store `kg build` left in the graph folder, then applies --updates updates of the
kind a rebuild makes (every triple of --papers papers and their concept links removed, flushed,
added back, flushed: RocksDB files of their own each time), and times three whole-graph example
queries (median of 5, in this process) on the store as built, after the updates, and after
`optimize()`. Prints the figures; asserts nothing. Why kg compacts an updated store
(`kg.rdf.store.COMPACT_AFTER_UPDATES`).
"""

import argparse
import os
import shutil
import statistics
import time

import pyoxigraph as ox

from kg.rdf.terms import PREFIXES
from kg.sparql.engine import example_queries

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--graph", default="/work/bench-data/graph-22k")
parser.add_argument("--updates", type=int, default=16)
parser.add_argument("--papers", type=int, default=40)
args = parser.parse_args()
src = os.path.join(args.graph, "graph.oxigraph")
work = os.path.join(os.path.dirname(os.path.abspath(args.graph)), "store-churn-copy")
shutil.rmtree(work, ignore_errors=True)
ox.Store.read_only(src).backup(work)
store = ox.Store(work)
papers = [q["p"] for q in store.query("SELECT ?p WHERE { ?p a fabio:ResearchPaper }", prefixes=PREFIXES)]
for round_ in range(args.updates):
    chosen = papers[round_ * args.papers : (round_ + 1) * args.papers]
    quads = []
    for p in chosen:
        quads += list(store.quads_for_pattern(p, None, None))
        for q in list(store.quads_for_pattern(p, ox.NamedNode(PREFIXES["kg"] + "hasConceptLink"), None)):
            quads += list(store.quads_for_pattern(q.object, None, None))
    for q in quads:
        store.remove(q)
    store.flush()
    store.extend(quads)
    store.flush()
del store
files = [f for f in os.listdir(work) if f.endswith(".sst")]
print(f"RocksDB files after {args.updates} updates of {args.papers} papers each:", len(files))
queries = {k: example_queries()[k] for k in ("methods_per_task", "papers_using_dataset", "hardware_per_paper")}
def timed(path):
    s = ox.Store.read_only(path)
    out = {}
    for name, q in queries.items():
        ts = []
        for _ in range(5):
            started = time.perf_counter()
            list(s.query(q, prefixes=PREFIXES))
            ts.append(time.perf_counter() - started)
        out[name] = statistics.median(ts)
    return out
original = timed(src)
piled = timed(work)
store = ox.Store(work)
store.optimize()
del store
print("RocksDB files after optimize():", len([f for f in os.listdir(work) if f.endswith(".sst")]))
compacted = timed(work)
for name in queries:
    print(f"{name:<22} as built {original[name]:.3f} s  piled {piled[name]:.3f} s  compacted {compacted[name]:.3f} s  ratio {piled[name]/compacted[name]:.2f}")
shutil.rmtree(work, ignore_errors=True)
