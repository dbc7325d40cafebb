"""Join the checked batches into kg's result-claim gold set, split by paper into train and dev.

    python bench/gold/claims/assemble.py BATCH_DIR [--suffix rev]

Reads BATCH_DIR/batchN.jsonl (the drawn abstracts) and BATCH_DIR/<suffix>N.jsonl (the annotations),
resolves each through resolve_claims.py (exact offsets) and writes train.jsonl and dev.jsonl beside
this script: half of each corpus file's abstracts to each split (seed 26), so both hold every era.
Records already in train.jsonl or dev.jsonl from batches not in BATCH_DIR (an earlier round's) keep
their split; the batches read now are split on their own, the same way."""

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from resolve_claims import resolve  # noqa: E402

HERE = Path(__file__).parent
SEED = 26


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("batch_dir")
    parser.add_argument("--suffix", default="rev")
    args = parser.parse_args()
    folder = Path(args.batch_dir)
    records = []
    for batch in sorted(folder.glob("batch*.jsonl")):
        number = batch.stem.removeprefix("batch")
        raws = {}
        for line in (folder / f"{args.suffix}{number}.jsonl").open(encoding="utf-8"):
            if line.strip():
                raw = json.loads(line)
                raws[raw["id"]] = raw
        for line in batch.open(encoding="utf-8"):
            record = json.loads(line)
            claims, errors = resolve(record, raws[record["id"]])
            if errors:
                print(f"ERROR {record['id']}: {errors}")
                return 1
            records.append({**record, "batch": int(number), "claims": claims})
    read_now = {record["batch"] for record in records}
    kept = [json.loads(line) for name in ("train", "dev") if (HERE / f"{name}.jsonl").exists()
            for line in (HERE / f"{name}.jsonl").open(encoding="utf-8")]
    kept = [record for record in kept if record["batch"] not in read_now]
    if {r["id"] for r in kept} & {r["id"] for r in records}:
        print("ERROR an abstract of an earlier round is in BATCH_DIR too")
        return 1
    rng = random.Random(SEED)
    by_corpus: dict[str, list[dict]] = {}
    for record in sorted(records, key=lambda r: r["id"]):
        by_corpus.setdefault(record["corpus"], []).append(record)
    splits: dict[str, list[dict]] = {"train": [r for r in kept if r["split"] == "train"], "dev": [r for r in kept if r["split"] == "dev"]}
    for group in by_corpus.values():
        rng.shuffle(group)
        half = len(group) // 2
        splits["train"] += group[:half]
        splits["dev"] += group[half:]
    for name, group in splits.items():
        with (HERE / f"{name}.jsonl").open("w", encoding="utf-8") as handle:
            for record in sorted(group, key=lambda r: r["id"]):
                handle.write(json.dumps({**record, "split": name}, ensure_ascii=False) + "\n")
        print(f"{name}: {len(group)} abstracts, {sum(len(r['claims']) for r in group)} claims, "
              f"{sum(1 for r in group if r['claims'])} with a claim")
    return 0


if __name__ == "__main__":
    sys.exit(main())
