"""Draw abstracts for kg's entity gold set, stratified by era, in batches for readers.

    python bench/gold/make_sample.py OUT_DIR [--per-era 300,600,600] [--batch 50] [--first 9]

Writes OUT_DIR/bNN.input.jsonl (NN from --first on), each batch mixing the eras. Records must have a year and an
abstract of at least 200 characters. Never drawn: reserved papers (sha1(id) hex digest starting with "f") and every
abstract already in kg's gold data (bench/gold/*.jsonl and ../shared/eval/kg_gold.jsonl). Seed and quotas are fixed,
so the draw is repeatable."""

from __future__ import annotations

import argparse
import hashlib
import json
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus"
FILES = (
    "papercopilot_ml_core.jsonl",
    "papercopilot_ml_other.jsonl",
    "papercopilot_nlp_ai.jsonl",
    "papercopilot_cv.jsonl",
    "arxiv_cs_cv_cl_2025_05_07.jsonl",
    "icml2025_arxiv_abstracts.jsonl",
)
ERAS = ("<=2002", "2003-2021", "2022-2025")
SEED = 20261205


def reserved(paper_id: str) -> bool:
    return hashlib.sha1(paper_id.encode("utf-8")).hexdigest().startswith("f")


def era_of(year: int) -> str:
    return ERAS[0] if year <= 2002 else ERAS[1] if year <= 2021 else ERAS[2]


def already_gold() -> set[str]:
    paths = [*sorted((ROOT / "bench" / "gold").glob("*.jsonl")), ROOT.parent / "shared" / "eval" / "kg_gold.jsonl"]
    ids: set[str] = set()
    for path in paths:
        if path.exists():
            ids |= {json.loads(line)["id"] for line in path.open(encoding="utf-8") if line.strip()}
    return ids


def candidates(taken: set[str]) -> dict[str, list[dict]]:
    by_era: dict[str, list[dict]] = {era: [] for era in ERAS}
    seen: set[str] = set()
    for name in FILES:
        for line in (CORPUS / name).open(encoding="utf-8"):
            record = json.loads(line)
            abstract, year = record.get("abstract") or "", record.get("year")
            if not year or len(abstract) < 200 or reserved(record["id"]) or record["id"] in taken or record["id"] in seen:
                continue
            seen.add(record["id"])  # icml2025_arxiv_abstracts repeats some arXiv records
            by_era[era_of(int(year))].append(
                {"id": record["id"], "title": record.get("title") or "", "text": abstract, "year": int(year),
                 "venue": record.get("venue") or "", "era": era_of(int(year)), "corpus": name}
            )
    return by_era


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out_dir")
    parser.add_argument("--per-era", default="300,600,600", help="abstracts to draw from each era, oldest first")
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--first", type=int, default=9, help="number of the first batch (earlier rounds used 1-8)")
    args = parser.parse_args()
    quotas = [int(n) for n in args.per_era.split(",")]
    rng = random.Random(SEED)
    pool = candidates(already_gold())
    drawn = [record for era, quota in zip(ERAS, quotas, strict=True) for record in rng.sample(pool[era], quota)]
    rng.shuffle(drawn)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for start in range(0, len(drawn), args.batch):
        path = out / f"b{args.first + start // args.batch:02d}.input.jsonl"
        with path.open("w", encoding="utf-8") as handle:
            for record in drawn[start : start + args.batch]:
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    print(f"{len(drawn)} abstracts in {-(-len(drawn) // args.batch)} batches -> {out}")


if __name__ == "__main__":
    main()
