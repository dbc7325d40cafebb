"""Whole-build throughput and memory at corpus scale, against bare spaCy in the same run,
and the rebuild after adding 10 papers.

    .venv/bin/python -P bench/build.py [--sizes 2000,10000,all] [--workers 2] [--incremental] [--embed torch,onnx]

For each size: `kg build` (every stage, a new extraction cache, no earlier build) as a
subprocess with `--timings`, whose stage times are printed under its row; then, in the same
run, bare `nlp.pipe` of the same spaCy pipeline kg extracts with (`kg.extract.pipeline.load_pipeline`:
the statistical model without ner, kg's components and its trained recognizer) over the same
abstracts, split over the same number of processes (each loads the pipeline and pipes its
share; spaCy's own n_process cannot carry kg's spans back). Both are whole-process wall times,
start-up and model loads included; peak RSS sums the process tree (workers included), sampled
from /proc every 0.1 s. `--incremental`: after each size's build, add 10 papers and rebuild
into the same folder with the same cache (for `all`, the build covers all but 10 papers and
the rebuild adds them), printed as a share of the full build; then rebuild again with 10
papers removed and 10 edited (a sentence of the abstract dropped), and build that corpus from
scratch (same cache, new folder) to check every output file is byte for byte the same
and both SPARQL stores hold the same quads (SOURCE_DATE_EPOCH pins the build time). `--embed onnx,torch` then
rebuilds the same papers with ``--embedder NAME`` for each embedder named, extraction from the
cache, and prints each one's "Embedding papers" stage: seconds, papers/s and the ratio to the
first named.
Papers: all records with abstracts in ../shared/corpus (icml2025_accepted_titles has
none), shuffled with a fixed seed; size N takes the first N.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
KG = [sys.executable, "-m", "kg"]
EXTRA = 10  # papers added for the incremental rebuild (and then removed, and edited)
OUTPUTS = ("papers.jsonl", "entities.jsonl", "concepts.jsonl", "graph.json", "graph.ttl", "graph.html", "related.idx", "leaderboard.idx")

# Bare spaCy: kg's pipeline (loaded as kg loads it), each process piping every N-th abstract.
BARE = """
import json, multiprocessing, sys
texts = [json.loads(line)["abstract"] for line in open(sys.argv[1], encoding="utf-8")]
processes = int(sys.argv[2])

def pipe(share):
    from kg.text.markup import mask_markup
    from kg.extract.pipeline import load_pipeline
    nlp = load_pipeline()
    for _ in nlp.pipe((mask_markup(t) for t in texts[share::processes]), batch_size=64):
        pass

if processes == 1:
    pipe(0)
else:
    workers = [multiprocessing.get_context("fork").Process(target=pipe, args=(i,)) for i in range(processes)]
    for w in workers: w.start()
    for w in workers:
        w.join()
        assert w.exitcode == 0, w.exitcode
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


def run(command: list[str]) -> tuple[float, int, str]:
    """(wall seconds, peak RSS bytes of the process tree, stdout); fails loudly if the command fails."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = 0

    def sample() -> None:
        nonlocal peak
        while process.poll() is None:
            peak = max(peak, _tree_rss(process.pid))
            time.sleep(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stdout, stderr = process.communicate()
    wall = time.perf_counter() - started
    sampler.join()
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({process.returncode}):\n{stderr}")
    return wall, peak, stdout


def stage_lines(stdout: str) -> list[str]:
    """The `kg build --timings` table, indented under the row it belongs to."""
    lines = stdout.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("Stage times")), len(lines))
    return [f"{'':>10}{line}" for line in lines[start + 1 :]]


def embed_seconds(stdout: str) -> float:
    """The "Embedding papers" stage's seconds in `kg build --timings` output."""
    line = next(line for line in stdout.splitlines() if line.strip().startswith("Embedding papers"))
    return float(line.split()[-1])


def edited(record: dict) -> dict:
    """The record with its abstract's last sentence dropped (or, for one sentence, a word)."""
    text = record["abstract"]
    cut = text.rstrip(". ").rfind(". ")
    shorter = text[: cut + 1] if cut > 0 else text.rsplit(" ", 1)[0]
    return {**record, "abstract": shorter}


def differing_outputs(incremental: Path, scratch: Path) -> list[str]:
    """The output files that differ between two build folders (each name links to its current
    generation), and "graph.oxigraph" if their SPARQL stores hold different quads."""
    differ = [name for name in OUTPUTS if (incremental / name).read_bytes() != (scratch / name).read_bytes()]
    return differ + (["graph.oxigraph"] if store_digest(incremental) != store_digest(scratch) else [])


class _Hasher:
    def __init__(self) -> None:
        self.sha = hashlib.sha256()

    def write(self, data: bytes) -> int:
        self.sha.update(data)
        return len(data)

    def flush(self) -> None:
        pass


