"""Helpers shared by the CLI commands: options, progress, error text (no library logic).

The options every command that reads a built graph takes (``--graph``, ``--base``,
``--types``) are declared once here, so they parse and read the same everywhere.
`error_text` words a library error for the command line: the library states the problem,
the CLI adds the command or flag that deals with it.
"""

from __future__ import annotations

import contextlib
import math
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

import click

from kg.errors import CacheFolderUnusable, GraphDamaged, GraphNotFound, InputError, KgError, OutputLocked, QueryError
from kg.model import ENTITY_TYPES, Progress, parse_types
from kg.rdf.terms import DEFAULT_BASE

F = TypeVar("F", bound=Callable[..., object])
C = TypeVar("C", bound=str)


def refuse_output_file(path: str, *, own: str, what: str) -> None:
    """`OutputError` for an output file (`kg html -o`, `kg export -o`) that would replace what kg
    keeps: a file of a build, its store or the store's lock, or one in a cache folder (the one in
    use, chosen by KG_CACHE_DIR or the default, or any other holding a cache file)."""
    from pathlib import Path

    from kg.errors import OutputError
    from kg.extract.cache_location import resolve_cache_dir
    from kg.util.atomic import refuse_build_state, refuse_other_output
    from kg.util.places import within

    refuse_build_state(path, what=what)  # a build's own files are never rewritten
    location = resolve_cache_dir()
    if location is not None and within(Path(path).parent, location.path):
        raise OutputError(f"cannot write {path}: it is inside kg's cache folder {location.path} ({location.why}); name {what}")
    refuse_other_output(path, own)


@contextlib.contextmanager
def progress_reporter(*, enabled: bool = True) -> Iterator[Progress | None]:
    """A rich progress display on stderr when it is a terminal; None (no display) when quiet or piped.

    Each stage gets its own line the first time it reports: a bar, items done of the total,
    elapsed time and an estimate of the time left. Finished stages keep their line, so the
    display ends as a list of the stages with what each took, above the summary. Stages report
    as often as they like: rich redraws at most ~10×/s.
    """
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, TaskID, TextColumn, TimeElapsedColumn, TimeRemainingColumn
    from rich.progress import Progress as RichProgress

    tasks: dict[str, TaskID] = {}
    columns = (
        TextColumn("{task.description:<22}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        TextColumn("left"), TimeRemainingColumn(),
    )
    with RichProgress(*columns, console=Console(stderr=True), transient=False) as bar:

        def report(stage: str, done: int, total: int | None) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)

        yield report


def graph_option(command: F) -> F:
    """``--graph PATH``: the folder `kg build` wrote (or its graph.json), as ``graph_dir``."""
    return click.option(
        "--graph", "graph_dir", default="out", show_default=True, type=click.Path(),
        help="Folder holding graph.json (from `kg build`), or the file itself.",
    )(command)


