"""Join the checked batches into kg's entity gold set: train.jsonl, dev.jsonl, second_reading.jsonl, agreement.json.

    python bench/gold/assemble.py BATCH_DIR

BATCH_DIR holds, per batch, the drawn abstracts (bNN.input.jsonl, make_sample.py) and their checked annotation
(bNN.rev.jsonl: the first reading as the second reader left it), the earlier gold re-read to the current guidelines
(rNN.input.jsonl / rNN.rev.jsonl, which keep their split) and the independent readings made for agreement only
(aNN.input.jsonl / aNN.ann.jsonl, abstracts of the bNN batches read again by readers who saw nothing of the first).
Every annotation goes through resolve.py (exact offsets); any error stops the run.

New abstracts are split by paper, stratified by era (seed 35): DEV_PER_ERA of each era go to dev, the rest to train.
The independent readings are scored against the gold as before (agreement.json: F1 of the second reading against the
gold, typeless and typed, exact and overlapping spans)."""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from resolve import resolve_file  # noqa: E402

HERE = Path(__file__).parent
SEED = 35
DEV_PER_ERA = {"<=2002": 30, "2003-2021": 60, "2022-2025": 60}
FIELDS = ("id", "title", "text", "year", "venue", "era", "split", "batch", "entities")


def resolved(folder: Path, stem: str, annotation: str) -> list[dict]:
    gold, errors = resolve_file(str(folder / f"{stem}.input.jsonl"), str(folder / f"{stem}.{annotation}.jsonl"))
    if errors:
        raise SystemExit(f"{stem}: " + "; ".join(errors[:5]))
    return gold


def split_new(records: list[dict]) -> None:
    rng = random.Random(SEED)
    for era, quota in DEV_PER_ERA.items():
        group = sorted((r for r in records if r["era"] == era), key=lambda r: r["id"])
        rng.shuffle(group)
        for n, record in enumerate(group):
            record["split"] = "dev" if n < quota else "train"


def f1(gold: list[dict], other: list[dict], *, typed: bool, overlap: bool) -> float:
    """Micro F1 of `other`'s spans against `gold`'s, per abstract: exact offsets, or any overlap (each gold span
    matched at most once)."""
    found = correct_other = correct_gold = 0
    total_gold = 0
    for g, o in zip(gold, other, strict=True):
        gs, os_ = g["entities"], o["entities"]
        total_gold += len(gs)
        found += len(os_)

        def same(a: dict, b: dict) -> bool:
            if typed and a["label"] != b["label"]:
                return False
            if overlap:
                return a["start"] < b["end"] and b["start"] < a["end"]
            return (a["start"], a["end"]) == (b["start"], b["end"])

        correct_other += sum(1 for b in os_ if any(same(a, b) for a in gs))
        correct_gold += sum(1 for a in gs if any(same(a, b) for b in os_))
    precision = correct_other / found if found else 0.0
    recall = correct_gold / total_gold if total_gold else 0.0
    return round(2 * precision * recall / (precision + recall), 3) if precision + recall else 0.0


def agreement(gold: list[dict], second: list[dict]) -> dict[str, float]:
    by_id = {r["id"]: r for r in gold}
    pairs = [(by_id[r["id"]], r) for r in second]
    golds, others = [g for g, _ in pairs], [o for _, o in pairs]
    return {
        f"{'typed' if typed else 'typeless'} {'partial' if overlap else 'exact'}": f1(golds, others, typed=typed, overlap=overlap)
        for typed in (False, True) for overlap in (False, True)
    }


def write(path: Path, records: list[dict]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for record in sorted(records, key=lambda r: r["id"]):
            handle.write(json.dumps({key: record[key] for key in FIELDS if key in record}, ensure_ascii=False) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("batch_dir")
    args = parser.parse_args()
    folder = Path(args.batch_dir)
    new: list[dict] = []
    for path in sorted(folder.glob("b[0-9][0-9].input.jsonl")):
        stem = path.name.split(".")[0]
        new += [{**record, "batch": int(stem[1:])} for record in resolved(folder, stem, "rev")]
    split_new(new)
    earlier = [record for path in sorted(folder.glob("r[0-9][0-9].input.jsonl")) for record in resolved(folder, path.name.split(".")[0], "rev")]
    second = [record for path in sorted(folder.glob("a[0-9][0-9].input.jsonl")) for record in resolved(folder, path.name.split(".")[0], "ann")]
    ids = [r["id"] for r in new + earlier]
    if len(ids) != len(set(ids)):
        raise SystemExit("an abstract is in two batches")
    everything = new + earlier
    for name in ("train", "dev"):
        part = [r for r in everything if r["split"] == name]
        write(HERE / f"{name}.jsonl", part)
        counts = {era: sum(1 for r in part if r["era"] == era) for era in DEV_PER_ERA}
        print(f"{name}: {len(part)} abstracts {counts}, {sum(len(r['entities']) for r in part)} entities")
    # The earlier 56 second readings stay as they were read (they score the earlier gold's agreement).
    old_second = [json.loads(line) for line in (HERE / "second_reading.jsonl").open(encoding="utf-8")] if (HERE / "second_reading.jsonl").exists() else []
    old_second = [r for r in old_second if r.get("batch", 0) < 9]
    write(HERE / "second_reading.jsonl", old_second + [{**r, "split": "agreement", "batch": 100 + i // 40} for i, r in enumerate(second)])
    scores = {"abstracts read twice": len(second), "second reading against the gold": agreement(new, second)}
    (HERE / "agreement.json").write_text(json.dumps(scores, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(scores, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
