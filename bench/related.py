"""Process wall time of `kg related` on a built graph (goals on ~35,000 papers: ≤ 0.3 s for a
paper; for `--text`, ≤ 1 s without the embedding model and ≤ 3 s with it).

Runs the real command in fresh processes — queries by id, by exact title, by a title fragment,
and `--text` with the title and abstract of other papers — and, in the same run, a bare
`python -c pass` as the floor any CLI pays. When the graph was built with `--embed`, every
query runs twice: with the embeddings (the default: `--text` then loads the model and embeds
the text) and with `--no-embeddings`.

    .venv/bin/python bench/related.py --graph /work/bench-data/graph-30k
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

from kg.errors import KgError
from kg.related_work.rank import lookup_of, open_index


def wall(command: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.strip()}")
    return seconds


def summary(name: str, times: list[float]) -> str:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"{name:<52} n={len(times):<4} median {statistics.median(times):.3f} s   p95 {p95:.3f} s   max {ordered[-1]:.3f} s"


def pick_queries(graph: str, count: int, seed: int) -> dict[str, list[str]]:
    """Ids, exact titles and unique two/three-word fragments of randomly chosen papers that have concepts."""
    index, source = open_index(graph)
    if source != "index":
        raise SystemExit(f"{graph}/related.idx is missing or stale: `kg related` would load graph.json")
    rng = random.Random(seed)
    with_concepts = [n for n in range(len(index.paper_ids)) if index.paper_concepts.count(n)]
    chosen = rng.sample(with_concepts, count * 3)
    queries: dict[str, list[str]] = {"id": [], "exact title": [], "title fragment": [], "--text": []}
    for number in chosen[:count]:
        queries["id"].append(index.paper_ids[number])
    for number in chosen[count : 2 * count]:
        queries["exact title"].append(index.titles[number])
    for number in chosen[2 * count :]:
        words = [w for w in index.titles[number].split() if len(w) > 3 and w.isalpha()]
        if len(words) < 3:
            continue
        fragment = " ".join(rng.sample(words, 3))
        try:
            if lookup_of(index).find(fragment) == number:
                queries["title fragment"].append(fragment)
        except KgError:
            continue  # ambiguous: not a fair latency probe for the success path
    from kg.graph import load

    nodes = load(Path(graph, "graph.json")).nodes
    for number in rng.sample(with_concepts, count):
        paper = nodes[f"paper:{index.paper_ids[number]}"]
        queries["--text"].append(f"{paper.get('title') or ''}. {paper.get('abstract') or ''}")
    return queries


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--graph", default="/work/bench-data/graph-30k")
    parser.add_argument("--queries", type=int, default=10, help="queries of each kind")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each query")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    kg_exe = str(Path(sys.executable).with_name("kg"))
    index, _ = open_index(args.graph)
    print(f"graph {args.graph}: {len(index.paper_ids):,} papers, {len(index.concept_ids):,} concepts; "
          f"related.idx {Path(args.graph, 'related.idx').stat().st_size / 1e6:.1f} MB, "
          f"graph.json {Path(args.graph, 'graph.json').stat().st_size / 1e6:.1f} MB")
    queries = pick_queries(args.graph, args.queries, args.seed)

    baseline = [wall([sys.executable, "-c", "pass"]) for _ in range(args.queries * args.repeat)]
    from kg.related_work import embed

    modes = {"": []}
    if embed.load(args.graph, index.paper_ids) is not None:
        modes = {" (embeddings)": [], " (--no-embeddings)": ["--no-embeddings"]}
    results: dict[str, list[float]] = {}
    for mode, extra in modes.items():
        for kind, texts in queries.items():
            command = [kg_exe, "related", "--graph", args.graph, *extra]
            flag = ["--text"] if kind == "--text" else []
            results[f"by {kind}{mode}"] = [wall([*command, *flag, text]) for text in texts for _ in range(args.repeat)]
    print(summary("python -c pass (floor)", baseline))
    for kind, times in results.items():
        print(summary(f"kg related {kind}", times))
    for mode in modes:
        print(summary(f"kg related PAPER, all{mode}", [t for kind, times in results.items() if kind.endswith(mode) and "--text" not in kind for t in times]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
