"""Leaderboards: the result claims measured on one dataset, a table per metric, ranked in the
metric's direction (`kg.results.metrics.direction`), each row with the paper, the method credited,
the value and unit, the year and the sentence that states it.

A dataset is named by any of its labels, forgiven as ``kg sparql --bind`` forgives them (case,
plural, hyphens, acronyms and other alt labels: `kg.text.vocab.normalize_key`, the key of
``kg:key``); a claim counts for a dataset when it is linked to its concept. A name no dataset has
raises `LabelNotFound` with the closest labels (exit 25). Only claims scored at the threshold or more
(`kg.results.MIN_RESULT_SCORE` unless `min_score`) are ranked; the others stay in graph.json and the
RDF with their score, and the leaderboard says how many it leaves out. Absolute values are ranked
("76.1 % top-1 accuracy"); gains ("by 2.3 points") are listed apart, as they compare with nothing.

This module makes the tables from a networkx graph or from the claims of each dataset (`Index`),
for the page (`concept_tables`) and for `kg leaderboard`, which reads them from a built graph's
``leaderboard.idx`` (`kg.leaderboard`, written there by `kg build`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from kg.errors import LabelNotFound
from kg.results import MIN_RESULT_SCORE
from kg.results.metrics import Direction, direction
from kg.text.vocab import normalize_key

if TYPE_CHECKING:
    import networkx as nx

MAX_SUGGESTIONS = 5
SCORE_CUTOFF = 78  # rapidfuzz WRatio, as `kg sparql`'s label suggestions (kg.sparql.labels)
SENTENCE_CHARS = 400  # a longer sentence is cut around its value
NO_METRIC = "(no metric named)"

# A row of the index: these fields, in this order (a list per claim keeps the file small).
ROW_FIELDS = (
    "paper_id", "title", "year", "value", "number", "unit", "kind", "metric", "method", "method_concept", "proposed",
    "baseline", "task", "score", "sentence", "value_start", "value_end",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Row:
    """One claim on a leaderboard. `metric` and `task` are group ids of the dataset's entry
    (`Entry.metrics`, `Entry.tasks`); `sentence` is the sentence stating it (cut to about
    `SENTENCE_CHARS` around the value), the value at [value_start, value_end) of it."""

    paper_id: str
    title: str
    year: int | None
    value: str
    number: float
    unit: str | None
    kind: str
    metric: str
    method: str
    method_concept: str | None
    proposed: bool
    baseline: str | None
    task: str | None
    score: float
    sentence: str
    value_start: int
    value_end: int

    def to_list(self) -> list[Any]:
        return [getattr(self, name) for name in ROW_FIELDS]

    @classmethod
    def from_list(cls, values: list[Any]) -> Row:
        return cls(*values)


@dataclass(frozen=True, slots=True)
class Entry:
    """One dataset concept: its labels and keys, and (once read) its claims and the labels of the
    metrics and tasks they name (group id → (label, keys))."""

    concept: str
    label: str
    keys: tuple[str, ...]
    claims: int
    offset: int = 0
    length: int = 0


@dataclass(frozen=True, slots=True)
class Table:
    """One metric's leaderboard: ranked rows, and the gains reported (not ranked)."""

    metric: str
    direction: Direction | None  # None: kg cannot tell which way is better (sorted high to low)
    rows: tuple[Row, ...]
    improvements: tuple[Row, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric, "direction": self.direction,
            "rows": [{**asdict(row), "rank": n} for n, row in enumerate(self.rows, start=1)],
            "improvements": [asdict(row) for row in self.improvements],
        }  # fmt: skip


@dataclass(frozen=True, slots=True)
class Leaderboard:
    dataset: str  # the dataset's preferred label
    concepts: tuple[str, ...]  # the dataset concepts the name matched
    min_score: float
    tables: tuple[Table, ...]
    below: int  # claims on the dataset (and metric, task) scored under min_score, left out
    source: str  # "index" (leaderboard.idx) or "graph" (graph.json, the fallback)

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset, "concepts": list(self.concepts), "min_score": self.min_score,
            "below_min_score": self.below, "tables": [table.to_dict() for table in self.tables],
        }  # fmt: skip


# ---- rows from the graph --------------------------------------------------------------------


