"""Draw the abstracts of kg's result-claim gold set: abstracts that state numbers, across the corpora.

    python bench/gold/claims/make_sample.py OUT.jsonl

An abstract "states numbers" when it holds a decimal number or a number with %, "points" or a score unit:
the test is deliberately wider than what kg extracts, so that the sample also holds abstracts whose numbers
are not result claims. Reserved papers (sha1(id) starting with "f") and every abstract of kg's entity gold
data are never drawn. Seed and quotas are fixed, so the draw is repeatable."""

import hashlib
import json
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
CORPUS = ROOT.parent / "shared" / "corpus"
QUOTAS = {  # abstracts per corpus file: 200 in all, weighted towards the eras that report numbers
    "papercopilot_ml_core.jsonl": 30,
    "papercopilot_ml_other.jsonl": 25,
    "papercopilot_nlp_ai.jsonl": 35,
    "papercopilot_cv.jsonl": 40,
    "arxiv_cs_cv_cl_2025_05_07.jsonl": 55,
    "icml2025_arxiv_abstracts.jsonl": 15,
}
SEED = 20261202
STATES_NUMBERS = re.compile(
    r"\b\d+\.\d+\b|\b\d+(?:\.\d+)?\s?(?:%|percent\b|points?\b|pp\b|dB\b|BLEU\b|mAP\b|F1\b|AP\b|FID\b)")


def reserved(paper_id: str) -> bool:
    return hashlib.sha1(paper_id.encode()).hexdigest().startswith("f")


def already_gold() -> set[str]:
    ids = set()
    for path in [ROOT / "bench/gold/train.jsonl", ROOT / "bench/gold/dev.jsonl",
                 ROOT.parent / "shared/eval/kg_gold.jsonl"]:
        if path.exists():
            ids |= {json.loads(line)["id"] for line in path.open(encoding="utf-8")}
    return ids


def main(out: str) -> None:
    rng = random.Random(SEED)
    taken = already_gold()
    drawn = []
    for name, quota in QUOTAS.items():
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
    with open(out, "w", encoding="utf-8") as handle:
        for record in drawn:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    print(f"{len(drawn)} abstracts -> {out}")


if __name__ == "__main__":
    main(sys.argv[1])
