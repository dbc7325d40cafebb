"""Fit kg's claim attacher (kg.results.attach) on the train half of kg's gold claims.

    python bench/fit_claims.py [--docs DIR] [--l2 L] [-o FILE] [--show N]

Every gold abstract is parsed by kg's pipeline (with the shipped recognizer; --docs keeps the parsed
docs in DIR for the next run, keyed by the pipeline version). Each value `kg.results.features.sites`
finds is an example of the claim part (a gold claim's value overlaps it); each of its candidates an
example of the metric, dataset or method part, right when its words fold to the gold claim's (see
`bench/claims.py`'s `fold`), or, for the "none" option, when the gold claim names none; the
"proposed" option is right for "(proposed)" or a method the paper proposes, "baseline" for
"(baseline)". Four logistic models (L2, Newton's method, numpy) are fitted; the L2 weight is chosen
by 5-fold cross-validation over train's abstracts (the precision–recall area of the claims found,
value, metric and dataset right). The figures printed are quick ones on the parsed docs
(texts compared, not kg's concept labels): `bench/claims.py` measures the built claims, and
chooses the default threshold on dev.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from claims import GOLD, fold  # noqa: E402
from kg.results.attach import AttachModel  # noqa: E402
from kg.results.features import Candidate, Site, sites  # noqa: E402

OUTPUT = ROOT / "src" / "kg" / "models" / "claim-attacher.json"
L2_CHOICES = (3.0, 10.0, 30.0, 100.0)


@dataclass
class Example:
    """One value of a gold abstract with its candidates and which are right."""

    doc_n: int
    site: Site
    text: str  # the abstract
    start: int  # the value in the abstract
    end: int
    gold: dict | None  # the gold claim it overlaps

    def words(self, candidate: Candidate, clean) -> str | None:
        if candidate.span is None:
            return None
        start, end = clean.span(candidate.span.start_char, candidate.span.end_char)
        return self.text[start:end]


def parse(records: list[dict], docs_dir: Path | None, split: str):
    """The parsed docs of `records` and their clean texts (kept in `docs_dir` when given)."""
    import pickle

    from spacy.tokens import DocBin

    from kg.extract.pipeline import load_pipeline, pipeline_version
    from kg.text.clean import clean_text
    from kg.text.markup import mask_markup

    nlp = load_pipeline()
    cleans = [clean_text(r["text"]) for r in records]
    path = docs_dir / f"{split}-{pipeline_version()}.spacy" if docs_dir else None
    if path is not None and path.exists():
        docs = list(DocBin().from_disk(path).get_docs(nlp.vocab))
        if len(docs) == len(records):
            return docs, cleans
    docs = list(nlp.pipe((mask_markup(c.text) for c in cleans), batch_size=32))
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        bin_ = DocBin(store_user_data=True)
        for doc in docs:
            bin_.add(doc)
        bin_.to_disk(path)
        path.with_suffix(".clean").write_bytes(pickle.dumps(len(docs)))
    return docs, cleans


def examples(records: list[dict], docs, cleans) -> list[tuple[Example, dict[str, list[int]]]]:
    """Each site with the right-or-wrong label of its claim and of each candidate of each part."""
    out = []
    for n, (record, doc, clean) in enumerate(zip(records, docs, cleans, strict=True)):
        text = record["text"]
        proposed = {fold(text[slice(*clean.span(s.start_char, s.end_char))]) for s in doc.spans.get("kg", []) if s.label_ == "METHOD" and s._.kg_role == "proposed"}
        for site in sites(doc):
            start, end = clean.span(site.value.start, site.value.end)
            gold = next((g for g in record["claims"] if g["start"] < end and start < g["end"]), None)
            example = Example(n, site, text, start, end, gold)
            labels: dict[str, list[int]] = {"claim": [int(gold is not None)]}
            for part in ("metric", "dataset", "method"):
                labels[part] = [_right(part, c, example.words(c, clean), gold, proposed) for c in getattr(site, part)]
            out.append((example, labels))
    return out


def _right(part: str, candidate: Candidate, words: str | None, gold: dict | None, proposed: set[str]) -> int:
    if gold is None:
        return 0
    want = gold[part]
    if part == "method":
        if candidate.option == "proposed":
            return int(want == "(proposed)" or fold(want) in proposed)
        if candidate.option == "baseline":
            return int(want == "(baseline)")
        return int(want not in ("(proposed)", "(baseline)") and fold(words) == fold(want))
    if candidate.option == "none":
        return int(want is None)
    return int(want is not None and fold(words) == fold(want))


def matrix(rows: list[dict[str, float]], names: list[str]) -> np.ndarray:
    index = {name: i for i, name in enumerate(names)}
    x = np.zeros((len(rows), len(names)))
    for r, row in enumerate(rows):
        for name, value in row.items():
            if name in index:
                x[r, index[name]] = value
    return x


def fit_logistic(rows: list[dict[str, float]], y: list[int], l2: float) -> dict[str, float]:
    names = sorted({name for row in rows for name in row})
    x = matrix(rows, names)
    target = np.array(y, dtype=float)
    w = np.zeros(len(names))
    penalty = np.full(len(names), l2)
    if "bias" in names:
        penalty[names.index("bias")] = 0.0
    for _ in range(100):  # Newton's method on the penalised log-likelihood
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -30, 30)))
        gradient = x.T @ (p - target) + penalty * w
        hessian = (x * (p * (1 - p))[:, None]).T @ x + np.diag(penalty + 1e-6)
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return {name: round(float(w[i]), 5) for i, name in enumerate(names) if abs(w[i]) >= 1e-5}


def fit_choice(groups: list[tuple[list[dict[str, float]], list[int]]], l2: float) -> dict[str, float]:
    """A conditional logit: one softmax over each group's candidates, fitted to the chance of the
    right ones (several may be right: the same words twice); groups with none right are left out.
    Newton steps on the penalised likelihood with the softmax's Fisher matrix, halved until it improves."""
    groups = [(rows, y) for rows, y in groups if any(y) and len(rows) > 1]
    names = sorted({name for rows, _ in groups for row in rows for name in row} - {"bias"})
    x = matrix([row for rows, _ in groups for row in rows], names)
    right = np.array([v for _, y in groups for v in y], dtype=bool)
    sizes = np.array([len(rows) for rows, _ in groups])
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    group = np.repeat(np.arange(len(groups)), sizes)

    def objective(w: np.ndarray) -> tuple[float, np.ndarray]:
        z = x @ w
        top = np.maximum.reduceat(z, starts)
        e = np.exp(z - top[group])
        total = np.add.reduceat(e, starts)
        good = np.add.reduceat(np.where(right, e, 0.0), starts)
        return float(-(np.log(good) - np.log(total)).sum() + 0.5 * l2 * w @ w), e / total[group]

    w = np.zeros(len(names))
    loss, p = objective(w)
    for _ in range(100):
        q = np.where(right, p, 0.0)
        q = q / np.add.reduceat(q, starts)[group]
        gradient = x.T @ (p - q) + l2 * w
        weighted = x * p[:, None]
        m = np.add.reduceat(weighted, starts, axis=0)
        hessian = x.T @ weighted - m.T @ m + np.diag(np.full(len(names), l2 + 1e-6))
        step = np.linalg.solve(hessian, gradient)
        scale = 1.0
        while scale > 1e-4:
            new_loss, new_p = objective(w - scale * step)
            if new_loss <= loss:
                break
            scale /= 2
        w, loss, p = w - scale * step, new_loss, new_p
        if np.abs(scale * step).max() < 1e-7:
            break
    return {name: round(float(w[i]), 5) for i, name in enumerate(names) if abs(w[i]) >= 1e-5}


