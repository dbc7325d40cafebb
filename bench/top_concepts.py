"""The concepts with the most papers in a build, as a reader would scan them for junk.

    python bench/top_concepts.py OUT/ [--top 50]

Reads OUT/concepts.jsonl and OUT/entities.jsonl (written by `kg build`); prints label (type, papers).
The round's two builds: the first 1,200 records of ../shared/corpus/papercopilot_ml_core.jsonl with year
≤ 1997, and the first 1,200 of arxiv_cs_cv_cl_2025_05_07.jsonl, each built with `kg build FILE -o OUT/`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path


def concepts_and_papers(out: Path) -> tuple[dict[str, dict], dict[str, set[str]]]:
    """A build's concepts by id (concepts.jsonl), and the papers each is linked to (entities.jsonl)."""
    concepts = {c["id"]: c for c in map(json.loads, (out / "concepts.jsonl").read_text(encoding="utf-8").splitlines())}
    papers: dict[str, set[str]] = defaultdict(set)
    for line in (out / "entities.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        for entity in record["entities"]:
            papers[entity["concept"]].add(record["id"])
    return concepts, papers


def top_concepts(out: Path, top: int) -> list[tuple[str, str, int]]:
    concepts, papers = concepts_and_papers(out)
    ranked = sorted(papers, key=lambda c: (-len(papers[c]), c))[:top]
    return [(concepts[c]["pref_label"], concepts[c]["type"], len(papers[c])) for c in ranked]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--top", type=int, default=50)
    args = parser.parse_args(argv)
    print("; ".join(f"{label} ({kind}, {n})" for label, kind, n in top_concepts(args.out, args.top)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