def _base(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """An absolute http(s) IRI (data IRIs are made by appending to it)."""
    import re

    if not re.fullmatch(r"https?://[^\s<>\"{}|\\^`#?]+", value or ""):  # no fragment or query: IRIs are made by appending
        raise click.BadParameter(f"{value!r} is not an absolute http(s) IRI (e.g. {DEFAULT_BASE})", ctx=ctx, param=param)
    return value


def base_option(command: F) -> F:
    """``--base IRI``: where the data IRIs live; export, sparql and serve must agree on it."""
    return click.option(
        "--base", default=DEFAULT_BASE, show_default=True, metavar="IRI", callback=_base,
        help="Base of the data IRIs (papers, concepts, annotations); the same for export, sparql and serve.",
    )(command)


def _recognizer(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    from kg.model import DEFAULT_RECOGNIZER

    if value is None:
        return DEFAULT_RECOGNIZER
    return None if value == "none" else value


def cache_options(command: F) -> F:
    """``--cache DIR`` and ``--no-cache``, as ``cache_dir`` and ``no_cache`` (resolved by
    `kg.extract.cache_location.resolve_cache_dir`: --cache, else KG_CACHE_DIR, else the user cache folder)."""
    command = click.option("--no-cache", is_flag=True, help="Neither read nor write the cache.")(command)
    return click.option(
        "--cache", "cache_dir", type=click.Path(), default=None,  # a file there: kg.extract.cache_location says so, exit 16 like KG_CACHE_DIR
        help="Cache folder, shared by every build  [default: $KG_CACHE_DIR, else the user cache folder, e.g. ~/.cache/kg].",
    )(command)


def recognizer_option(command: F) -> F:
    """``--recognizer MODEL/`` (``--model`` is an alias): the entity recognizer, as ``recognizer``
    (a folder, the shipped model's marker by default, or None for ``none``: rules alone). The
    spaCy base pipeline is not chosen here: kg always runs its pinned English pipeline."""
    return click.option(
        "--recognizer", "--model", "recognizer", default=None, metavar="MODEL/", callback=_recognizer,
        help="Entity recognizer folder written by `kg train` (default: the one shipped with kg; 'none': rules alone). --model is an alias.",
    )(command)


def min_score_option(command: F) -> F:
    """``--min-score S``: drop mentions scored below S, as ``min_score`` (None: kg's default)."""
    return click.option(
        "--min-score", "min_score", type=click.FloatRange(0, 1), default=None, metavar="S",
        help="Drop mentions whose score (the chance a reader accepts the mention with its type) is below S; "
        "0 keeps every mention  [default: the threshold chosen on kg's gold dev set, in kg/models/mention-scorer.json].",
    )(command)


def chosen(value: str, choices: Sequence[C]) -> C:
    """`value`, which a ``click.Choice(choices)`` accepted, as the one of `choices` it is: click
    hands over a plain str, the library takes its Literal type."""
    for choice in choices:
        if value == choice:
            return choice
    raise click.BadParameter(f"{value!r} is not one of {', '.join(choices)}")


# kg.ingest.FORMATS (not imported: the commands that read no corpus would load ingestion; a test checks they agree)
INPUT_FORMATS = ("text", "jsonl", "json", "csv", "tsv", "bibtex", "ris", "openalex")


def input_format_option(*names: str) -> Callable[[F], F]:
    """``--format FORMAT`` (or the `names` given): read every input as that format, as ``input_format``."""
    return click.option(
        *names, "input_format", type=click.Choice(INPUT_FORMATS), default=None, metavar="FORMAT",
        help=f"Read every input as this format, whatever its name or content: {', '.join(INPUT_FORMATS)}  [default: by extension, else by content].",
    )


def workers_option(command: F) -> F:
    """``-j N``: extraction processes, as ``workers`` (None: the machine's cores, `kg.extract.runner.default_workers`)."""
    from kg.extract.runner import WORKER_MEMORY

    return click.option(
        "-j", "--workers", type=click.IntRange(min=1), default=None,
        help=f"spaCy processes for extraction, each about {WORKER_MEMORY / 2**30:.1f} GB (output is identical for any N)  "
        "[default: the machine's cores, fewer if memory is short].",
    )(command)


def _concept_types(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...] | None:
    try:
        return parse_types(values) or None  # nothing given (or only commas): no filter
    except ValueError as error:
        raise click.BadParameter(str(error), ctx=ctx, param=param) from None


def types_option(what: str) -> Callable[[F], F]:
    """``--types METHOD,TASK`` (repeatable, any case) as ``types``: a tuple, or None for all types.

    `what` says what the command does with them; the values read the same everywhere.
    """
    return click.option(
        "--types", multiple=True, callback=_concept_types, metavar="TYPE,…",
        help=f"{what}: {', '.join(ENTITY_TYPES)} (comma-separated or repeated, any case).",
    )


def error_text(error: KgError) -> str:
    """The text after ``Error:`` for a library error, with the flag or command that helps."""
    if isinstance(error, QueryError) and error.binding is not None:
        return f"--bind {error.binding}: {error.reason}" if error.binding else f"--bind: {error.reason}"
    if isinstance(error, GraphDamaged) and error.folder is not None:
        return f"{error.message}; rebuild it: `kg build INPUT… -o {error.folder}`"
    if isinstance(error, GraphNotFound) and error.folder is not None:
        return f"{error.message}; run `kg build INPUT… -o {error.folder}` first"
    if isinstance(error, CacheFolderUnusable):
        why = "from --cache" if error.location.source == "option" else error.location.why
        bypass = ", or run without one: --no-cache" if error.offer_no_cache else ""
        return f"cache folder {error.location.path} ({why}) {error.problem}; choose another with --cache DIR or KG_CACHE_DIR{bypass}"
    if isinstance(error, OutputLocked):
        return f"{error.message}; wait for it to finish, or build into another folder (-o DIR)"
    if isinstance(error, InputError) and error.skippable:
        return f"{error.message} (--skip-invalid skips invalid records)"
    return error.message


DEFAULT_TIMEOUT = 10.0  # as kg.sparql.serve.DEFAULT_TIMEOUT (not imported: it loads pyoxigraph)


MAX_TIMEOUT = 86_400.0  # a day: longer is "no limit" (0); inf and 1e300 overflowed select()


def _timeout(ctx: click.Context, param: click.Parameter, value: float) -> float:
    if not math.isfinite(value) or not 0 <= value <= MAX_TIMEOUT:
        raise click.BadParameter(f"{value} is not a number of seconds from 0 to {MAX_TIMEOUT:,.0f} (0: no limit)", ctx=ctx, param=param)
    return value


def timeout_option(command: F) -> F:
    """``--timeout SECONDS``: how long one query may run before its process is killed."""
    return click.option(
        "--timeout", default=DEFAULT_TIMEOUT, show_default=True, type=float, callback=_timeout, metavar="SECONDS",
        help=f"Stop a query that runs longer (its process is killed); 0: no limit; at most {MAX_TIMEOUT:,.0f}.",
    )(command)


def allow_service_option(command: F) -> F:
    """``--allow-service``: let queries use SERVICE (federated queries fetch any URL they name)."""
    return click.option(
        "--allow-service", is_flag=True,
        help="Allow SERVICE: the query then makes this machine fetch whatever URL it names (refused by default).",
    )(command)