def fit(data: list[tuple[Example, dict[str, list[int]]]], l2: float, calibrate: bool = True) -> AttachModel:
    weights: dict[str, dict[str, float]] = {"claim": fit_logistic([e.site.features for e, _ in data], [labels["claim"][0] for _, labels in data], l2)}
    for part in ("metric", "dataset", "method"):
        groups = [([c.features for c in getattr(e.site, part)], labels[part]) for e, labels in data if e.gold is not None]
        weights[part] = fit_choice(groups, l2)
    model = AttachModel({"weights": weights})
    if calibrate:  # the score: fitted on predictions made out of fold
        ids = sorted({e.doc_n for e, _ in data})
        random.Random(11).shuffle(ids)
        fold_of = {doc: n % 5 for n, doc in enumerate(ids)}
        rows, y = [], []
        for k in range(5):
            inner = fit([d for d in data if fold_of[d[0].doc_n] != k], l2, calibrate=False)
            for example, labels in (d for d in data if fold_of[d[0].doc_n] == k):
                choice = inner.attach(example.site)
                rows.append(choice.evidence)
                y.append(int(_all_right(example.site, labels, choice)))
        model.weights["score"] = fit_logistic(rows, y, l2)
    return model


def _all_right(site: Site, labels: dict[str, list[int]], choice) -> bool:
    return bool(labels["claim"][0]) and bool(labels["metric"][site.metric.index(choice.metric)]) and bool(labels["dataset"][site.dataset.index(choice.dataset)])


