"""Today's kg against an earlier commit of it, in one run: quality on a gold file and extraction words/s.

    python bench/compare.py REV [--gold bench/gold/dev.jsonl] [--speed FILE.jsonl] [--rounds 2]

REV (a commit, e.g. the one before this round's changes) is checked out into a temporary git worktree and
imported from there; both versions run the same script in fresh interpreters, alternating, REV first.
Quality: typeless and typed precision, typed partial recall and strict F1 of what each version writes to
entities.jsonl for the gold abstracts (bench/quality.py's measures). Speed: words/s of extraction alone in one
process, on --speed (default: the first 400 abstracts of ../shared/corpus/arxiv_cs_cv_cl_2025_05_07.jsonl).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"

# Runs inside either version: the new layout (kg.extract.papers) or the one before it (kg.extract, kg.concepts).
PROBE = r"""
import importlib.util, json, sys, time
from dataclasses import asdict
from pathlib import Path
spec = importlib.util.spec_from_file_location("quality", sys.argv[1]); quality = importlib.util.module_from_spec(spec)
sys.modules["quality"] = quality; spec.loader.exec_module(quality)
from kg.model import Paper
try:
    from kg.extract.papers import extract_papers
    from kg.extract.pipeline import load_pipeline
    from kg.concepts.find import resolve_corpus
except ImportError:
    from kg.extract import extract_papers
    from kg.pipeline import load_pipeline
    from kg.concepts import resolve_corpus
docs = quality.load(Path(sys.argv[2]))
papers = [Paper(id=d["id"], title=d.get("title") or "", abstract=d["text"], year=d.get("year")) for d in docs]
nlp = load_pipeline()
list(extract_papers(papers[:5], nlp=nlp))  # warm up
began = time.perf_counter()
extractions = list(extract_papers(papers, nlp=nlp))
seconds = time.perf_counter() - began
result = {"words_per_second": round(sum(len(d["text"].split()) for d in docs) / seconds)}
if any(d["entities"] for d in docs):
    resolution = resolve_corpus(papers, extractions)
    predicted = {p.id: [asdict(m) for m in found.mentions] for p, found in zip(papers, resolution.entities)}
    result.update({k: v for k, v in quality.score(docs, predicted)["all"].items()})
print(json.dumps(result))
"""


def speed_file(folder: Path) -> Path:
    path = folder / "speed.jsonl"
    with open(CORPUS / "arxiv_cs_cv_cl_2025_05_07.jsonl", encoding="utf-8") as source, open(path, "w", encoding="utf-8") as out:
        for n, line in enumerate(source):
            if n == 400:
                break
            record = json.loads(line)
            out.write(json.dumps({"id": record["id"], "title": record["title"], "text": record["abstract"], "year": record.get("year"), "entities": []}) + "\n")
    return path


def run(src: Path, gold: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONWARNINGS": "ignore"}
    done = subprocess.run([sys.executable, "-c", PROBE, str(ROOT / "bench" / "quality.py"), str(gold)], env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rev")
    parser.add_argument("--gold", type=Path, default=ROOT / "bench" / "gold" / "dev.jsonl")
    parser.add_argument("--speed", type=Path, default=None)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        worktree = Path(scratch) / "before"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(worktree), args.rev], cwd=ROOT, check=True)
        try:
            versions = {args.rev: worktree / "src", "today": ROOT / "src"}
            quality = {name: run(src, args.gold) for name, src in versions.items()}
            speed_gold = args.speed or speed_file(Path(scratch))
            speeds: dict[str, list[int]] = {name: [] for name in versions}
            for _ in range(args.rounds):
                for name, src in versions.items():
                    speeds[name].append(run(src, speed_gold)["words_per_second"])
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], cwd=ROOT, check=False)
    print(f"{'version':<12} {'typeless P':>10} {'typed P':>8} {'typed R':>8} {'strict F1':>9}   words/s per process")
    for name, q in quality.items():
        print(f"{name:<12} {q['typeless_precision']:>10} {q['typed_precision']:>8} {q['typed_partial_recall']:>8} {q['strict_f1']:>9}   {', '.join(f'{w:,}' for w in speeds[name])}")
    ratio = sum(speeds["today"]) / sum(speeds[args.rev])
    print(f"speed: today / {args.rev} = {ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
