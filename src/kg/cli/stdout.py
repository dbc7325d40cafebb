"""Standard output that writes every byte or raises: one checked writer for every command.

A write to a nearly full disk can be short: ``write(2)`` takes what fits and says how much.
Python's own stdout drops the rest without a word (CPython's BufferedWriter returns the short
count, TextIOWrapper and click ignore it), so ``kg sparql … > /full/disk/q.csv`` exited 0 with
half the rows. `checked_stdout` puts a `CheckedWriter` under ``sys.stdout`` for the length of a
command: it writes again until every byte is out, so the next write meets the disk's error
(ENOSPC), which `kg.cli` reports as exit 18. Whatever a command writes, through ``click.echo``,
``print`` or ``sys.stdout.buffer``, goes through it.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import select
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer


class ReaderGone(Exception):  # noqa: N818 - what happened, not a failure of kg
    """The reader of standard output went away (``kg extract … | head``). Not an OSError, so
    that click's own handler of a broken pipe (exit 1) lets it through to `kg.cli`."""


class StdoutWriteError(OSError):
    """A write to standard output failed, whatever the cause (a full disk, a descriptor closed
    or open only for reading): the run's output is lost, exit 18."""


def _closed(_chunk: memoryview) -> int:
    """The write of a standard output that was closed before kg started (``kg … >&-``): Python
    leaves ``sys.stdout`` None, and descriptor 1 may be any file kg opens since, never written."""
    raise OSError(errno.EBADF, "standard output is closed")


class CheckedWriter(io.RawIOBase):
    """A raw binary stream over `write` (``os.write`` on a descriptor, or a binary stream's
    ``write``) whose every write puts out all its bytes or raises `OSError`: a short count is
    followed by a write of the rest, a sink that takes nothing is an error (EIO), a closed
    pipe is `ReaderGone`.
    After `abandon` it drops what it is given (output that failed is not retried at exit)."""

    def __init__(self, write: Callable[[memoryview], int | None], *, fd: int | None = None) -> None:
        super().__init__()
        self._write = write
        self._fd = fd
        self._abandoned = False

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        if self._fd is None:
            raise io.UnsupportedOperation("fileno")
        return self._fd

    def isatty(self) -> bool:
        return self._fd is not None and os.isatty(self._fd)

    def abandon(self) -> None:
        self._abandoned = True

    def write(self, data: ReadableBuffer, /) -> int:
        view = memoryview(data).cast("B")
        if self._abandoned:
            return len(view)
        done = 0
        while done < len(view):
            try:
                written = self._write(view[done:])
            except BrokenPipeError as error:
                raise ReaderGone(str(error)) from error
            except BlockingIOError:  # a non-blocking descriptor that is full: wait until it takes more
                written = None
            except StdoutWriteError:
                raise
            except OSError as error:  # EBADF (`1</dev/null`) as well as ENOSPC: all the run's output is lost
                reason = "standard output is not open for writing" if error.errno == errno.EBADF and self._fd is not None else error.strerror
                raise StdoutWriteError(error.errno, reason) from error
            if written is None:
                if self._fd is None:
                    raise OSError(errno.EAGAIN, "the output takes no more bytes for now")
                select.select([], [self._fd], [])
                continue
            if written <= 0:
                raise StdoutWriteError(errno.EIO, "the output took none of the bytes written to it")
            done += written
        return done


def _writer_for(stream: TextIO) -> CheckedWriter | None:
    """The checked writer under `stream` (``sys.stdout``): its descriptor where it has one, else
    its binary buffer (pytest's capture, click's test runner); None for a text-only stream."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is an OSError and a ValueError
        fd = None
    if isinstance(fd, int):
        descriptor = fd
        return CheckedWriter(lambda chunk: os.write(descriptor, chunk), fd=descriptor)
    write = getattr(getattr(stream, "buffer", None), "write", None)
    return CheckedWriter(write) if callable(write) else None


@contextlib.contextmanager
def checked_stdout() -> Iterator[CheckedWriter | None]:
    """Replace ``sys.stdout`` with a stream of the same encoding, error handler and line
    buffering over a `CheckedWriter` for the block; put the original back after it. The caller
    flushes ``sys.stdout`` inside the block to hear of a failed last write; what is left
    unwritten after an error is dropped."""
    original = sys.stdout
    if original is None:  # closed before kg started: a write is exit 18, never a traceback
        writer: CheckedWriter | None = CheckedWriter(_closed)
    else:
        writer = None if original.closed else _writer_for(original)
    if writer is None:
        yield None
        return
    with contextlib.suppress(OSError, ValueError, AttributeError):  # what was written before goes first (a reader already gone is heard of at the first write)
        original.flush()
    stream = io.TextIOWrapper(
        io.BufferedWriter(writer),
        encoding=getattr(original, "encoding", None) or "utf-8",
        errors=getattr(original, "errors", None) or "strict",
        newline=None if os.name == "nt" else "\n",  # as Python opens stdout
        line_buffering=bool(getattr(original, "line_buffering", False)),
        write_through=getattr(original, "write_through", False),
    )
    sys.stdout = stream
    try:
        yield writer
    finally:
        sys.stdout = original  # whatever replaced it meanwhile wrapped the stream closed below
        with contextlib.suppress(OSError, ReaderGone):  # reported by the caller already, or the run is ending on another error
            stream.flush()
        writer.abandon()
        stream.close()  # closes the writer, never the descriptor or buffer it writes to
        with contextlib.suppress(OSError, ValueError, AttributeError):
            original.flush()
