"""`kg build`: corpus → out/ (papers, entities, graph, Turtle, HTML)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from kg.cli.common import cache_options, input_format_option, min_score_option, progress_reporter, recognizer_option, workers_option
from kg.cli.stdout import StdoutWriteError
from kg.errors import OutputError
from kg.related_work.embed import DEFAULT_EMBEDDER, EMBEDDERS

if TYPE_CHECKING:
    from kg.builder import BuildSummary
    from kg.ingest.sources import Format

SKIPPED_SHOWN = 20  # the summary lists this many skipped records, then counts the rest


@click.command()
@click.argument("inputs", nargs=-1, required=True)
@click.option("-o", "--out", "out_dir", default="out", show_default=True, type=click.Path(file_okay=False), help="Output folder.")
@input_format_option("--format", "--input-format")
@click.option("--skip-invalid", is_flag=True, help="Go on past invalid records (bad JSON, empty abstract, …), listing how many were skipped and where.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar and no summary (a skipped-records warning still goes to stderr).")
@workers_option
@cache_options
@click.option("--dask", "dask_address", metavar="ADDRESS", default=None, help="Run extraction on a Dask cluster: a scheduler address (tcp://host:8786) or 'local'.")
@recognizer_option
@min_score_option
@click.option("--timings", is_flag=True, help="After the summary, the wall time of every stage (where a build spends its time).")
@click.option(
    "--embed",
    is_flag=True,
    help="Also embed every title + abstract (all-MiniLM-L6-v2 on ONNX Runtime, CPU) for semantic neighbours in `kg related`, the RDF and the page; needs the embed extra: pip install 'kg[embed]'.",
)
@click.option(
    "--embedder",
    type=click.Choice(list(EMBEDDERS)),
    default=None,
    help="How to embed (implies --embed): " + "; ".join(f"{e.name}: {e.about}" for e in EMBEDDERS.values()) + f"  [default: {DEFAULT_EMBEDDER}].",
)
def build(
    inputs: tuple[str, ...],
    out_dir: str,
    input_format: Format | None,  # one of click's choices: INPUT_FORMATS
    skip_invalid: bool,
    quiet: bool,
    workers: int | None,
    cache_dir: str | None,
    no_cache: bool,
    dask_address: str | None,
    recognizer: str | None,
    min_score: float | None,
    timings: bool,
    embed: bool,
    embedder: str | None,
) -> None:
    """Build the knowledge graph from INPUTS into OUT.

    INPUTS are files (seed text .txt, .jsonl, .json, .csv, .tsv, .bib, .ris; OpenAlex works
    as .json or .jsonl; a .txt holding RIS, BibTeX, JSON or a table, and other names, are
    recognised by content), folders (every supported file inside, recursively, sorted)
    or `-` for JSON Lines on stdin. --format chooses the format of every input. A progress
    bar shows on a terminal.
    """
    from kg.builder import BuildOptions
    from kg.builder import build as run_build

    options = BuildOptions(
        format=input_format,
        skip_invalid=skip_invalid,
        workers=workers,
        dask_address=dask_address,
        cache_dir=cache_dir,
        no_cache=no_cache,
        recognizer=recognizer,
        min_score=min_score,
        embed=embed or embedder is not None,
        embedder=embedder,
    )
    with progress_reporter(enabled=not quiet) as progress:
        summary = run_build(list(inputs), out_dir, options, stdin=sys.stdin, progress=progress)
    try:
        if not quiet:
            click.echo(render_summary(summary))
        elif summary.skipped:
            records = "1 invalid record" if len(summary.skipped) == 1 else f"{len(summary.skipped):,} invalid records"
            click.echo(f"Warning: skipped {records} (run without --quiet to see where)", err=True)
        if timings:
            click.echo(render_timings(summary))
        if sys.stdout is not None:
            sys.stdout.flush()
    except StdoutWriteError as error:  # the graph is published: say so, and that only the summary was lost
        raise OutputError(f"built {summary.out_dir.rstrip('/')}/, but cannot write the summary: {error.strerror}") from None


def render_summary(summary: BuildSummary) -> str:
    lines = [f"Built {summary.out_dir.rstrip('/')}/ in {summary.seconds:.1f} s"]
    merged = "1 duplicate abstract" if summary.duplicates == 1 else f"{summary.duplicates:,} duplicate abstracts"
    lines.append(f"  papers      {summary.papers:>8,}  ({merged} merged)")
    if summary.skipped:
        lines.append(f"  skipped     {len(summary.skipped):>8,}  invalid records:")
        lines.extend(f"    {where}" for where in summary.skipped[:SKIPPED_SHOWN])
        if len(summary.skipped) > SKIPPED_SHOWN:
            lines.append(f"    … and {len(summary.skipped) - SKIPPED_SHOWN:,} more")
    if summary.concepts_by_type:
        total = sum(summary.concepts_by_type.values())
        per_type = ", ".join(f"{label} {count:,}" for label, count in sorted(summary.concepts_by_type.items()))
        lines.append(f"  concepts    {total:>8,}  ({per_type})")
        lines.append(f"  edges       {summary.edges:>8,}")
        lines.append(f"  extraction  {summary.extracted:>8,}  papers run through spaCy, {summary.cached:,} from the cache")
    if summary.embedded is not None:
        lines.append(f"  embeddings  {summary.embedded:>8,}  papers encoded, {summary.papers - summary.embedded:,} from the cache")
    if summary.recomputed:
        lines.append(f"  warning     {summary.recomputed:>8,}  cache rows were damaged or did not fit their paper: computed again")
    for path in summary.outputs:
        lines.append(f"  wrote {path}")
    return "\n".join(lines)


def render_timings(summary: BuildSummary) -> str:
    """Each stage's wall time, and the memory of the kg process when it ended: held then, and
    the peak so far (its growth shows which stage sets the build's peak; workers not counted)."""
    width = max((len(name) for name, _ in summary.stages), default=0)
    memory = {name: (held, peak) for name, held, peak in summary.memory}
    lines = ["Stage times (wall seconds; memory of the kg process at the stage's end: held, peak so far):"]
    for name, seconds in summary.stages:
        held, peak = memory.get(name, (None, None))
        lines.append(f"  {name:<{width}}  {seconds:>9.2f}  {_gigabytes(held):>9}  {_gigabytes(peak):>9}")
    lines.append(f"  {'total':<{width}}  {summary.seconds:>9.2f}")
    lines.append(f"Reused from the previous build: {summary.reused:,} of {summary.fragments:,} Turtle fragments; SPARQL store {summary.store}.")
    return "\n".join(lines)


def _gigabytes(size: int | None) -> str:
    return "-" if size is None else f"{size / 1e9:.2f} GB"
