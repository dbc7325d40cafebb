"""`kg extract`: entities of each paper, as JSON Lines (default) or a table for people."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from kg.cli.common import cache_options, chosen, input_format_option, min_score_option, recognizer_option, workers_option


@click.command()
@click.argument("inputs", nargs=-1, required=True)
@click.option("--format", "fmt", type=click.Choice(["jsonl", "table"]), default="jsonl", show_default=True, help="Output format.")
@input_format_option("--input-format")
@click.option("--skip-invalid", is_flag=True, help="Go on past malformed records; how many were skipped, and where, goes to stderr after the output.")
@workers_option
@cache_options
@recognizer_option
@min_score_option
def extract(
    inputs: tuple[str, ...], fmt: str, input_format: str | None, skip_invalid: bool, workers: int | None, cache_dir: str | None, no_cache: bool,
    recognizer: str | None, min_score: float | None,
) -> None:
    """Extract methods, datasets, hardware, metrics and tasks from the abstracts in INPUTS.

    INPUTS are files or folders (as for `kg build`) or `-` for JSON Lines on stdin;
    --input-format reads every input as one format (--format is the output's). Per
    paper one JSON line {"id", "title", "entities": [{"start", "end", "text", "label",
    "concept", "role", "source", "score", "where"}]}; offsets index the abstract as given,
    or the title for a mention "where": "title" (the title is read unless the abstract opens
    with it or kg derived it from the abstract).
    Like `kg build`, it reads and fills the shared cache (--cache, KG_CACHE_DIR or the user
    cache folder; --no-cache: neither).
    """
    from kg.concepts.find import entities_record, find_concepts
    from kg.extract.cache_location import check_cache_dir, resolve_cache_dir
    from kg.extract.runner import default_workers
    from kg.ingest import FORMATS, read_corpus

    cache = resolve_cache_dir(cache_dir, no_cache=no_cache)
    if cache is not None:
        check_cache_dir(cache)
    given = chosen(input_format, FORMATS) if input_format is not None else None
    corpus = read_corpus(list(inputs), skip_invalid=skip_invalid, stdin=sys.stdin, format=given)
    found = find_concepts(corpus.papers, cache_dir=None if cache is None else cache.path, workers=workers or default_workers(), recognizer=recognizer, min_score=min_score)
    records = [entities_record(paper, entities) for paper, entities in zip(corpus.papers, found.resolution.entities, strict=True)]
    if fmt == "jsonl":
        for record in records:
            click.echo(json.dumps(record, ensure_ascii=False))
    else:
        _print_tables(records)
    if corpus.skipped:  # after the records, where it is seen: how many were left out, and where
        click.echo(skipped_warning(corpus.skipped), err=True)


def skipped_warning(skipped: tuple[str, ...]) -> str:
    """``Warning: skipped 2 invalid records:`` and where each was (the first `SKIPPED_SHOWN`)."""
    from kg.cli.build import SKIPPED_SHOWN

    records = "1 invalid record" if len(skipped) == 1 else f"{len(skipped):,} invalid records"
    lines = [f"Warning: skipped {records}:", *(f"  {where}" for where in skipped[:SKIPPED_SHOWN])]
    if len(skipped) > SKIPPED_SHOWN:
        lines.append(f"  … and {len(skipped) - SKIPPED_SHOWN:,} more")
    return "\n".join(lines)


def _print_tables(records: list[dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    for record in records:
        table = Table(title=f"{record['title']}  [dim]({record['id']})[/dim]", title_justify="left", show_lines=False)
        for column in ("text", "type", "role", "concept", "source", "score"):
            table.add_column(column, justify="right" if column == "score" else "left")
        for entity in record["entities"]:
            role = "[bold green]proposed[/bold green]" if entity["role"] == "proposed" else "used"
            text = entity["text"] if entity["where"] == "abstract" else f"{entity['text']} [dim](title)[/dim]"
            table.add_row(text, entity["label"], role, entity["concept"], entity["source"], f"{entity['score']:.2f}")
        console.print(table)
