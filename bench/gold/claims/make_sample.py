"""Draw the abstracts of kg's result-claim gold set: abstracts that state numbers, across the corpora.

    python bench/gold/claims/make_sample.py OUT.jsonl                 # round 1: 200 abstracts (batches 1-5)
    python bench/gold/claims/make_sample.py OUT_DIR --round 2 --batch 50   # round 2: 300 more, in batches 6-11

An abstract "states numbers" when it holds a decimal number or a number with %, "points" or a score unit:
the test is deliberately wider than what kg extracts, so that the sample also holds abstracts whose numbers
are not result claims. Reserved papers (sha1(id) starting with "f") and every abstract of kg's entity gold
data are never drawn. Seed and quotas are fixed, so the draw is repeatable."""

import argparse
import hashlib
import json
import random
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
CORPUS = ROOT.parent / "shared" / "corpus"
QUOTAS = {  # abstracts per corpus file, weighted towards the eras that report numbers: round 1 (200), round 2 (300)
    1: {
        "papercopilot_ml_core.jsonl": 30,
        "papercopilot_ml_other.jsonl": 25,
        "papercopilot_nlp_ai.jsonl": 35,
        "papercopilot_cv.jsonl": 40,
        "arxiv_cs_cv_cl_2025_05_07.jsonl": 55,
        "icml2025_arxiv_abstracts.jsonl": 15,
    },
    2: {
        "papercopilot_ml_core.jsonl": 45,
        "papercopilot_ml_other.jsonl": 37,
        "papercopilot_nlp_ai.jsonl": 53,
        "papercopilot_cv.jsonl": 60,
        "arxiv_cs_cv_cl_2025_05_07.jsonl": 83,
        "icml2025_arxiv_abstracts.jsonl": 22,
    },
}
SEEDS = {1: 20261202, 2: 20261206}
FIRST_BATCH = {1: 1, 2: 6}
STATES_NUMBERS = re.compile(
    r"\b\d+\.\d+\b|\b\d+(?:\.\d+)?\s?(?:%|percent\b|points?\b|pp\b|dB\b|BLEU\b|mAP\b|F1\b|AP\b|FID\b)")


def reserved(paper_id: str) -> bool:
    return hashlib.sha1(paper_id.encode()).hexdigest().startswith("f")


def already_gold() -> set[str]:
    ids = set()
    for path in [ROOT / "bench/gold/train.jsonl", ROOT / "bench/gold/dev.jsonl",
                 ROOT / "bench/gold/claims/train.jsonl", ROOT / "bench/gold/claims/dev.jsonl",
                 ROOT.parent / "shared/eval/kg_gold.jsonl"]:
        if path.exists():
            ids |= {json.loads(line)["id"] for line in path.open(encoding="utf-8")}
    return ids


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", help="round 1: the output file; round 2: a folder for batchN.jsonl")
    parser.add_argument("--round", type=int, choices=sorted(QUOTAS), default=1)
    parser.add_argument("--batch", type=int, default=50, help="abstracts per batch file (round 2)")
    args = parser.parse_args()
    rng = random.Random(SEEDS[args.round])
    taken = already_gold()
    drawn = []
    for name, quota in QUOTAS[args.round].items():
        candidates = []
        for line in (CORPUS / name).open(encoding="utf-8"):
            record = json.loads(line)
            abstract = record.get("abstract") or ""
            if (reserved(record["id"]) or record["id"] in taken or len(abstract) < 200
                    or not STATES_NUMBERS.search(abstract)):
                continue
            candidates.append(record)
        for record in rng.sample(candidates, quota):
            taken.add(record["id"])
            drawn.append({"id": record["id"], "title": record["title"], "text": record["abstract"],
                          "year": record.get("year"), "venue": record.get("venue"), "corpus": name})
    rng.shuffle(drawn)
    if args.round == 1:
        batches = [(Path(args.out), drawn)]
    else:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        batches = [(Path(args.out) / f"batch{FIRST_BATCH[args.round] + n // args.batch}.jsonl", drawn[n : n + args.batch])
                   for n in range(0, len(drawn), args.batch)]
    for path, records in batches:
        with path.open("w", encoding="utf-8") as handle:
            for record in records:
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    print(f"{len(drawn)} abstracts -> {', '.join(str(path) for path, _ in batches)}")


if __name__ == "__main__":
    main()