def cut_sentence(abstract: str, result: dict[str, Any], limit: int = SENTENCE_CHARS) -> tuple[str, int, int] | None:
    """The result's sentence, cut to about `limit` characters around the value when longer (an
    ellipsis marks a cut), and the value's place in it; None for offsets that do not fit the abstract."""
    try:
        start, end, sent_start, sent_end = (int(result[k]) for k in ("start", "end", "sent_start", "sent_end"))
    except (KeyError, TypeError, ValueError):
        return None
    if not (0 <= sent_start <= start < end <= sent_end <= len(abstract)):
        return None
    first, last = sent_start, sent_end
    if last - first > limit:  # keep the value in the middle of what is kept
        half = limit // 2
        first, last = max(first, start - half), min(last, end + half)
    lead = "…" if first > sent_start else ""
    tail = "…" if last < sent_end else ""
    return lead + abstract[first:last] + tail, len(lead) + start - first, len(lead) + end - first


def _label(nodes: Any, concept: Any, fallback: Any) -> str | None:
    data = nodes.get(f"concept:{concept}") if isinstance(concept, str) else None
    if data is not None and data.get("label"):
        return str(data["label"])
    return None if fallback is None else str(fallback)


def build_entries(graph: nx.DiGraph[str]) -> tuple[list[Entry], dict[str, dict[str, Any]]]:
    """Every dataset concept of the graph (sorted by id) and, for those with claims, their chunk:
    ``{"metrics": {id: [label, keys]}, "tasks": {id: [label, keys]}, "rows": [row lists]}``."""
    nodes = graph.nodes
    chunks: dict[str, dict[str, Any]] = {}
    for _key, data in graph.nodes(data=True):
        if data.get("kind") != "paper" or not data.get("results"):
            continue
        abstract = str(data.get("abstract") or "")
        year = data.get("year") if isinstance(data.get("year"), int) else None
        for result in data["results"]:
            dataset = result.get("dataset_concept") if isinstance(result, dict) else None
            if not isinstance(dataset, str) or nodes.get(f"concept:{dataset}", {}).get("type") != "DATASET":
                continue
            sentence = cut_sentence(abstract, result)
            number = result.get("number")
            if sentence is None or not isinstance(number, (int, float)) or not math.isfinite(number):
                continue
            chunk = chunks.setdefault(dataset, {"metrics": {}, "tasks": {}, "rows": []})
            metric = _group(chunk["metrics"], nodes, result.get("metric_concept"), result.get("metric"), "METRIC") or NO_METRIC
            task = _group(chunk["tasks"], nodes, result.get("task_concept"), result.get("task"), "TASK")
            method = _label(nodes, result.get("method_concept"), result.get("method")) or "(proposed)"
            baseline = _label(nodes, result.get("baseline_concept"), result.get("baseline"))
            score = result.get("score")
            chunk["rows"].append(
                Row(
                    str(data.get("id")), str(data.get("title") or data.get("id")), year, str(result.get("value")), float(number),
                    result.get("unit"), str(result.get("kind") or "absolute"), metric, method,
                    result.get("method_concept") if isinstance(result.get("method_concept"), str) else None, bool(result.get("proposed")),
                    baseline, task, float(score) if isinstance(score, (int, float)) and math.isfinite(score) else 0.0, *sentence,
                ).to_list()
            )  # fmt: skip
    for chunk in chunks.values():  # a stable order, whatever the graph's
        chunk["rows"].sort(key=lambda row: (row[0], row[15], row[16]))
    entries = []
    for node in sorted(graph.nodes):
        data = graph.nodes[node]
        if data.get("kind") != "concept" or data.get("type") != "DATASET":
            continue
        label = str(data.get("label") or data.get("id"))
        keys = _keys(label, data.get("alt_labels") or ())
        entries.append(Entry(str(data["id"]), label, keys, len(chunks.get(str(data["id"]), {}).get("rows", ()))))
    return entries, chunks


def _keys(label: str, alt_labels: Iterable[Any] = ()) -> tuple[str, ...]:
    """The look-up keys of a concept: its labels normalised as kg:key is (`kg.rdf.triples.lookup_keys`)."""
    return tuple(sorted({normalize_key(str(text)) for text in (label, *alt_labels)} - {""}))


def _group(groups: dict[str, list[Any]], nodes: Any, concept: Any, words: Any, kind: str) -> str | None:
    """The id of a metric's or task's group in a chunk (its concept, else its words' key), added once."""
    data = nodes.get(f"concept:{concept}") if isinstance(concept, str) else None
    if data is not None and data.get("type") == kind:
        if concept not in groups:
            label = str(data.get("label") or concept)
            groups[concept] = [label, list(_keys(label, data.get("alt_labels") or ()))]
        return str(concept)
    if not words:
        return None
    key = normalize_key(str(words))
    group = f"text:{key}"
    groups.setdefault(group, [str(words), [key]])
    return group


# ---- the datasets of a graph ------------------------------------------------------------------


