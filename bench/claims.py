"""How well kg finds result claims, against kg's gold claims (bench/gold/claims).

    python bench/claims.py [--split train|dev] [--min-score S] [--sweep] [--show N]

Each gold abstract goes through the front half of a build (extraction, resolution, propagation,
result linking: `kg.concepts.find.find_concepts`, no cache), alone with the others of its split.
A found claim matches the gold claim whose value span it overlaps (one to one). It is **right**
when its metric and dataset are right too: equal after folding case, spaces and hyphens, or equal
to a label of the concept kg linked (so "WER" is right for "word error rate" when kg merged them);
both absent counts as equal. Printed: claim precision and recall, the precision of the method link
(over right claims: the same name, or both the paper's unnamed method / an unnamed baseline), and
the share of abstracts with a gold claim that yield at least one. `--sweep` prints the figures per
score threshold (choose on train, report on dev)."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from kg.concepts.find import find_concepts
from kg.model import Paper

GOLD = Path(__file__).parent / "gold" / "claims"


def fold(text: str | None) -> str | None:
    """Case, spaces, hyphens, a plural and a trailing "score" / "metric" folded: "F1-scores" is "F1"."""
    if text is None:
        return None
    words = re.sub(r"[\W_]+", " ", text.lower()).split()
    while len(words) > 1 and words[-1] in ("score", "scores", "metric", "metrics", "value", "values"):
        words.pop()
    if words and len(words[-1]) > 3 and words[-1].endswith("ies"):
        words[-1] = words[-1][:-3] + "y"
    elif words and len(words[-1]) > 3 and words[-1].endswith("s") and not words[-1].endswith("ss"):
        words[-1] = words[-1][:-1]
    return "".join(words)


def same(gold: str | None, found: str | None, labels: set[str]) -> bool:
    if gold is None or found is None:
        return gold is None and found is None
    return fold(gold) == fold(found) or fold(gold) in labels


def concept_labels(concepts: dict, concept_id: str | None) -> set[str]:
    concept = concepts.get(concept_id)
    return set() if concept is None else {fold(label) for label in (concept.pref_label, *concept.alt_labels)}


def evaluate(records: list[dict], found: list, concepts: dict, min_score: float, show: int = 0) -> dict:
    tp = fp = method_right = yielding = with_gold = 0
    shown = 0
    for record, results in zip(records, found, strict=True):
        results = [r for r in results if r.score >= min_score]
        gold = record["claims"]
        with_gold += bool(gold)
        yielding += bool(gold) and bool(results)
        used: set[int] = set()
        for result in results:
            match = next((n for n, g in enumerate(gold) if n not in used and g["start"] < result.end and result.start < g["end"]), None)
            right = False
            if match is not None:
                used.add(match)
                g = gold[match]
                right = same(g["metric"], result.metric, concept_labels(concepts, result.metric_concept)) and same(
                    g["dataset"], result.dataset, concept_labels(concepts, result.dataset_concept)
                )
            if right:
                tp += 1
                gm, fm = g["method"], result.method
                if same(gm, fm, concept_labels(concepts, result.method_concept)) or gm == fm:
                    method_right += 1
                elif shown < show:
                    shown += 1
                    print(f"  METHOD {record['id']} {result.value}: gold {gm!r} found {fm!r}")
            else:
                fp += 1
                if shown < show:
                    shown += 1
                    g = gold[match] if match is not None else None
                    print(f"  WRONG {record['id']} {result.value} found metric={result.metric!r} dataset={result.dataset!r}"
                          + (f" | gold metric={g['metric']!r} dataset={g['dataset']!r}" if g else " | no gold claim"))
    found_n = tp + fp
    gold_n = sum(len(r["claims"]) for r in records)
    return {
        "claims found": found_n,
        "gold claims": gold_n,
        "precision": round(tp / found_n, 3) if found_n else 0.0,
        "recall": round(tp / gold_n, 3) if gold_n else 0.0,
        "method link precision": round(method_right / tp, 3) if tp else 0.0,
        "abstracts with a stated result yielding a claim": round(yielding / with_gold, 3) if with_gold else 0.0,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", default="dev", choices=("train", "dev"))
    parser.add_argument("--min-score", type=float, default=None, help="default: kg's own (kg.results.MIN_RESULT_SCORE)")
    parser.add_argument("--sweep", action="store_true")
    parser.add_argument("--show", type=int, default=0, help="print up to N wrong claims")
    args = parser.parse_args()
    path = GOLD / f"{args.split}.jsonl"
    if not path.exists():
        print(f"no gold file {path}", file=sys.stderr)
        return 2
    from kg.results import MIN_RESULT_SCORE

    records = [json.loads(line) for line in path.open(encoding="utf-8")]
    papers = [Paper(id=r["id"], title=r["title"] or "", abstract=r["text"], year=r.get("year")) for r in records]
    front = find_concepts(papers, cache_dir=None)
    concepts = {c.id: c for c in front.resolution.concepts}
    found = list(front.results)
    print(f"{args.split}: {len(records)} abstracts")
    if args.sweep:
        for threshold in (0.0, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9):
            print(threshold, evaluate(records, found, concepts, threshold))
        return 0
    threshold = MIN_RESULT_SCORE if args.min_score is None else args.min_score
    print(json.dumps({"min score": threshold, **evaluate(records, found, concepts, threshold, show=args.show)}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
