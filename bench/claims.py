"""How well kg finds result claims, against kg's gold claims (bench/gold/claims).

    python bench/claims.py [--split train|dev|both] [--min-score S] [--sweep] [--show N] [--attacher FILE] [--choose P]

Each gold abstract goes through the front half of a build (extraction, resolution, propagation,
result linking: `kg.concepts.find.find_concepts`, no cache), alone with the others of its split,
twice in the same run: with the learned attacher (`kg.results.find.learned_claims`, the shipped
weights or --attacher FILE) and with today's rules (`kg.results.rules.rule_claims`).
A found claim matches the gold claim whose value span it overlaps (one to one). It is **right**
when its metric and dataset are right too: equal after folding case, spaces and hyphens, or equal
to a label of the concept kg linked (so "WER" is right for "word error rate" when kg merged them);
both absent counts as equal. Printed: claim precision and recall, the precision of the method link
(over right claims: the same name, or both the paper's unnamed method / an unnamed baseline), and
the share of abstracts with a gold claim that yield at least one, at kg's default threshold
(`kg.results.MIN_RESULT_SCORE`; the rules' claims at any score). `--sweep` prints the figures per
score threshold: the precision–recall curve. `--choose P` prints the threshold at which the learned
claims of the split have the best F0.5 (the default threshold is chosen so on dev) and the lowest one
at which they reach precision P."""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from unittest import mock

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


THRESHOLDS = tuple(round(0.05 * n, 2) for n in range(20))


def front(papers: list[Paper], finder: Callable | None) -> tuple[dict, list]:
    """The concepts and each paper's results of the front half of a build, claims found by `finder`
    (kg's own `find_claims` when None)."""
    with mock.patch("kg.results.find.find_claims", finder) if finder is not None else mock.patch.dict({}):
        found = find_concepts(papers, cache_dir=None)
    return {c.id: c for c in found.resolution.concepts}, list(found.results)


def finders(attacher: Path | None) -> dict[str, Callable]:
    from kg.results.attach import AttachModel, load_attacher
    from kg.results.find import learned_claims
    from kg.results.rules import rule_claims

    model = AttachModel(json.loads(attacher.read_text(encoding="utf-8"))) if attacher else load_attacher()
    if model is None:
        raise SystemExit("no attacher: kg/models/claim-attacher.json is not installed and --attacher was not given")
    return {"learned": lambda doc, spans=None: learned_claims(doc, model, spans), "rules": rule_claims}


def choose(records: list[dict], found: list, concepts: dict, precision: float) -> tuple[float, float | None]:
    """In steps of 0.01: the threshold with the best F-beta (beta 0.5: precision counts twice as much
    as recall; the rule kg's default threshold is chosen by, as the mention scorer's), and the lowest
    threshold at which the claims reach `precision` (None if none does)."""
    best, best_f, lowest = 0.0, -1.0, None
    for step in range(101):
        figures = evaluate(records, found, concepts, step / 100)
        p, r = figures["precision"], figures["recall"]
        f = 1.25 * p * r / (0.25 * p + r) if p + r else 0.0
        if f > best_f:
            best, best_f = step / 100, f
        if lowest is None and figures["claims found"] and p >= precision:
            lowest = step / 100
    return best, lowest


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", default="dev", choices=("train", "dev", "both"))
    parser.add_argument("--min-score", type=float, default=None, help="default: kg's own (kg.results.MIN_RESULT_SCORE)")
    parser.add_argument("--sweep", action="store_true", help="print the precision-recall curve")
    parser.add_argument("--show", type=int, default=0, help="print up to N wrong claims (learned)")
    parser.add_argument("--attacher", type=Path, default=None, help="weights to measure instead of the shipped ones")
    parser.add_argument("--choose", type=float, default=None, metavar="P", help="print the best-F0.5 threshold and the lowest one reaching precision P")
    args = parser.parse_args()
    from kg.results import MIN_RESULT_SCORE

    threshold = MIN_RESULT_SCORE if args.min_score is None else args.min_score
    ways = finders(args.attacher)
    for split in ("train", "dev") if args.split == "both" else (args.split,):
        path = GOLD / f"{split}.jsonl"
        if not path.exists():
            print(f"no gold file {path}", file=sys.stderr)
            return 2
        records = [json.loads(line) for line in path.open(encoding="utf-8")]
        papers = [Paper(id=r["id"], title=r["title"] or "", abstract=r["text"], year=r.get("year")) for r in records]
        print(f"{split}: {len(records)} abstracts, {sum(len(r['claims']) for r in records)} gold claims")
        for way, finder in ways.items():
            concepts, found = front(papers, finder)
            at = threshold if way == "learned" else 0.0
            print(f"  {way} at min score {at}: {json.dumps(evaluate(records, found, concepts, at, show=args.show if way == 'learned' else 0))}")
            if args.sweep:
                for t in THRESHOLDS:
                    figures = evaluate(records, found, concepts, t)
                    found_n, method = figures["claims found"], figures["method link precision"]
                    print(f"    {way} {t:4.2f}  found {found_n:4d}  precision {figures['precision']:.3f}  recall {figures['recall']:.3f}  method {method:.3f}")
            if args.choose is not None and way == "learned":
                best, lowest = choose(records, found, concepts, args.choose)
                print(f"  threshold with the best F0.5: {best}; lowest threshold with precision >= {args.choose}: {lowest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
