"""The modifier families of a build (`kg.concepts.hierarchy`), largest first, to judge by eye.

    python bench/families.py OUT/ [--top 30]

Reads OUT/concepts.jsonl and OUT/entities.jsonl (written by `kg build`). A family is a broader
concept that is the first word of its narrower concepts' labels ("adversarial" of "adversarial
attack"; a size or version suffix dropped, "xLSTM 7B" → xLSTM, is none); its size is the papers naming any of them. Prints label, id, papers, concepts and the
five members with the most papers.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path

from top_concepts import concepts_and_papers  # bench/ is on sys.path when a script there runs

_VERSION = re.compile(r"^(?:\d+(?:\.\d+)?[BMKTbmkt]?|v\d+(?:\.\d+)*)$")  # "xLSTM 7B" → xLSTM is a size, not a family


def _key(label: str) -> str:
    return " ".join(label.lower().replace("-", " ").split())


def families(out: Path) -> list[tuple[str, str, int, list[str]]]:
    """(label, id, papers, member labels by papers) per family, the most papers first."""
    concepts, papers = concepts_and_papers(out)
    members: dict[str, list[str]] = defaultdict(list)
    for cid, concept in concepts.items():
        for broader in concept["broader"]:
            words = concept["pref_label"].split()
            if len(words) > 1 and _key(words[0]) == _key(concepts[broader]["pref_label"]) and not _VERSION.match(words[-1]):
                members[broader].append(cid)
    rows = []
    for fid, family in members.items():
        named_in = set().union(*(papers[cid] for cid in family))
        ranked = sorted(family, key=lambda cid: (-len(papers[cid]), cid))
        rows.append((concepts[fid]["pref_label"], fid, len(named_in), [concepts[cid]["pref_label"] for cid in ranked]))
    return sorted(rows, key=lambda row: (-row[2], row[1]))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args(argv)
    rows = families(args.out)
    print(f"{len(rows)} families")
    for label, fid, n, labels in rows[: args.top]:
        print(f"{label:<22} {fid:<30} papers {n:>4}  concepts {len(labels):>3}  e.g. {', '.join(labels[:5])}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
