"""A shared/exclusive `flock` on a lock file, taken with a time limit.

Readers and writers of one file hold it shared; whoever must replace or remove the file takes
it exclusively, so the file is never moved from under a process that has it open. The lock
file itself is never removed: a process waiting on a removed one would lock nothing. Where
flock does not exist (Windows) or a file system refuses it, the lock locks nothing.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

if sys.platform == "win32":  # pragma: no cover - no flock; an open file cannot be moved there anyway
    fcntl = None
else:
    import fcntl

POLL_SECONDS = 0.05


class FileLock:
    """`share(wait)` / `own(wait)` return False when the lock was not free within `wait`
    seconds; `release()` drops it; `close()` too, for good. OSError if the lock file cannot be
    opened or made."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._fd: int | None = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)

    def share(self, wait: float) -> bool:
        return self._take(fcntl.LOCK_SH if fcntl else 0, wait)

    def own(self, wait: float) -> bool:
        return self._take(fcntl.LOCK_EX if fcntl else 0, wait)

    def release(self) -> None:
        if fcntl is not None and self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def _take(self, mode: int, wait: float) -> bool:
        if fcntl is None or self._fd is None:
            return True
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(self._fd, mode | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(POLL_SECONDS)
            except OSError:  # a file system without flock (some network mounts): nothing to coordinate with
                return True

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # releases the lock
            self._fd = None
