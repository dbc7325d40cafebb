"""Fit kg's mention scorer (kg.extract.scoring) on kg's gold data, out of fold, and choose its threshold on dev.

    python bench/fit_scorer.py --fold TRAIN_GOLD=MODEL_NOT_TRAINED_ON_IT ... --dev-recognizer MODEL [--target 0.88] [--drop TEXT ...] [-o FILE]

Each --fold pairs a gold file with a recognizer trained without it (`kg train` on the other gold files), so the
scorer learns how often a reader accepts the mentions of a recognizer on text it has not seen. The scorer is a
logistic model (L2, Newton's method, numpy). On the dev set (bench/gold/dev.jsonl, never fitted on), mentions of
--dev-recognizer (the one kg ships) are scored, and the default threshold is the one that maximises typed
F-beta (beta 0.5: precision counts twice as much as recall). The lowest threshold at which typed precision
reaches --target is printed and stored too (`kg build --min-score` takes it); the calibration table and the
threshold sweep are stored in the weights file. ``--drop TEXT`` leaves out every feature whose name holds
TEXT (e.g. ``model_confidence``), to measure on dev what a group of features is worth.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
L2 = 1.0


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def examples(docs: list[dict], recognizer: str) -> list[tuple[dict[str, float], int, dict]]:
    """(features, reader accepts with this type, mention) for every mention kg extracts from `docs`."""
    from collections import Counter

    from kg.concepts.title_roles import mark_title_names
    from kg.extract.papers import extract_papers
    from kg.extract.pipeline import load_pipeline
    from kg.extract.scoring import features
    from kg.model import Paper

    papers = [Paper(id=d["id"], title=d.get("title") or "", abstract=d["text"], year=d.get("year")) for d in docs]
    extractions = mark_title_names(papers, list(extract_papers(papers, nlp=load_pipeline(recognizer=recognizer))))
    rows = []
    for doc, paper, extraction in zip(docs, papers, extractions, strict=True):
        counts = Counter(m.key for m in extraction.mentions)
        for m in extraction.mentions:
            ok = any(m.start < g["end"] and g["start"] < m.end and g["label"] == m.label for g in doc["entities"])
            rows.append((features(m, paper, counts), int(ok), {"doc": doc, "start": m.start, "end": m.end, "label": m.label}))
    return rows


def fit(rows: list[tuple[dict[str, float], int, dict]], drop: tuple[str, ...] = ()) -> dict[str, float]:
    names = sorted({name for named, _, _ in rows for name in named if not any(text in name for text in drop)})
    index = {name: i for i, name in enumerate(names)}
    x = np.zeros((len(rows), len(names)))
    for r, (named, _, _) in enumerate(rows):
        for name, value in named.items():
            if name in index:
                x[r, index[name]] = value
    y = np.array([ok for _, ok, _ in rows], dtype=float)
    w = np.zeros(len(names))
    penalty = np.full(len(names), L2)
    penalty[index["bias"]] = 0.0
    for _ in range(50):  # Newton's method on the penalised log-likelihood
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        gradient = x.T @ (p - y) + penalty * w
        hessian = (x * (p * (1 - p))[:, None]).T @ x + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return {name: round(float(w[i]), 5) for name, i in index.items()}


def sweep(rows, weights, docs) -> list[dict]:
    """Typed precision and typed partial recall (over all gold entities of `docs`) at each threshold."""
    from kg.extract.scoring import MentionScorer

    scorer = MentionScorer({"weights": weights})
    scored = [(scorer.probability(named), ok, info) for named, ok, info in rows]
    gold_total = sum(len(d["entities"]) for d in docs)
    table = []
    for threshold in [round(t, 2) for t in np.arange(0.0, 0.96, 0.05)]:
        kept = [(s, ok, info) for s, ok, info in scored if s >= threshold]
        found = 0
        for d in docs:
            mine = [info for _, _, info in kept if info["doc"] is d]
            found += sum(any(m["start"] < g["end"] and g["start"] < m["end"] and m["label"] == g["label"] for m in mine) for g in d["entities"])
        table.append({"min_score": threshold, "mentions": len(kept), "typed_precision": round(sum(ok for _, ok, _ in kept) / max(len(kept), 1), 3),
                      "typed_partial_recall": round(found / gold_total, 3)})
    return table


def calibration(rows, weights) -> list[dict]:
    from kg.extract.scoring import MentionScorer

    scorer = MentionScorer({"weights": weights})
    scored = [(scorer.probability(named), ok) for named, ok, _ in rows]
    bins = []
    for low in np.arange(0.0, 1.0, 0.1):
        inside = [ok for s, ok in scored if low <= s < low + 0.1 or (low >= 0.9 and s == 1.0)]
        if inside:
            bins.append({"scores": f"{low:.1f}-{low + 0.1:.1f}", "mentions": len(inside), "accepted": round(sum(inside) / len(inside), 3)})
    return bins


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fold", action="append", required=True, metavar="GOLD=MODEL")
    parser.add_argument("--dev", type=Path, default=ROOT / "bench" / "gold" / "dev.jsonl")
    parser.add_argument("--dev-recognizer", required=True)
    parser.add_argument("--target", type=float, default=0.88)
    parser.add_argument("--drop", action="append", default=[], metavar="TEXT", help="leave out the features whose names hold TEXT")
    parser.add_argument("-o", "--out", type=Path, default=ROOT / "src" / "kg" / "models" / "mention-scorer.json")
    args = parser.parse_args(argv)

    rows = []
    for fold in args.fold:
        gold, model = fold.split("=", 1)
        rows += examples(load(Path(gold)), model)
    weights = fit(rows, tuple(args.drop))
    dev_docs = load(args.dev)
    dev_rows = examples(dev_docs, args.dev_recognizer)
    table = sweep(dev_rows, weights, dev_docs)
    reaching = [row for row in table if row["typed_precision"] >= args.target and row["mentions"]]
    precise = reaching[0]["min_score"] if reaching else None

    def f_beta(row: dict, beta: float = 0.5) -> float:
        p, r = row["typed_precision"], row["typed_partial_recall"]
        return (1 + beta**2) * p * r / (beta**2 * p + r) if p and r else 0.0

    chosen = max(table, key=f_beta)["min_score"]
    model = {
        "about": "kg's mention scorer: a logistic model over kg.extract.scoring.features, fitted by bench/fit_scorer.py",
        "fitted_on": {"folds": [Path(f.split("=", 1)[0]).name for f in args.fold], "mentions": len(rows), "accepted": round(sum(ok for _, ok, _ in rows) / len(rows), 3),
                      **({"features_dropped": args.drop} if args.drop else {})},
        "min_score": chosen,
        "min_score_rule": "maximises typed F0.5 on dev",
        "target_typed_precision": args.target,
        "min_score_for_target": precise,
        "dev": {"file": args.dev.name, "mentions": len(dev_rows), "calibration": calibration(dev_rows, weights), "sweep": table},
        "weights": weights,
    }
    args.out.write_text(json.dumps(model, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"fitted on {len(rows)} out-of-fold mentions ({model['fitted_on']['accepted']:.0%} accepted); wrote {args.out}")
    print("dev calibration:", ", ".join(f"{b['scores']}: {b['accepted']} of {b['mentions']}" for b in model["dev"]["calibration"]))
    print(f"{'min score':>9}  {'mentions':>8}  {'typed P':>7}  {'typed R':>7}")
    for row in table:
        print(f"{row['min_score']:>9.2f}  {row['mentions']:>8}  {row['typed_precision']:>7}  {row['typed_partial_recall']:>7}")
    print(f"default threshold (max typed F0.5): {chosen}; typed precision {args.target} from: {precise}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
