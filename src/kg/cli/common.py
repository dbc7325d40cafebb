"""Helpers shared by the CLI commands (formatting and progress only; no library logic)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator

# A progress callback: (stage description, items done, items total or None).
Progress = Callable[[str, int, "int | None"], None]


@contextlib.contextmanager
def progress_reporter(*, enabled: bool = True) -> Iterator[Progress | None]:
    """A rich progress bar on a terminal (stderr); nothing when quiet or not a terminal."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress as RichProgress, TextColumn, TimeElapsedColumn

    tasks: dict[str, int] = {}
    with RichProgress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), transient=True) as bar:

        def report(stage: str, done: int, total: int | None) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)

        yield report
