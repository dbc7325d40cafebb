"""`kg eval`: strict and partial-overlap precision/recall/F1 of extraction against gold spans."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from kg.cli.common import min_score_option, recognizer_option

if TYPE_CHECKING:
    from kg.training.evaluate import EvalReport


@click.command(name="eval")
@click.argument("gold", type=click.Path(dir_okay=False))
@click.option("--map", "mapping", type=click.Choice(["scierc", "scirex"]), default="scierc", show_default=True,
              help="The gold file's labels; both map the same way to kg types (Method, Task, Metric, Material→DATASET, OtherScientificTerm→TERM).")
@click.option("--json", "as_json", is_flag=True, help="Print the scores as JSON.")
@recognizer_option
@min_score_option
def eval_(gold: str, mapping: str, as_json: bool, recognizer: str | None, min_score: float | None) -> None:
    """Score kg's extraction against GOLD, a JSON Lines file of gold entity spans.

    Each line: {"id", "text", "entities": [{"start", "end", "label", "text"}]}.
    Reports per type and micro-averaged over METHOD, DATASET, METRIC and TASK; TERM
    (salient scientific terms, SciERC's OtherScientificTerm) is scored apart.
    """
    from kg.training.evaluate import evaluate_file

    report = evaluate_file(gold, recognizer=recognizer, min_score=min_score)  # every --map reads labels the same way
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2, sort_keys=True))
        return
    click.echo(render_report(report))


def render_report(report: EvalReport) -> str:
    lines = [f"{report.gold_file}: {report.documents} documents"]
    lines.append(f"{'type':<8} {'strict P':>9} {'R':>6} {'F1':>6}   {'partial P':>9} {'R':>6} {'F1':>6}   {'gold':>5} {'pred':>5}")
    for label in (*sorted(k for k in report.strict if k not in ("micro", "HARDWARE", "TERM")), "micro", "HARDWARE", "TERM"):
        s, p = report.strict[label], report.partial[label]
        lines.append(
            f"{label:<8} {s.precision:>9.3f} {s.recall:>6.3f} {s.f1:>6.3f}   {p.precision:>9.3f} {p.recall:>6.3f} {p.f1:>6.3f}"
            f"   {s.gold:>5} {s.predicted:>5}"
        )
    lines.append("(micro: over DATASET, METHOD, METRIC and TASK; HARDWARE and TERM are scored apart)")
    return "\n".join(lines)
