"""Choosing when a concept's type vote is clear (`kg.concepts.resolve.CLEAR_SHARE`), on gold data.

    python bench/type_vote.py [--gold FILE ...] [--shares 0 0.5 0.6 0.7 0.8 0.9 1.01]

For every share, the gold papers (abstracts and titles extracted once, then scored, resolved and propagated as
one corpus, as bench/quality.py does; the abstracts' mentions scored) are measured with each rule for an unclear vote: ``paper`` (kg's: each paper takes the
type its own mentions vote for, a paper with guesses only the winner) and ``mention`` (each mention keeps its
own type). A share above 1 makes every vote unclear. Default gold: the second-round abstracts of
bench/gold/train.jsonl (those with a ``batch``), which neither the shipped recognizer nor the mention scorer
was fitted on; bench/gold/dev.jsonl is what kg reports, so it is not chosen on.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from quality import LISTED_CONFUSIONS, load, score  # noqa: E402


def per_mention_ids(extractions, groups, typings):
    """The other rule for an unclear vote: every mention keeps its own type."""
    from kg.text.vocab import concept_id

    ids = []
    for extraction, paper_groups in zip(extractions, groups.per_paper, strict=True):
        row = []
        for mention, group in zip(extraction.mentions, paper_groups, strict=True):
            typing = typings[group]
            if isinstance(typing, str):
                row.append(group)
            else:
                row.append(concept_id(typing.winner if typing.clear else mention.label, group.split(":", 1)[1]))
        ids.append(row)
    return ids


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gold", type=Path, nargs="+", default=[ROOT / "bench" / "gold" / "train.jsonl"])
    parser.add_argument("--all", action="store_true", help="every abstract of the gold files, not only the second round's")
    parser.add_argument("--shares", type=float, nargs="+", default=[0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 1.01])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    import kg.concepts.resolve as resolve_module
    from kg.concepts.find import resolve_corpus
    from kg.extract.runner import run_extraction
    from kg.model import Paper

    docs = [d for path in args.gold for d in load(path) if args.all or "batch" in d]
    papers = [Paper(id=d["id"], title=d.get("title") or "", abstract=d["text"], year=d.get("year")) for d in docs]
    extractions, _ = run_extraction(papers, cache_dir=None)
    kg_rule, chosen = resolve_module._concept_ids, resolve_module.CLEAR_SHARE
    rows = []
    try:
        for rule, ids in (("paper", kg_rule), ("mention", per_mention_ids)):
            resolve_module._concept_ids = ids
            for share in args.shares:
                resolve_module.CLEAR_SHARE = share
                resolution = resolve_corpus(papers, extractions)
                predicted = {p.id: [m for m in map(asdict, e.mentions) if m["where"] == "abstract"] for p, e in zip(papers, resolution.entities, strict=True)}
                rows.append({"rule": rule, "clear_share": share, **score(docs, predicted)["all"]})
    finally:
        resolve_module._concept_ids, resolve_module.CLEAR_SHARE = kg_rule, chosen
    if args.json:
        print(json.dumps({"gold": [str(p) for p in args.gold], "abstracts": len(docs), "rows": rows}, indent=1))
        return 0
    print(f"{', '.join(str(p) for p in args.gold)}: {len(docs)} abstracts; kg's CLEAR_SHARE {chosen}")
    print(f"{'rule':<8} {'share':>5}  {'mentions':>8}  {'typeless P':>10}  {'typed P':>7}  {'typed R':>7}  {'strict F1':>9}  " + "  ".join(LISTED_CONFUSIONS))
    for row in rows:
        confusions = "  ".join(f"{row['confusions'].get(k, 0):>{len(k)}}" for k in LISTED_CONFUSIONS)
        print(f"{row['rule']:<8} {row['clear_share']:>5}  {row['mentions']:>8}  {row['typeless_precision']:>10}  {row['typed_precision']:>7}  "
              f"{row['typed_partial_recall']:>7}  {row['strict_f1']:>9}  {confusions}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
