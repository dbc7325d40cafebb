"""`kg leaderboard DATASET`: the result claims on a dataset, ranked per metric.

Reads ``GRAPH/leaderboard.idx`` (written by `kg build`) so it starts fast; never imports spaCy
or networkx (unless the index is missing or stale: then graph.json is read).
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING

import click

from kg.cli.common import graph_option

if TYPE_CHECKING:
    from kg.results.leaderboard import Leaderboard, Row, Table

WAYS = {"higher": "higher is better", "lower": "lower is better", None: "direction unknown: sorted high to low"}
SENTENCE_WIDTH = 160  # characters of the sentence shown under a row (the value stays in view)


def _score(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    if value is not None and not (math.isfinite(value) and 0 <= value <= 1):
        raise click.BadParameter(f"{value} is not a score from 0 to 1", ctx=ctx, param=param)
    return value


@click.command()
@click.argument("dataset")
@click.option("--metric", metavar="METRIC", help="Only this metric's table (any of its labels: F1, top-1 accuracy, mIoU, …).")
@click.option("--task", metavar="TASK", help="Only the claims made for this task.")
@graph_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text: every row with its paper, method, value, unit, year, score and sentence.")
@click.option("--min-score", type=float, default=None, callback=_score, metavar="S", help="Show the claims scored S or more (default: kg's threshold, chosen for precision on its gold claims).")
def leaderboard(dataset: str, metric: str | None, task: str | None, graph_dir: str, as_json: bool, min_score: float | None) -> None:
    """The result claims the abstracts state on DATASET, one table per metric,
    best first in the metric's direction (said when kg cannot tell it).

    Each row is a claim: the value and unit, the method credited (the
    paper's proposed method, or the baseline for a baseline's number), the
    paper and its year, and the sentence that states it, the value in
    [brackets]. DATASET, --metric and --task match any label of the concept
    whatever its case, plural or hyphens, acronyms included, as `kg sparql
    --bind` does; a name that matches nothing is reported with close labels
    (exit 25). Only absolute values are ranked; gains ("by 2.3 points") are
    listed under each table. Claims scored below the threshold are left out
    (how many is said): --min-score 0 shows them all.

    \b
    kg leaderboard ImageNet --metric "top-1 accuracy"
    kg leaderboard coco --json
    """
    from kg.leaderboard import leaderboard as board_of

    board = board_of(graph_dir, dataset, metric=metric, task=task, min_score=min_score)
    click.echo(json.dumps(board.to_dict(), ensure_ascii=False, indent=1) if as_json else render(board))


def render(board: Leaderboard) -> str:
    """The text output: a heading per metric, ranked rows with the sentence under each."""
    lines = [f"Leaderboard of {board.dataset} (claims scored {board.min_score:g} or more)"]
    if not board.tables:
        lines.append("  (no result claim on it" + (" at this score" if board.below else "") + ")")
    for table in board.tables:
        lines.append("")
        lines.extend(_table(table))
    if board.below:
        lines.append("")
        lines.append(f"{board.below} claim{'s' if board.below != 1 else ''} scored below {board.min_score:g} left out (--min-score 0 shows them)")
    return "\n".join(lines)


def _table(table: Table) -> list[str]:
    count = len(table.rows)
    lines = [f"{table.metric} ({WAYS[table.direction]}), {count} claim{'s' if count != 1 else ''}"]
    if table.rows:
        cells = [(str(n), _value(row), _method(row), str(row.year or ""), row.paper_id) for n, row in enumerate(table.rows, start=1)]
        header = ("#", "value", "method", "year", "paper")
        widths = [max(len(header[i]), *(len(c[i]) for c in cells)) for i in range(len(header))]
        lines.append("  " + "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip())
        for row, cell in zip(table.rows, cells, strict=True):
            lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(cell, widths, strict=True)).rstrip())
            lines.append("      " + _marked(row))
    if table.improvements:
        lines.append(f"  gains reported ({len(table.improvements)}, not ranked):")
        for row in table.improvements:
            lines.append(f"    {_value(row)}  {_method(row)}  {row.year or ''}  {row.paper_id}".rstrip())
            lines.append("      " + _marked(row))
    return lines


def _value(row: Row) -> str:
    unit = {"%": "%", "points": " points", "dB": " dB", "x": "x"}.get(row.unit or "", "")
    return f"{row.value}{unit}"


def _method(row: Row) -> str:
    return row.method if row.proposed or row.method.startswith("(") else f"{row.method} (baseline)"


def _marked(row: Row) -> str:
    """The sentence on one line, the value in brackets, cut to `SENTENCE_WIDTH` around it."""
    text = row.sentence[: row.value_start] + "[" + row.sentence[row.value_start : row.value_end] + "]" + row.sentence[row.value_end :]
    text = "".join(ch if ch.isprintable() else " " for ch in text)  # no control bytes echoed to a terminal
    start = row.value_start
    if len(text) > SENTENCE_WIDTH:
        first = max(0, min(start - SENTENCE_WIDTH // 2, len(text) - SENTENCE_WIDTH))
        text = ("…" if first else "") + text[first : first + SENTENCE_WIDTH] + ("…" if first + SENTENCE_WIDTH < len(text) else "")
    return f"“{' '.join(text.split())}”"
