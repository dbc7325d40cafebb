"""The build's stages, timed and shown: one progress line each (`kg.model.Progress`).

`kg build` runs every stage inside `StageClock.stage`, which reports the stage as started and
finished, so the corpus-wide stages after extraction show on the terminal too, and records its
wall time (`BuildSummary.stages`, ``kg build --timings``). A stage that can count its items
calls the `report` it is given; the progress display turns counts into a rate and an ETA.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator

from kg.model import Progress

Report = Callable[[int], None]  # items done so far in the current stage
REPORT_EVERY = 500  # items between reports of the corpus-wide stages (papers): often enough for an ETA


class StageClock:
    def __init__(self, progress: Progress | None = None) -> None:
        self.progress = progress
        self.seconds: dict[str, float] = {}  # stage → wall seconds, in the order stages first ran

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
        report(shown)

    def timed(self) -> tuple[tuple[str, float], ...]:
        return tuple((name, round(seconds, 3)) for name, seconds in self.seconds.items())
