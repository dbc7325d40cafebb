"""Train the transformer recognizer on nested subsets of the gold training data (a learning curve).

    python bench/ner_curve.py -o DIR [--sizes 250 500 1000 all] [--gold FILE ...] [--dev FILE] [--epochs N] [--complement N]

The training pool is the gold files in the order given (default: bench/gold/train.jsonl, then
../shared/eval/kg_gold.jsonl where it exists). A subset of n documents is the n whose ids rank first by
sha1("kg-ner-curve:" + id), so the subsets are nested and fixed; each keeps the pool's order, so "all" is
the very model `kg train GOLD... --dev DEV --arch transformer` makes with the same options. Every size is
trained with the same options (`kg.training.transformer.TransformerOptions`: epochs, learning rate,
warm-up, batch, seed) and selected on --dev (never trained on). Writes DIR/n<size>/ (a model folder, its
fp32 torch weights in DIR/n<size>.pt) and prints each size's dev figures, the recognizer alone.

``--complement N`` trains instead on the pool less the subset of N: with the subset's own model, two
models that never saw each other's documents (the out-of-fold recognizers bench/fit_scorer.py needs).
Each run also writes the gold it trained on to DIR/n<size>.train.jsonl (outside the repository: it holds
kg_gold.jsonl's abstracts).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED_GOLD = ROOT.parent / "shared" / "eval" / "kg_gold.jsonl"


def rank(doc_id: str) -> str:
    return hashlib.sha1(f"kg-ner-curve:{doc_id}".encode()).hexdigest()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--out", type=Path, required=True)
    parser.add_argument("--gold", nargs="*", default=None)
    parser.add_argument("--dev", default=str(ROOT / "bench" / "gold" / "dev.jsonl"))
    parser.add_argument("--sizes", nargs="*", default=["250", "500", "1000", "all"])
    parser.add_argument("--complement", type=int, default=None)
    parser.add_argument("--epochs", type=int, default=None)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)

    from kg.training.train import gather
    from kg.training.transformer import TransformerOptions, train_transformer

    gold = args.gold or [str(ROOT / "bench" / "gold" / "train.jsonl"), *([str(SHARED_GOLD)] if SHARED_GOLD.exists() else [])]
    data = gather(gold, dev=[args.dev])
    ranked = sorted((d.id for d in data.train), key=rank)
    options = TransformerOptions(threads=args.threads)
    if args.epochs:
        options = replace(options, epochs=args.epochs)
    args.out.mkdir(parents=True, exist_ok=True)
    runs = [(f"rest{args.complement}", set(ranked) - set(ranked[: args.complement]))] if args.complement else [
        (f"n{size}", set(ranked if size == "all" else ranked[: int(size)])) for size in args.sizes
    ]
    for name, chosen in runs:
        subset = replace(data, train=tuple(d for d in data.train if d.id in chosen))
        with open(args.out / f"{name}.train.jsonl", "w", encoding="utf-8") as handle:
            for d in subset.train:
                handle.write(json.dumps({"id": d.id, "text": d.text, "entities": [{"start": s, "end": e, "label": lab} for s, e, lab in sorted(d.spans)]}) + "\n")
        began = time.time()

        def progress(step: int, total: int, score: float | None, name: str = name, began: float = began) -> None:
            if score is not None or step % 100 == 0:
                print(f"{name}: step {step}/{total} {time.time() - began:.0f} s" + (f" dev typed F1 {score}" if score is not None else ""), flush=True)

        result = train_transformer(subset, args.out / name, options=options, progress=progress, keep_torch=args.out / f"{name}.pt")
        meta = json.loads((args.out / name / "meta.json").read_text(encoding="utf-8"))["kg_training"]
        print(f"{name}: {len(subset.train)} documents, best epoch {meta['best_epoch']}, {result.seconds:.0f} s; dev typed F1 int8 {meta['dev']['typed_f1']} "
              f"fp32 {meta['dev_torch_fp32']['typed_f1']}; strict micro F1 int8 {meta['dev']['strict']['micro']['f1']} fp32 {meta['dev_torch_fp32']['strict']['micro']['f1']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
