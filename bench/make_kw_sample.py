"""A sample of papers with author keywords, for bench/related_eval.py and bench/embed_backends.py.

Records of ml_core, ml_other and nlp_ai (../shared/corpus) that carry keywords (IJCAI, ICLR,
CoRL, COLM, WWW), reserved papers (sha1 of the id starting with "f") left out, shuffled with a
fixed seed; the first N are written as JSON Lines.

    .venv/bin/python -P bench/make_kw_sample.py --papers 4000 -o /work/bench-data/kw-4k.jsonl
    .venv/bin/kg build /work/bench-data/kw-4k.jsonl -o /work/bench-data/graph-4k --cache /work/bench-data/cache-4k --embedder torch
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
FILES = ("papercopilot_ml_core.jsonl", "papercopilot_ml_other.jsonl", "papercopilot_nlp_ai.jsonl")


def reserved(paper_id: str) -> bool:
    return hashlib.sha1(paper_id.encode("utf-8")).hexdigest().startswith("f")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("-o", "--out", required=True)
    args = parser.parse_args()
    records = []
    for name in FILES:
        with open(CORPUS / name, encoding="utf-8") as handle:
            records.extend(r for r in map(json.loads, handle) if r.get("keywords") and not reserved(r["id"]))
    random.Random(args.seed).shuffle(records)
    chosen = records[: args.papers]
    Path(args.out).write_text("".join(json.dumps(r) + "\n" for r in chosen), encoding="utf-8")
    print(f"{len(chosen):,} of {len(records):,} keyword papers written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