def store_digest(folder: Path) -> str:
    """SHA-256 of the store's N-Quads dump, streamed: Oxigraph dumps in the order of its
    index, whose keys are made from the terms alone, so equal contents give equal dumps."""
    import pyoxigraph as ox

    hasher = _Hasher()
    ox.Store.read_only(str(folder / "graph.oxigraph")).dump(hasher, format=ox.RdfFormat.N_QUADS)
    return hasher.sha.hexdigest()


def write_jsonl(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2000,10000,all")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--incremental", action="store_true", help=f"also rebuild after adding {EXTRA} papers")
    parser.add_argument("--embed", default="", metavar="NAMES", help="also time the embedding stage of these embedders, comma-separated (e.g. torch,onnx)")
    parser.add_argument("--no-bare", action="store_true", help="skip the bare nlp.pipe baseline (when time is short)")
    args = parser.parse_args()
    os.environ.setdefault("SOURCE_DATE_EPOCH", "1764547200")  # every build stamped alike: outputs compare byte for byte
    if not CORPUS.is_dir():
        print(f"corpus not found at {CORPUS}", file=sys.stderr)
        return 1
    records = corpus_records()
    print(f"corpus: {len(records):,} records with abstracts; workers: {args.workers}; cpus: {os.cpu_count()}", flush=True)
    print(f"{'papers':>8} {'words':>11} | {'kg build':>9} {'papers/s':>9} {'peak RSS':>9} | {'bare pipe':>9} {'peak RSS':>9} | ratio", flush=True)
    jobs = ["-j", str(args.workers)]
    with tempfile.TemporaryDirectory(prefix="kg-bench-build-") as tmp:
        work = Path(tmp)
        for size in args.sizes.split(","):
            chosen = records if size == "all" else records[: int(size)]
            base, extra = (chosen[:-EXTRA], chosen[-EXTRA:]) if size == "all" else (chosen, records[len(chosen) : len(chosen) + EXTRA])
            built = base if args.incremental else chosen
            corpus, out, cache = work / f"corpus-{size}.jsonl", work / f"out-{size}", work / f"cache-{size}"
            write_jsonl(corpus, built)
            words = sum(len(r["abstract"].split()) for r in built)
            build_wall, build_rss, stdout = run([*KG, "build", str(corpus), "-o", str(out), "--cache", str(cache), "-q", "--timings", *jobs])
            line = f"{len(built):>8,} {words:>11,} | {build_wall:>8.1f}s {len(built) / build_wall:>9.1f} {build_rss / 2**30:>7.2f}GB"
            if args.no_bare:
                line += " | (bare pipe not run)"
            else:
                bare_wall, bare_rss, _ = run([sys.executable, "-c", BARE, str(corpus), str(args.workers)])
                line += f" | {bare_wall:>8.1f}s {bare_rss / 2**30:>7.2f}GB | {build_wall / bare_wall:.2f}×"
            print(line, flush=True)
            print("\n".join(stage_lines(stdout)), flush=True)
            first = None
            for name in filter(None, args.embed.split(",")):
                command = [*KG, "build", str(corpus), "-o", str(work / f"out-{name}-{size}"), "--cache", str(cache), "-q", "--timings", *jobs]
                embed_wall, embed_rss, stdout = run([*command, "--embedder", name])
                stage = embed_seconds(stdout)
                first = first or stage
                print(
                    f"{'':>8} {'--embedder ' + name:>17} | build {embed_wall:>7.1f}s, embedding {stage:>7.1f}s = {len(built) / stage:>6.1f} papers/s"
                    f" ({first / stage:.2f}× the first), peak RSS {embed_rss / 2**30:.2f}GB",
                    flush=True,
                )
            if args.incremental:
                changed = base[EXTRA:-EXTRA] + [edited(r) for r in base[-EXTRA:]] + extra
                for what, records in ((f"+{EXTRA} papers", base + extra), (f"-{EXTRA} papers, {EXTRA} edited", changed)):
                    write_jsonl(corpus, records)
                    again_wall, again_rss, stdout = run([*KG, "build", str(corpus), "-o", str(out), "--cache", str(cache), "-q", "--timings", *jobs])
                    print(
                        f"{'':>8} {what}: rebuild {again_wall:.1f} s = {100 * again_wall / build_wall:.2f} % of the full build"
                        f" (peak RSS {again_rss / 2**30:.2f} GB)",
                        flush=True,
                    )
                    print("\n".join(stage_lines(stdout)), flush=True)
                scratch = work / f"scratch-{size}"
                scratch_wall, _, _ = run([*KG, "build", str(corpus), "-o", str(scratch), "--cache", str(cache), "-q", *jobs])
                differ = differing_outputs(out, scratch)
                verdict = "byte for byte the same" if not differ else f"DIFFERENT: {', '.join(differ)}"
                print(f"{'':>8} the same corpus built from scratch ({scratch_wall:.1f} s, cached extraction): {verdict}", flush=True)
                shutil.rmtree(scratch, ignore_errors=True)
            shutil.rmtree(out, ignore_errors=True)
            shutil.rmtree(cache, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
