"""Ingestion speed on the shared corpus: `python bench/ingest.py [CORPUS_DIR]`.

Reads every ../shared/corpus/*.jsonl with --skip-invalid semantics (icml2025_accepted_titles.jsonl
has no abstracts) and prints records, papers, duplicates, skipped, wall and CPU seconds, records/s.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from kg.ingest import read_corpus


def main() -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "shared" / "corpus"
    files = sorted(str(f) for f in folder.glob("*.jsonl"))
    if not files:
        raise SystemExit(f"no *.jsonl in {folder}")
    size = sum(Path(f).stat().st_size for f in files)
    wall, cpu = time.perf_counter(), time.process_time()
    corpus = read_corpus(files, skip_invalid=True)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    records = len(corpus.papers) + corpus.duplicates + len(corpus.skipped)
    print(f"files       {len(files)} ({size / 1e6:.0f} MB)")
    print(f"records     {records:,}")
    print(f"papers      {len(corpus.papers):,}")
    print(f"duplicates  {corpus.duplicates:,}")
    print(f"skipped     {len(corpus.skipped):,}")
    print(f"wall        {wall:.2f} s")
    print(f"cpu         {cpu:.2f} s")
    print(f"rate        {records / wall:,.0f} records/s")


if __name__ == "__main__":
    main()
