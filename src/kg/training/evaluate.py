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
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg.errors import DecodeFailed, GoldFormatError, InputNotFound, MalformedRecord, RecordTooLarge, UnsupportedFormat
from kg.ingest.jsonl import read_json_lines
from kg.ingest.records import MAX_ABSTRACT_CHARS, MAX_FIELD_CHARS, MAX_SYMBOL_RUN, MAX_WORD_CHARS
from kg.ingest.sources import decode, display_name, unreadable
from kg.model import DEFAULT_RECOGNIZER, ENTITY_TYPES, EntityType, Paper

if TYPE_CHECKING:
    from spacy.language import Language

# Gold label → kg type, for every gold file (SciERC's and SciREX's labels, and kg's own type names).
GOLD_LABELS: dict[str, EntityType] = {
    "Method": "METHOD", "Task": "TASK", "Metric": "METRIC", "Material": "DATASET", "OtherScientificTerm": "TERM",
    **{name: name for name in ENTITY_TYPES},  # gold written in kg's own types, HARDWARE included
}  # fmt: skip
EVAL_TYPES = ("METHOD", "DATASET", "METRIC", "TASK")  # micro-averaged over these
REPORTED_TYPES = (*EVAL_TYPES, "HARDWARE", "TERM")  # HARDWARE and TERM are scored and shown apart from the micro average

Span = tuple[int, int, str]  # start, end, kg type
_SURROGATE = re.compile("[\ud800-\udfff]")  # a lone surrogate escape in the JSON ("\\ud800"): not a character
_SYMBOL_RUN = re.compile(r"[^\w\s]{%d,}" % (MAX_SYMBOL_RUN + 1))  # as kg.ingest.records counts symbol runs


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


def load_gold(path: str | os.PathLike[str]) -> list[GoldDoc]:
    """Read a gold file. Problems raise one-line errors naming file:line, as corpus ingestion's:
    `GoldFormatError` for a line that is not a gold record (bad JSON, wrong JSON types, offsets
    outside the text), `DecodeFailed` for bytes that are not UTF-8 or a lone surrogate escape,
    `RecordTooLarge` for a text over ingestion's abstract limits, `InputNotFound` and
    `InputUnreadable` for a file that is missing or cannot be read."""
    source = Path(path)
    name = display_name(str(path))
    try:
        if not source.is_file():
            raise InputNotFound("no such gold file", path=name)
        data = source.read_bytes()
    except FileNotFoundError:  # removed since it was checked
        raise InputNotFound("no such gold file", path=name) from None
    except OSError as error:
        raise unreadable(error, name) from None
    try:
        text, _ = decode(data, name=name)
    except UnsupportedFormat as error:  # a PDF, a ZIP …: say what kg expected here
        kind = error.message.partition("this is ")[2].partition(", not a corpus file")[0] or "a binary file"
        raise UnsupportedFormat(f"this is {kind}, not a gold file (JSON Lines)", path=name) from None
    docs = []
    for item in read_json_lines(text, path=name):
        if isinstance(item, MalformedRecord):
            raise GoldFormatError(item.message.removeprefix(f"{name}:{item.line}: "), path=name, line=item.line)
        docs.append(_gold_doc(item.fields, default_id=f"{display_name(source.name)}:{item.line}", path=name, line=item.line))
    return docs


