"""Score extraction against gold entity spans (``kg eval``): strict and partial-overlap P/R/F1.

Gold files are JSON Lines ``{"id", "text", "entities": [{"start", "end", "label", "text"}]}``
(the format of ``../shared/eval``). Gold labels map to kg types (Method→METHOD, Task→TASK,
Metric→METRIC, Material→DATASET, OtherScientificTerm→TERM; kg's own type names are read as
themselves, HARDWARE included); other gold labels (Generic) are left out. Scores are per type
and micro-averaged over METHOD, TASK, METRIC and DATASET (the SciERC benchmark's types);
HARDWARE and TERM are scored apart.

* strict: a prediction counts when start, end and type equal a gold span's;
* partial: a prediction counts when it overlaps a gold span of the same type (precision),
  and a gold span counts when some same-type prediction overlaps it (recall).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from kg.errors import GoldFormatError, InputNotFound
from kg.model import DEFAULT_RECOGNIZER, Paper

Mapping = Literal["scierc", "scirex"]
_COMMON = {"Method": "METHOD", "Task": "TASK", "Metric": "METRIC", "Material": "DATASET", "OtherScientificTerm": "TERM"}
_KG_NAMES = {name: name for name in ("METHOD", "TASK", "METRIC", "DATASET", "HARDWARE", "TERM")}  # gold written in kg's own types
LABEL_MAPS: dict[str, dict[str, str]] = {"scierc": {**_COMMON, **_KG_NAMES}, "scirex": {**_COMMON, **_KG_NAMES}, "train": {**_COMMON, **_KG_NAMES}}
EVAL_TYPES = ("METHOD", "DATASET", "METRIC", "TASK")  # micro-averaged over these
REPORTED_TYPES = (*EVAL_TYPES, "HARDWARE", "TERM")  # HARDWARE and TERM are scored and shown apart from the micro average

Span = tuple[int, int, str]  # start, end, kg type


@dataclass(frozen=True)
class GoldDoc:
    id: str
    text: str
    spans: frozenset[Span]


@dataclass(frozen=True)
class Scores:
    tp_pred: int  # predictions that count as correct
    predicted: int
    tp_gold: int  # gold spans found
    gold: int

    @property
    def precision(self) -> float:
        return self.tp_pred / self.predicted if self.predicted else 0.0

    @property
    def recall(self) -> float:
        return self.tp_gold / self.gold if self.gold else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def to_dict(self) -> dict[str, float | int]:
        return {
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "f1": round(self.f1, 4),
            "predicted": self.predicted,
            "gold": self.gold,
            "correct_predicted": self.tp_pred,
            "correct_gold": self.tp_gold,
        }


@dataclass(frozen=True)
class EvalReport:
    gold_file: str
    documents: int
    strict: dict[str, Scores] = field(default_factory=dict)  # per type and "micro"
    partial: dict[str, Scores] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return {
            "gold_file": self.gold_file,
            "documents": self.documents,
            "strict": {k: v.to_dict() for k, v in self.strict.items()},
            "partial": {k: v.to_dict() for k, v in self.partial.items()},
        }


def load_gold(path: str | os.PathLike[str], *, mapping: Mapping = "scierc") -> list[GoldDoc]:
    """Read a gold file; a malformed line raises `GoldFormatError` naming file:line."""
    labels = LABEL_MAPS[mapping]
    source = Path(path)
    if not source.is_file():
        raise InputNotFound("no such gold file", path=str(path))
    docs = []
    with source.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = {"path": str(path), "line": number}
            try:
                record = json.loads(line)
            except ValueError as error:
                raise GoldFormatError(f"not valid JSON ({error.msg})", **where) from None
            if not isinstance(record, dict) or not isinstance(record.get("text"), str) or not isinstance(record.get("entities"), list):
                raise GoldFormatError('expected an object with "text" (string) and "entities" (list)', **where)
            text = record["text"]
            spans = set()
            for entity in record["entities"]:
                try:
                    start, end, label = int(entity["start"]), int(entity["end"]), str(entity["label"])
                except (KeyError, TypeError, ValueError):
                    raise GoldFormatError('each entity needs integer "start", "end" and a "label"', **where) from None
                if not 0 <= start < end <= len(text):
                    raise GoldFormatError(f"entity offsets {start}..{end} outside the text (length {len(text)})", **where)
                if "text" in entity and text[start:end] != entity["text"]:
                    raise GoldFormatError(f"entity text {entity['text']!r} does not match text[{start}:{end}]", **where)
                if label in labels:
                    spans.add((start, end, labels[label]))
            docs.append(GoldDoc(str(record.get("id", f"{source.name}:{number}")), text, frozenset(spans)))
    return docs


def _overlaps(a: Span, b: Span) -> bool:
    return a[2] == b[2] and a[0] < b[1] and b[0] < a[1]


def score(gold: Sequence[GoldDoc], predicted: Sequence[Iterable[Span]], *, gold_file: str = "") -> EvalReport:
    """Strict and partial scores of `predicted` (one span collection per gold doc, same order)."""
    counts = {mode: {t: [0, 0, 0, 0] for t in REPORTED_TYPES} for mode in ("strict", "partial")}
    for doc, spans in zip(gold, predicted, strict=True):
        preds = {s for s in spans if s[2] in REPORTED_TYPES}
        for label in REPORTED_TYPES:
            g = [s for s in doc.spans if s[2] == label]
            p = [s for s in preds if s[2] == label]
            strict = counts["strict"][label]
            hits = len(set(g) & set(p))
            strict[0] += hits
            strict[1] += len(p)
            strict[2] += hits
            strict[3] += len(g)
            partial = counts["partial"][label]
            partial[0] += sum(any(_overlaps(x, y) for y in g) for x in p)
            partial[1] += len(p)
            partial[2] += sum(any(_overlaps(y, x) for x in p) for y in g)
            partial[3] += len(g)
    report: dict[str, dict[str, Scores]] = {}
    for mode, per_type in counts.items():
        table = {label: Scores(*values) for label, values in per_type.items()}
        table["micro"] = Scores(*(sum(per_type[t][i] for t in EVAL_TYPES) for i in range(4)))
        report[mode] = table
    return EvalReport(gold_file, len(gold), report["strict"], report["partial"])


def evaluate_file(
    path: str | os.PathLike[str], *, mapping: Mapping = "scierc", nlp=None, recognizer: str | None = DEFAULT_RECOGNIZER, min_score: float | None = None
) -> EvalReport:
    """Run kg's extraction (and resolution) on the gold texts and score it; mentions scored below
    `min_score` are dropped as `kg build` drops them (None: kg's default threshold)."""
    from kg.concepts.find import resolve_corpus
    from kg.extract.papers import extract_papers
    from kg.extract.pipeline import check_recognizer

    check_recognizer(recognizer)
    gold = load_gold(path, mapping=mapping)
    papers = [Paper(id=f"{i}:{doc.id}", title="", abstract=doc.text) for i, doc in enumerate(gold)]
    resolution = resolve_corpus(papers, list(extract_papers(papers, nlp=nlp, recognizer=recognizer)), min_score=min_score)
    predicted = [{(m.start, m.end, m.label) for m in entities.mentions} for entities in resolution.entities]
    return score(gold, predicted, gold_file=str(path))
