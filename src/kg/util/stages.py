"""The build's stages, timed and shown: one progress line each (`kg.model.Progress`).

`kg build` runs every stage inside `StageClock.stage`, which reports the stage as started and
finished, so the corpus-wide stages after extraction show on the terminal too, and records its
wall time (`BuildSummary.stages`, ``kg build --timings``) and the process's memory when it ended
(`BuildSummary.memory`): where a build's peak comes from. A stage that can count its items
calls the `report` it is given; the progress display turns counts into a rate and an ETA.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator

from kg.model import Progress

Report = Callable[[int], None]  # items done so far in the current stage
REPORT_EVERY = 500  # items between reports of the corpus-wide stages (papers): often enough for an ETA


def peak_rss() -> int | None:
    """The most memory this process has held so far (bytes; None where the OS does not say).
    Worker processes are not counted: they run extraction only."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # bytes on macOS, KiB elsewhere


def current_rss() -> int | None:
    """The memory this process holds now (bytes; Linux only, else None)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            pages = int(statm.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE")


class StageClock:
    def __init__(self, progress: Progress | None = None) -> None:
        self.progress = progress
        self.seconds: dict[str, float] = {}  # stage → wall seconds, in the order stages first ran
        self.memory: dict[str, tuple[int | None, int | None]] = {}  # stage → (held, peak so far) bytes at its end

    @contextlib.contextmanager
    def stage(self, name: str, total: int | None = None, *, reports_itself: bool = False) -> Iterator[Report]:
        """Time the block as stage `name` of `total` items (None: no count to show).
        `reports_itself`: the stage calls `progress` under this name on its own (only timed here)."""
        shown = total if total is not None else 1
        progress = None if reports_itself else self.progress

        def report(done: int) -> None:
            if progress is not None:
                progress(name, min(done, shown), shown)

        report(0)
        started = time.perf_counter()
        try:
            yield report
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - started
            self.memory[name] = (current_rss(), peak_rss())
        report(shown)

    def timed(self) -> tuple[tuple[str, float], ...]:
        return tuple((name, round(seconds, 3)) for name, seconds in self.seconds.items())

    def memory_used(self) -> tuple[tuple[str, int | None, int | None], ...]:
        """(stage, bytes held at its end, peak bytes so far), in `timed` order."""
        return tuple((name, *self.memory[name]) for name in self.seconds)