def predict(model: AttachModel, data: list[tuple[Example, dict[str, list[int]]]]) -> list[tuple[float, bool, bool]]:
    """(score, value metric and dataset right, method right) of each site."""
    out = []
    for example, labels in data:
        site = example.site
        choice = model.attach(site)
        right = _all_right(site, labels, choice)
        out.append((choice.score, right, right and bool(labels["method"][site.method.index(choice.method)])))
    return out


def curve(scored: list[tuple[float, bool, bool]], gold: int, thresholds=(0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)) -> list[dict]:
    rows = []
    for t in thresholds:
        kept = [s for s in scored if s[0] >= t]
        right = sum(s[1] for s in kept)
        rows.append({
            "min score": t, "found": len(kept), "precision": round(right / len(kept), 3) if kept else 0.0,
            "recall": round(right / gold, 3) if gold else 0.0, "method": round(sum(s[2] for s in kept) / right, 3) if right else 0.0,
        })  # fmt: skip
    return rows


def area(scored: list[tuple[float, bool, bool]], gold: int) -> float:
    """Average precision of the ranking by score (over every gold claim)."""
    total, right = 0.0, 0
    for n, (_, ok, _) in enumerate(sorted(scored, key=lambda s: -s[0]), start=1):
        if ok:
            right += 1
            total += right / n
    return total / gold if gold else 0.0


def cross_validate(data, records: list[dict], l2: float, folds: int = 5) -> float:
    ids = sorted({e.doc_n for e, _ in data})
    random.Random(7).shuffle(ids)
    fold_of = {doc: n % folds for n, doc in enumerate(ids)}
    scored = []
    for k in range(folds):
        model = fit([d for d in data if fold_of[d[0].doc_n] != k], l2, calibrate=False)
        scored.extend(predict(model, [d for d in data if fold_of[d[0].doc_n] == k]))
    return area(scored, sum(len(r["claims"]) for r in records))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=Path, default=None, help="keep the parsed gold docs here")
    parser.add_argument("--l2", type=float, default=None, help="the L2 weight (default: chosen by cross-validation)")
    parser.add_argument("-o", "--output", type=Path, default=OUTPUT)
    args = parser.parse_args()
    split_data = {}
    for split in ("train", "dev"):
        records = [json.loads(line) for line in (GOLD / f"{split}.jsonl").open(encoding="utf-8")]
        docs, cleans = parse(records, args.docs, split)
        split_data[split] = (records, examples(records, docs, cleans))
    train_records, train = split_data["train"]
    if args.l2 is None:
        areas = {l2: cross_validate(train, train_records, l2) for l2 in L2_CHOICES}
        for l2, value in areas.items():
            print(f"L2 {l2}: 5-fold average precision on train {value:.3f}")
        l2 = max(areas, key=lambda k: areas[k])
    else:
        l2 = args.l2
    model = fit(train, l2)
    about = {"about": "kg's claim attacher: logistic models over kg.results.attach's features, fitted by bench/fit_claims.py on bench/gold/claims/train.jsonl", "l2": l2}
    for split, (records, data) in split_data.items():
        gold = sum(len(r["claims"]) for r in records)
        scored = predict(model, data)
        about[split] = {"average precision": round(area(scored, gold), 3), "curve": curve(scored, gold)}
        print(split, json.dumps(about[split]))
    args.output.write_text(json.dumps({**about, "weights": model.weights}, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
