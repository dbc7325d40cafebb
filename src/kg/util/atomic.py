"""Atomic file output: write to a temporary file beside the target, fsync, rename.

A crash (or Ctrl-C) mid-write leaves the previous file, or none, never half a file.
`output_errors` turns what the operating system says about a failed write into the one
`OutputError` message every writer shares (`OutputPermissionDenied` when permission is
lacking or the file system is read-only). `check_output_dir` and `make_output_dir` let a
command find an unusable output folder before it writes anything.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from kg.errors import OutputError, OutputPermissionDenied
from kg.util.places import STORE_DIR, STORE_LOCK, kg_place, output_folder

_PERMISSION = (errno.EACCES, errno.EPERM, errno.EROFS)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w", *, encoding: str | None = "utf-8") -> Iterator[IO[Any]]:
    """Open a temporary file next to `path`; on clean exit it replaces `path` atomically."""
    target = Path(path)
    binary = "b" in mode
    if target.exists() and not target.is_file():
        # A device or pipe (/dev/null, /dev/stdout, a FIFO): write straight to it; renaming a
        # temporary file over it would replace the device with a regular file.
        with open(target, mode, encoding=None if binary else encoding) as handle:
            yield handle
        return
    with output_errors(target):
        target.parent.mkdir(parents=True, exist_ok=True)
        # The pid in the name lets `kg build` tell a dead writer's leftover from a live write.
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.{os.getpid()}-", suffix=".tmp", dir=target.parent)
    try:
        # mkstemp makes the file private (0600); give it the permissions open() would have.
        os.chmod(tmp_name, 0o666 & ~_umask())
        with os.fdopen(fd, mode, encoding=None if binary else encoding, newline=None if binary else "") as handle:
            try:
                yield handle
            except OSError as error:
                if error.errno in _DISK_FULL:  # a write to `handle` in the caller's block
                    raise output_error(target, error) from error
                raise
            with output_errors(target):
                handle.flush()
                os.fsync(handle.fileno())
        with output_errors(target):
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


# errno values of a disk that cannot take more bytes (full, over quota, file too big, failing).
_DISK_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO}


@contextlib.contextmanager
def output_errors(path: str | os.PathLike[str]) -> Iterator[None]:
    """Re-raise an OSError from the block as ``OutputError("cannot write PATH: reason")``."""
    try:
        yield
    except OSError as error:
        raise output_error(path, error) from error


def output_error(path: str | os.PathLike[str], error: OSError) -> OutputError:
    kind = OutputPermissionDenied if error.errno in _PERMISSION else OutputError
    return kind(f"cannot write {path}: {error.strerror or error}")


def check_output_dir(path: str | os.PathLike[str]) -> None:
    """Raise an `OutputError` if `path` is not a folder that could be written (creating it if
    need be). Creates nothing, so it can run before any input is read."""
    target = Path(path)
    refuse_build_state(target, what="the output folder itself", folder=True)
    existing = target
    while not existing.exists() and existing != existing.parent:
        if existing.is_symlink():  # a dangling link: mkdir would fail on it
            raise OutputError(f"cannot write {path}: {existing} is a broken symbolic link")
        existing = existing.parent
    if not existing.is_dir():
        what = "it" if existing == target else str(existing)
        raise OutputError(f"cannot write {path}: {what} is not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        reason = "read-only file system" if _read_only(existing) else "permission denied"
        raise OutputPermissionDenied(f"cannot write {path}: {reason}" + ("" if existing == target else f" (in {existing})"))


def refuse_build_state(path: str | os.PathLike[str], *, what: str, folder: bool = False) -> None:
    """Raise `OutputError` if `path` (a file, or with `folder` a folder) is in a folder of kg's
    own (`kg.util.places.kg_place`): a ``.kg`` folder, where kg keeps an output folder's builds
    (a file written there would change a published build), or a SPARQL store folder (the next
    build replaces it whole); a file also in a cache folder (it may be one of the cache's files,
    which every build shares) or as the store's lock. A file that is a link into one is fine:
    writing replaces the link (out/graph.html), not what it points to."""
    place = kg_place(path if folder else Path(path).parent, caches=not folder)
    if place is not None:
        raise OutputError(f"cannot write {path}: it is inside {place}; name {what}")
    parent = Path(path).parent
    if not folder and Path(path).name == STORE_LOCK and output_folder(parent):
        raise OutputError(f"cannot write {path}: it is the lock of the SPARQL store {parent / STORE_DIR}; name another file")


def refuse_other_output(path: str | os.PathLike[str], own: str) -> None:
    """Raise `OutputError` if `path` is another output of a build (a link into ``.kg/current``
    not named `own`): `kg html -o out/graph.json` would replace the graph every reader needs."""
    try:
        target = os.readlink(path)
    except OSError:
        return
    if target.startswith(".kg/current/") and Path(path).name != own:
        raise OutputError(f"cannot write {path}: it is the build's own {Path(path).name}; name another file (e.g. {Path(path).with_name(own)})")


def _read_only(folder: Path) -> bool:
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False


def make_output_dir(path: str | os.PathLike[str]) -> None:
    """Create the folder `path` and make (then remove) a file in it: what `check_output_dir` could
    not tell (e.g. a folder under /proc, or root on a read-only mount) fails here, before any
    output file is replaced."""
    with output_errors(path):
        Path(path).mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=f".kg-probe.{os.getpid()}-", suffix=".tmp", dir=path)
        os.close(fd)
        os.unlink(probe)


def open_output(path: str | os.PathLike[str]) -> contextlib.AbstractContextManager[IO[bytes]]:
    """Binary output for an export: `atomic_open`, refusing a folder with a clear message."""
    if Path(path).is_dir():
        raise OutputError(f"cannot write {path}: it is a folder")
    return atomic_open(path, "wb")