class Index:
    """The datasets of a graph and a way to read each one's claims: from ``leaderboard.idx``
    ("index") or from graph.json itself ("graph"), `kg.leaderboard.open_index`."""

    def __init__(self, entries: list[Entry], read: Any, source: str) -> None:
        self.entries = entries
        self._read = read  # entry → its chunk
        self.source = source

    def chunk(self, entry: Entry) -> dict[str, Any]:
        if not entry.claims:
            return {"metrics": {}, "tasks": {}, "rows": []}
        chunk: dict[str, Any] = self._read(entry)
        return chunk


# ---- the leaderboard -----------------------------------------------------------------------------


def make_leaderboard(
    index: Index,
    dataset: str,
    *,
    metric: str | None = None,
    task: str | None = None,
    min_score: float | None = None,
) -> Leaderboard:
    """The leaderboard of `dataset` among the datasets of `index`: one table per metric (only
    `metric`'s when given), claims of `task` only when given, scored `min_score` or more.
    `kg.leaderboard.leaderboard` reads the index of a built graph for it."""
    threshold = MIN_RESULT_SCORE if min_score is None else float(min_score)
    key = normalize_key(dataset)
    matched = [entry for entry in index.entries if key and key in entry.keys]
    if not matched:
        raise LabelNotFound(
            f"no dataset has the label {dataset!r} (key {key!r})", label=dataset, suggestions=close_labels(key, ((e.label, e.keys) for e in index.entries))
        )
    matched.sort(key=lambda entry: (-entry.claims, entry.concept))
    chunks = [index.chunk(entry) for entry in matched]
    metrics: dict[str, list[Any]] = {}
    tasks: dict[str, list[Any]] = {}
    rows: list[Row] = []
    for chunk in chunks:
        metrics.update(chunk["metrics"])
        tasks.update(chunk["tasks"])
        rows.extend(Row.from_list(row) for row in chunk["rows"])
    if metric is not None:
        wanted = _matching(metric, metrics, "metric", f"on {matched[0].label}")
        rows = [row for row in rows if row.metric in wanted]
    if task is not None:
        wanted_tasks = _matching(task, tasks, "task", f"of the claims on {matched[0].label}")
        rows = [row for row in rows if row.task in wanted_tasks]
    kept = [row for row in rows if row.score >= threshold and row.metric != NO_METRIC]
    names = {group: str(label) for group, (label, _) in metrics.items()}
    tables = []
    def most_claims_first(group: str) -> tuple[int, str]:
        return -sum(row.metric == group for row in kept), names.get(group, group).lower()

    for group in sorted({row.metric for row in kept}, key=most_claims_first):
        label = names.get(group, group)
        way = metric_direction(label, metrics.get(group, [label, []])[1])
        mine = [row for row in kept if row.metric == group]
        absolute = [row for row in mine if row.kind == "absolute"]
        gains = sorted((row for row in mine if row.kind != "absolute"), key=lambda r: (-r.number, -r.score, r.paper_id))
        tables.append(Table(label, way, tuple(rank(absolute, way)), tuple(gains)))
    tasks_named = {group: str(label) for group, (label, _) in tasks.items()}
    return Leaderboard(
        dataset=matched[0].label, concepts=tuple(entry.concept for entry in matched), min_score=threshold,
        tables=tuple(_named(table, names, tasks_named) for table in tables),
        below=sum(1 for row in rows if row.score < threshold and row.metric != NO_METRIC), source=index.source,
    )  # fmt: skip


def metric_direction(label: str, keys: Iterable[str] = ()) -> Direction | None:
    """Which way a metric is better, by its label, else by any of its other labels' keys."""
    return direction(label) or next((way for way in map(direction, keys) if way), None)


PAGE_ROWS = 10  # rows of each table on the page
PAGE_TABLES = 6  # tables of each dataset or metric on the page