def _gold_doc(record: Mapping[str, Any], *, default_id: str, path: str, line: int) -> GoldDoc:
    where: dict[str, Any] = {"path": path, "line": line}
    _check_unicode(record, **where)
    text, entities = record.get("text"), record.get("entities")
    if not isinstance(text, str) or not isinstance(entities, list):
        raise GoldFormatError('expected an object with "text" (string) and "entities" (list)', **where)
    doc_id = record.get("id", default_id)
    if not isinstance(doc_id, str):
        raise GoldFormatError(f'"id" must be a string, not {_kind(doc_id)}', **where)
    _check_size("id", doc_id, MAX_FIELD_CHARS, **where)
    _check_size("text", text, MAX_ABSTRACT_CHARS, **where)
    if not text.strip():  # nothing to learn from or score (spaCy's training died on it: E923)
        raise GoldFormatError('"text" is empty', **where)
    spans = set()
    for number, entity in enumerate(entities, start=1):
        if not isinstance(entity, dict):
            raise GoldFormatError(f'entity {number}: expected an object with "start", "end" and "label", not {_kind(entity)}', **where)
        for key in ("start", "end", "label"):
            if key not in entity:
                raise GoldFormatError(f'entity {number}: no "{key}"', **where)
        start, end, label = entity["start"], entity["end"], entity["label"]
        for key, value in (("start", start), ("end", end)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise GoldFormatError(f'entity {number}: "{key}" must be an integer, not {_kind(value)}', **where)
        if not isinstance(label, str):
            raise GoldFormatError(f'entity {number}: "label" must be a string, not {_kind(label)}', **where)
        if start >= end:
            raise GoldFormatError(f"entity {number}: start {_number(start)} is not before end {_number(end)}", **where)
        if start < 0 or end > len(text):
            raise GoldFormatError(f"entity {number}: offsets {_number(start)}..{_number(end)} outside the text (length {len(text)})", **where)
        if "text" in entity:
            if not isinstance(entity["text"], str):
                raise GoldFormatError(f'entity {number}: "text" must be a string, not {_kind(entity["text"])}', **where)
            if text[start:end] != entity["text"]:
                raise GoldFormatError(f"entity text {_shorten(entity['text'])!r} does not match text[{start}:{end}]", **where)
        if label in GOLD_LABELS:
            spans.add((start, end, GOLD_LABELS[label]))
    return GoldDoc(doc_id, text, frozenset(spans))


def _check_unicode(record: Mapping[str, Any], *, path: str, line: int) -> None:
    """A lone surrogate ("\\ud800" in the JSON) is not a character: refused as ingestion refuses it."""
    for key, value in record.items():
        stack = [key, value]
        while stack:  # iterative: a deeply nested value must not exhaust the stack
            item = stack.pop()
            if isinstance(item, dict):
                stack.extend([*item.keys(), *item.values()])
            elif isinstance(item, list):
                stack.extend(item)
            elif isinstance(item, str) and (found := _SURROGATE.search(item)):
                what = "a field name" if _SURROGATE.search(key) else f"field {_shorten(key)!r}"
                raise DecodeFailed(
                    f"{what} holds a lone surrogate \\u{ord(found.group()):04x}, which is not a character "
                    "(a JSON \\u escape of a surrogate must pair a high one with a low one)",
                    path=path,
                    line=line,
                )


def _check_size(field_name: str, value: str, limit: int, *, path: str, line: int) -> None:
    """Ingestion's limits (`kg.ingest.records`): the length of a field and, for the text, its longest word and symbol run."""
    if len(value) > limit:
        raise RecordTooLarge(f"field {field_name!r} has {len(value):,} characters, over the limit of {limit:,}", path=path, line=line)
    if field_name != "text" or len(value) <= MAX_SYMBOL_RUN:
        return
    word = max(map(len, value.split()), default=0)
    if word > MAX_WORD_CHARS:
        raise RecordTooLarge(f"field 'text' has a word of {word:,} characters (no space), over the limit of {MAX_WORD_CHARS:,}", path=path, line=line)
    if run := max(map(len, _SYMBOL_RUN.findall(value)), default=0):
        raise RecordTooLarge(f"field 'text' has a run of {run:,} symbols (no letter, digit or space), over the limit of {MAX_SYMBOL_RUN:,}", path=path, line=line)


def _kind(value: object) -> str:
    """A JSON value's type for a message, with the value when it is short: 'a string ("9")'."""
    kind = {bool: "a boolean", str: "a string", float: "a decimal number", int: "an integer", list: "an array", dict: "an object"}.get(type(value), "null")
    if isinstance(value, (bool, str, int, float)):
        shown = json.dumps(value)  # ASCII, quoted, control characters escaped: one line
        if len(shown) <= 30:
            return f"{kind} ({shown})"
    return kind


def _number(value: int) -> str:
    digits = str(value)
    return digits if len(digits) <= 20 else f"{digits[:10]}… ({len(digits):,} digits)"


def _shorten(value: str, limit: int = 60) -> str:
    return value if len(value) <= limit else value[: limit - 1] + "…"


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
    path: str | os.PathLike[str], *, nlp: Language | None = None, recognizer: str | None = DEFAULT_RECOGNIZER, min_score: float | None = None
) -> EvalReport:
    """Run kg's extraction (and resolution) on the gold texts and score it; mentions scored below
    `min_score` are dropped as `kg build` drops them (None: kg's default threshold)."""
    from kg.concepts.find import resolve_corpus
    from kg.extract.papers import extract_papers
    from kg.extract.pipeline import check_recognizer

    check_recognizer(recognizer)
    gold = load_gold(path)
    if not gold:  # scores of nothing would read as a model that finds nothing
        raise GoldFormatError("no gold documents", path=display_name(str(path)))
    papers = [Paper(id=f"{i}:{doc.id}", title="", abstract=doc.text) for i, doc in enumerate(gold)]
    resolution = resolve_corpus(papers, list(extract_papers(papers, nlp=nlp, recognizer=recognizer)), min_score=min_score)
    predicted = [{(m.start, m.end, m.label) for m in entities.mentions} for entities in resolution.entities]
    return score(gold, predicted, gold_file=str(path))
