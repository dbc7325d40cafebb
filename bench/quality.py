"""Extraction quality on kg's own gold data, the way a reader judges it.

    python bench/quality.py [--gold bench/gold/dev.jsonl] [--recognizer DIR|none] [--min-score S ...] [--alone] [--json]

For every mention kg outputs for a gold abstract (what `kg build` writes to entities.jsonl: rules, vocabulary
and recognizer on the abstract and the title, the title's name marked, mentions scored and those below the
threshold dropped, concepts resolved and propagated over the gold papers as one corpus; only the abstract's
mentions are scored, as the gold marks only the abstract):
- typeless precision: the share that overlaps a gold entity of any type;
- typed precision: the share that overlaps a gold entity of the same type;
- typed partial recall: the share of gold entities overlapped by an extracted mention of their type;
- strict F1: exact span and type;
- type confusions: mentions that overlap gold entities of other types only, counted as "X for Y" (extracted type X,
  the gold type Y most of the overlapped entities have), e.g. "METHOD for TASK" ("regression" given as a method).
Overall, per type (precision by the extracted type, recall by the gold type) and per era; with several
--min-score values, one row per threshold (mentions scored below it dropped; default: 0 and kg's default
threshold). Prints words/s too (the abstracts' words over the time extraction takes, titles included).

--alone: the recognizer alone instead (no rules, no scorer, no resolution): its spans on the text kg's pipeline
reads (clean, markup masked), mapped back onto the abstract; a transformer's as its tagger decodes them, a CNN's
as spaCy's entities. Same measures; words/s of the recognizer alone.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TYPES = ("METHOD", "DATASET", "TASK", "METRIC", "HARDWARE", "TERM")
# The confusions issue 35 names: METHOD for TASKs ("regression"), DATASETs and TERMs (MRI); TASK for METHODs.
LISTED_CONFUSIONS = ("METHOD for TASK", "METHOD for DATASET", "METHOD for TERM", "TASK for METHOD")


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def overlaps(a: dict, b: dict) -> bool:
    return a["start"] < b["end"] and b["start"] < a["end"]


def score(docs: list[dict], predicted: dict[str, list[dict]]) -> dict:
    """The measures of `predicted` (paper id → mention dicts, already thresholded) against `docs`."""
    counts: dict[str, Counter] = defaultdict(Counter)
    for doc in docs:
        gold = doc["entities"]
        mine = predicted[doc["id"]]
        for group in ("all", doc.get("era", "?")):
            c = counts[group]
            for m in mine:
                any_type = any(overlaps(m, g) for g in gold)
                same = any(overlaps(m, g) and g["label"] == m["label"] for g in gold)
                exact = any((m["start"], m["end"], m["label"]) == (g["start"], g["end"], g["label"]) for g in gold)
                for key in ("", m["label"]):
                    c[f"pred{key}"] += 1
                    c[f"typeless{key}"] += any_type
                    c[f"typed{key}"] += same
                c["exact"] += exact
                if any_type and not same:
                    wrong = Counter(g["label"] for g in gold if overlaps(m, g)).most_common(1)[0][0]
                    c[f"confusion:{m['label']} for {wrong}"] += 1
            for g in gold:
                for key in ("", g["label"]):
                    c[f"gold{key}"] += 1
                    c[f"found{key}"] += any(overlaps(m, g) and m["label"] == g["label"] for m in mine)
    def ratio(a: int, b: int) -> float | None:
        return round(a / b, 3) if b else None
    report = {}
    for group, c in counts.items():
        p, r = ratio(c["exact"], c["pred"]), ratio(c["exact"], c["gold"])
        row = {
            "mentions": c["pred"], "gold": c["gold"],
            "typeless_precision": ratio(c["typeless"], c["pred"]), "typed_precision": ratio(c["typed"], c["pred"]),
            "typed_partial_recall": ratio(c["found"], c["gold"]),
            "strict_f1": round(2 * p * r / (p + r), 3) if p and r else 0.0,
        }
        if group == "all":
            row["confusions"] = dict(sorted(((k.split(":", 1)[1], v) for k, v in c.items() if k.startswith("confusion:")), key=lambda kv: (-kv[1], kv[0])))
            row["per_type"] = {t: {"mentions": c[f"pred{t}"], "typed_precision": ratio(c[f"typed{t}"], c[f"pred{t}"]),
                                   "gold": c[f"gold{t}"], "typed_partial_recall": ratio(c[f"found{t}"], c[f"gold{t}"])} for t in TYPES}
        report[group] = row
    return report


def alone(docs: list[dict], recognizer: str | None, args: argparse.Namespace) -> int:
    """The recognizer's own spans on the clean, masked text, mapped back onto each abstract, scored."""
    from kg.extract.pipeline import recognizer_path
    from kg.text.clean import clean_text
    from kg.text.markup import mask_markup

    folder = recognizer_path(recognizer)
    if folder is None:
        raise SystemExit("--alone needs a recognizer")
    meta = json.loads((Path(folder) / "meta.json").read_text(encoding="utf-8"))
    cleans = [clean_text(d["text"]) for d in docs]
    texts = [mask_markup(c.text) for c in cleans]
    began = time.perf_counter()
    if meta.get("arch") == "transformer":
        from kg.extract.tagging import OnnxTagger

        found = [[(s.start, s.end, s.label) for s in tagged.spans] for tagged in OnnxTagger(folder).tag(texts)]
    else:
        import spacy

        model = spacy.load(folder)
        found = [[(e.start_char, e.end_char, e.label_) for e in doc.ents] for doc in model.pipe(texts)]
    seconds = time.perf_counter() - began
    predicted = {d["id"]: [{"start": a, "end": b, "label": label} for a, b, label in (( *c.span(s, e), lab) for s, e, lab in spans)]
                 for d, c, spans in zip(docs, cleans, found, strict=True)}
    report = score(docs, predicted)
    words = sum(len(d["text"].split()) for d in docs)
    if args.json:
        print(json.dumps({"gold": str(args.gold), "recognizer": folder, "alone": True, "words_per_second": round(words / seconds), "report": report}, indent=1))
        return 0
    a = report["all"]
    print(f"{args.gold} ({len(docs)} abstracts), recognizer alone {folder}: {words / seconds:,.0f} words/s")
    print(f"{'mentions':>8}  {'typeless P':>10}  {'typed P':>7}  {'typed R':>7}  {'strict F1':>9}")
    print(f"{a['mentions']:>8}  {a['typeless_precision']:>10}  {a['typed_precision']:>7}  {a['typed_partial_recall']:>7}  {a['strict_f1']:>9}")
    print("per type:", ", ".join(f"{t} P {v['typed_precision']} R {v['typed_partial_recall']} ({v['mentions']})" for t, v in a["per_type"].items()))
    print("per era:", ", ".join(f"{era} P {v['typed_precision']} R {v['typed_partial_recall']}" for era, v in sorted(report.items()) if era != "all"))
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gold", type=Path, default=ROOT / "bench" / "gold" / "dev.jsonl")
    parser.add_argument("--recognizer", default=None, help="a model folder, 'none' for rules alone (default: the shipped one)")
    parser.add_argument("--min-score", type=float, nargs="*", default=None)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--alone", action="store_true", help="the recognizer's spans alone (no rules, no scorer)")
    args = parser.parse_args(argv)

    from kg.concepts.find import resolve_corpus
    from kg.extract.pipeline import load_pipeline
    from kg.extract.runner import run_extraction
    from kg.extract.scoring import default_min_score
    from kg.model import DEFAULT_RECOGNIZER, Paper

    recognizer = DEFAULT_RECOGNIZER if args.recognizer is None else (None if args.recognizer == "none" else args.recognizer)
    docs = load(args.gold)
    if args.alone:
        return alone(docs, recognizer, args)
    papers = [Paper(id=d["id"], title=d.get("title") or "", abstract=d["text"], year=d.get("year")) for d in docs]
    load_pipeline(recognizer=recognizer)  # loaded (and cached) before the clock starts
    began = time.perf_counter()
    extractions, _ = run_extraction(papers, cache_dir=None, recognizer=recognizer)
    seconds = time.perf_counter() - began
    thresholds = args.min_score if args.min_score is not None else sorted({0.0, default_min_score()})
    words = sum(len(d["text"].split()) for d in docs)
    results = {}
    for threshold in thresholds:
        resolution = resolve_corpus(papers, extractions, min_score=threshold)
        predicted = {p.id: [m for m in map(asdict, found.mentions) if m.get("where", "abstract") == "abstract"] for p, found in zip(papers, resolution.entities, strict=True)}
        results[str(threshold)] = score(docs, predicted)
    if args.json:
        print(json.dumps({"gold": str(args.gold), "words_per_second": round(words / seconds), "by_min_score": results}, indent=1))
        return 0
    print(f"{args.gold} ({len(docs)} abstracts), recognizer {args.recognizer or 'shipped'}: {words / seconds:,.0f} words/s")
    print(f"{'min score':>9}  {'mentions':>8}  {'typeless P':>10}  {'typed P':>7}  {'typed R':>7}  {'strict F1':>9}")
    for s, report in results.items():
        a = report["all"]
        print(f"{float(s):>9.2f}  {a['mentions']:>8}  {a['typeless_precision']:>10}  {a['typed_precision']:>7}  {a['typed_partial_recall']:>7}  {a['strict_f1']:>9}")
    last = list(results)[-1]
    first = results[last]
    print("per type at min score", last, ":", ", ".join(f"{t} P {v['typed_precision']} R {v['typed_partial_recall']} ({v['mentions']})" for t, v in first["all"]["per_type"].items()))
    confusions = first["all"]["confusions"]
    print("type confusions at min score", last, ":", ", ".join(f"{k} {confusions.get(k, 0)}" for k in LISTED_CONFUSIONS),
          f"(all confusions {sum(confusions.values())})")
    print("per era:", ", ".join(f"{era} P {v['typed_precision']} R {v['typed_partial_recall']}" for era, v in sorted(first.items()) if era != "all"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