def concept_tables(graph: nx.DiGraph[str], min_score: float = MIN_RESULT_SCORE) -> dict[str, list[tuple[str, Direction | None, list[Row]]]]:
    """What the page shows of the leaderboards: for each dataset concept a table per metric, for
    each metric concept a table per dataset, as (heading, direction, best `PAGE_ROWS` rows), the
    tables with most rows first (`PAGE_TABLES` at most); absolute values scored `min_score` or more."""
    entries, chunks = build_entries(graph)
    labels = {entry.concept: entry.label for entry in entries}
    found: dict[str, dict[str, list[Row]]] = {}
    directions: dict[str, Direction | None] = {}
    for dataset, chunk in chunks.items():
        for values in chunk["rows"]:
            row = Row.from_list(values)
            if row.score < min_score or row.kind != "absolute" or row.metric == NO_METRIC:
                continue
            label, keys = chunk["metrics"][row.metric]
            directions.setdefault(row.metric, metric_direction(label, keys))
            named = Row(**{**asdict(row), "metric": str(label), "task": chunk["tasks"].get(row.task, [row.task])[0] if row.task else None})
            found.setdefault(dataset, {}).setdefault(row.metric, []).append(named)
            if not row.metric.startswith("text:"):  # a metric concept: its own tables, one per dataset
                found.setdefault(row.metric, {}).setdefault(dataset, []).append(named)
    out: dict[str, list[tuple[str, Direction | None, list[Row]]]] = {}
    for concept, groups in found.items():
        tables = []
        for group, rows in groups.items():
            way = directions.get(group) if concept in chunks else directions.get(concept)
            heading = rows[0].metric if concept in chunks else labels.get(group, group)
            tables.append((heading, way, rank(rows, way)[:PAGE_ROWS], len(rows)))
        tables.sort(key=lambda t: (-t[3], t[0].lower()))
        out[concept] = [(heading, way, rows) for heading, way, rows, _ in tables[:PAGE_TABLES]]
    return out


def _named(table: Table, metrics: dict[str, str], tasks: dict[str, str]) -> Table:
    """The table with each row's metric and task group ids replaced by their labels."""

    def named(row: Row) -> Row:
        return Row(**{**asdict(row), "metric": metrics.get(row.metric, row.metric), "task": tasks.get(row.task, row.task) if row.task else None})

    return Table(table.metric, table.direction, tuple(map(named, table.rows)), tuple(map(named, table.improvements)))


def rank(rows: list[Row], way: Direction | None) -> list[Row]:
    """Rows best first in the metric's direction (high to low when unknown); ties by score, then
    newest. Beside percentages a unitless value written as a fraction ranks as its percentage
    (0.76 F1 = 76 %); "1.0" is not one ("1.0 GFLOPs" above 96.2 % misled on a 35k-paper graph)."""
    percent = any(row.unit == "%" for row in rows)

    def level(row: Row) -> float:
        fraction = row.unit is None and row.value.startswith(("0.", ".")) and 0 <= row.number < 1
        return row.number * 100 if percent and fraction else row.number

    sign = 1 if way == "lower" else -1
    return sorted(rows, key=lambda row: (sign * level(row), -row.score, -(row.year or 0), row.paper_id, row.value_start))


def _matching(name: str, groups: dict[str, list[Any]], what: str, where: str) -> set[str]:
    """The groups (metrics or tasks of a dataset's claims) `name` is a label of; else LabelNotFound."""
    key = normalize_key(name)
    found = {group for group, (_, keys) in groups.items() if key in keys}
    if not found:
        raise LabelNotFound(
            f"no {what} {where} has the label {name!r} (key {key!r})", label=name,
            suggestions=close_labels(key, ((label, tuple(keys)) for label, keys in groups.values()), cutoff=0),
        )  # fmt: skip
    return found


def close_labels(key: str, labelled: Iterable[tuple[str, tuple[str, ...]]], *, cutoff: float = SCORE_CUTOFF) -> tuple[str, ...]:
    """Up to `MAX_SUGGESTIONS` labels whose keys are closest to `key` (rapidfuzz, on this path only)."""
    from rapidfuzz import fuzz, process

    by_key: dict[str, list[str]] = {}
    for label, keys in labelled:
        for one in keys:
            if label not in by_key.setdefault(one, []):
                by_key[one].append(label)
    choices = sorted(by_key)
    if not choices or not key:
        return ()
    compact = [choice.replace(" ", "") for choice in choices]  # "cifar10" is close to "cifar 10"
    scores: dict[str, float] = {}
    for query, pool, scorer in ((key, choices, fuzz.WRatio), (key.replace(" ", ""), compact, fuzz.ratio)):
        for _, score, n in process.extract(query, pool, scorer=scorer, limit=MAX_SUGGESTIONS * 2, score_cutoff=cutoff):
            scores[choices[n]] = max(score, scores.get(choices[n], 0.0))
    out: list[str] = []
    for choice in sorted(scores, key=lambda c: (-scores[c], len(c), c)):
        for label in by_key[choice]:
            if label not in out:
                out.append(label)
    return tuple(out[:MAX_SUGGESTIONS])


def iter_rows(board: Leaderboard) -> Iterator[tuple[Table, int, Row]]:
    """(table, rank, row) of every ranked row, table by table."""
    for table in board.tables:
        for n, row in enumerate(table.rows, start=1):
            yield table, n, row


