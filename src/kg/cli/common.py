"""Helpers shared by the CLI commands (formatting and progress only; no library logic)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

from kg.model import Progress



@contextlib.contextmanager
def progress_reporter(*, enabled: bool = True) -> Iterator[Progress | None]:
    """A rich progress bar on stderr when it is a terminal; None (no bar) when quiet or piped.

    Each stage gets its own bar the first time it reports; the bars vanish when the work ends,
    leaving only the summary. Stages report as often as they like: rich redraws at most ~10×/s.
    """
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as RichProgress

    tasks: dict[str, int] = {}
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with RichProgress(*columns, console=Console(stderr=True), transient=True) as bar:

        def report(stage: str, done: int, total: int | None) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)

        yield report
