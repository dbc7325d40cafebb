"""kg's extraction scored on the gold data no model was trained on: SciERC dev and the
held-out 20 % of SciREX train (the same hashed split `kg train --hold-out` uses).

    .venv/bin/python bench/eval_heldout.py [--model MODEL/|none]

Prints `kg eval`'s table for each set (strict and partial P/R/F1 per type, micro over
METHOD, TASK, METRIC and DATASET; TERM apart). ../shared/eval must exist.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

EVAL = Path(__file__).resolve().parents[2] / "shared" / "eval"
HELD_OUT_PERCENT = 20  # as the shipped recognizer was trained: --hold-out scirex_train_abstracts.jsonl=20


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="recognizer folder, or 'none' for rules alone (default: the shipped one)")
    args = parser.parse_args()
    if not EVAL.is_dir():
        print(f"gold data not found at {EVAL}", file=sys.stderr)
        return 1
    from kg.cli.eval import render_report
    from kg.model import DEFAULT_RECOGNIZER
    from kg.training.evaluate import evaluate_file
    from kg.training.train import held_out

    recognizer = DEFAULT_RECOGNIZER if args.model is None else (None if args.model == "none" else args.model)
    with tempfile.TemporaryDirectory() as work:
        heldout = Path(work) / "scirex_heldout.jsonl"
        with (EVAL / "scirex_train_abstracts.jsonl").open(encoding="utf-8") as source, heldout.open("w", encoding="utf-8") as out:
            for line in source:
                if line.strip() and held_out(str(json.loads(line).get("id")), HELD_OUT_PERCENT):
                    out.write(line)
        for path in (EVAL / "scierc_dev.jsonl", heldout):
            print(render_report(evaluate_file(path, recognizer=recognizer)))
            print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
