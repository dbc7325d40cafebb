"""Join the checked batches into kg's result-claim gold set, split by paper into train and dev.

    python bench/gold/claims/assemble.py BATCH_DIR [--suffix rev]

Reads BATCH_DIR/batchN.jsonl (the drawn abstracts) and BATCH_DIR/<suffix>N.jsonl (the annotations),
resolves each through resolve_claims.py (exact offsets) and writes train.jsonl and dev.jsonl beside
this script: half of each corpus file's abstracts to each split (seed 26), so both hold every era."""

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
    rng = random.Random(SEED)
    by_corpus: dict[str, list[dict]] = {}
    for record in sorted(records, key=lambda r: r["id"]):
        by_corpus.setdefault(record["corpus"], []).append(record)
    splits = {"train": [], "dev": []}
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
