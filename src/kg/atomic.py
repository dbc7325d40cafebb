"""Atomic file output: write to a temporary file beside the target, fsync, rename.

A crash (or Ctrl-C) mid-write leaves the previous file, or none, never half a file.
`output_errors` turns what the operating system says about a failed write into the one
`OutputError` message every writer shares.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from kg.errors import OutputError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w", *, encoding: str | None = "utf-8") -> Iterator[IO]:
    """Open a temporary file next to `path`; on clean exit it replaces `path` atomically."""
    target = Path(path)
    binary = "b" in mode
    if target.exists() and not target.is_file():
        # A device or pipe (/dev/null, /dev/stdout, a FIFO): write straight to it; renaming a
        # temporary file over it would replace the device with a regular file.
        with open(target, mode, encoding=None if binary else encoding) as handle:
            yield handle
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        # mkstemp makes the file private (0600); give it the permissions open() would have.
        os.chmod(tmp_name, 0o666 & ~_umask())
        with os.fdopen(fd, mode, encoding=None if binary else encoding, newline=None if binary else "") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise


def write_text(path: str | os.PathLike[str], text: str) -> None:
    with atomic_open(path, "w") as handle:
        handle.write(text)


def write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    with atomic_open(path, "wb") as handle:
        handle.write(data)


@contextlib.contextmanager
def output_errors(path: str | os.PathLike[str]) -> Iterator[None]:
    """Re-raise an OSError from the block as ``OutputError("cannot write PATH: reason")``."""
    try:
        yield
    except OSError as error:
        raise OutputError(f"cannot write {path}: {error.strerror or error}") from error


def open_output(path: str | os.PathLike[str]) -> contextlib.AbstractContextManager[IO[bytes]]:
    """Binary output for an export: `atomic_open`, refusing a folder with a clear message."""
    if Path(path).is_dir():
        raise OutputError(f"cannot write {path}: it is a folder")
    return atomic_open(path, "wb")
