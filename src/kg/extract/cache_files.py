"""`kg cache info | prune | clear` as library calls: what a cache folder holds, and tidying it.

Each call is given the cache files to look at and their current versions
(``{"extract.sqlite": {...}, "embed.sqlite": {...}}``, `kg.builder.current_cache_versions`), so
a ``--cache`` folder that also holds other files loses none of them.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

from kg.errors import CacheError
from kg.extract.cache import BUSY_SECONDS, COMPANIONS, ExtractionCache, holders_lock, is_damage, lenient_text
from kg.extract.cache_location import CacheLocation, refuse_misplaced
from kg.util.filelock import FileLock

DAY = 86_400
CLEAR_WAIT = 2.0  # seconds `clear` waits for a build to close a file before it gives up


@dataclass(frozen=True)
class CacheFileReport:
    """One cache file: its size on disk (with SQLite's side files), its entries per version
    (None: not known, a row from before kg recorded versions) and this kg's current versions.
    `problem`: why it could not be read; `damaged`: whether that is damage the next build sets
    aside (else, say a read-only folder, the build stops on it too); `exists`: False if absent."""

    name: str
    path: Path
    exists: bool
    size: int
    by_version: dict[str | None, int]
    current: tuple[str, ...]
    problem: str | None = None
    damaged: bool = False

    @property
    def entries(self) -> int:
        return sum(self.by_version.values())


@dataclass(frozen=True)
class CacheReport:
    location: CacheLocation
    files: tuple[CacheFileReport, ...]
    set_aside: tuple[Path, ...]  # damaged files builds moved aside (`kg cache clear` removes them)

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files) + sum(_size_of(p) for p in self.set_aside)


@dataclass(frozen=True)
class PruneReport:
    dropped: dict[str, dict[str | None, int]]  # file name → version → entries dropped
    freed: int  # bytes


def _size_of(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def file_size(path: Path) -> int:
    """A database's bytes on disk, with its side files."""
    return sum(_size_of(Path(f"{path}{suffix}")) for suffix in ("", *COMPANIONS))


def _set_aside(folder: Path, names: Collection[str]) -> tuple[Path, ...]:
    if not folder.is_dir():
        return ()
    return tuple(sorted(p for p in folder.iterdir() if any(p.name.startswith(f"{name}.damaged-") for name in names)))


def _entries(path: Path) -> dict[str | None, int]:
    """Entries per version, read without changing the file (an old-schema file is not migrated)."""
    db = sqlite3.connect(path, timeout=BUSY_SECONDS)
    db.text_factory = lenient_text
    try:
        columns = {row[1] for row in db.execute("PRAGMA table_info(extraction)")}
        if not columns:
            raise sqlite3.DatabaseError("it has no extraction table")
        if "version" not in columns:  # kg before versions were recorded
            return {None: db.execute("SELECT COUNT(*) FROM extraction").fetchone()[0]}
        return dict(db.execute("SELECT version, COUNT(*) FROM extraction GROUP BY version").fetchall())
    finally:
        db.close()


def cache_report(location: CacheLocation, current: Mapping[str, Collection[str]]) -> CacheReport:
    """What the cache folder holds (nothing is created or changed)."""
    refuse_misplaced(location)
    files = []
    for name, versions in current.items():
        path = location.path / name
        if not path.is_file():
            files.append(CacheFileReport(name, path, False, 0, {}, tuple(sorted(versions))))
            continue
        try:
            by_version, problem, damaged = _entries(path), None, False
        except sqlite3.DatabaseError as error:
            by_version, problem, damaged = {}, str(error), is_damage(error)
        files.append(CacheFileReport(name, path, True, file_size(path), by_version, tuple(sorted(versions)), problem, damaged))
    return CacheReport(location, tuple(files), _set_aside(location.path, list(current)))


def prune_cache(location: CacheLocation, current: Mapping[str, Collection[str]], *, older_than_days: int | None = None) -> PruneReport:
    """Drop the entries of versions not in `current` (entries of unknown version stay) and, with
    `older_than_days`, those not written or used in that many days; then compact each file."""
    refuse_misplaced(location)
    written_before = None if older_than_days is None else int(time.time()) - older_than_days * DAY
    dropped: dict[str, dict[str | None, int]] = {}
    freed = 0
    for name, versions in current.items():
        path = location.path / name
        if not path.is_file():
            continue
        before = file_size(path)
        try:
            with ExtractionCache(location.path, validate=None, file_name=name) as cache:
                dropped[name] = cache.drop(keep_versions=set(versions), written_before=written_before)
                cache.compact()
        except sqlite3.DatabaseError as error:  # busy past the timeout, read-only, damaged midway
            raise CacheError(f"cannot prune cache {path}: {error}") from error
        freed += max(0, before - file_size(path))
    return PruneReport(dropped, freed)


def clear_cache(location: CacheLocation, names: Collection[str]) -> tuple[list[Path], int]:
    """Remove the cache files `names` (with their side files and the damaged files set aside):
    the paths removed and the bytes freed. `CacheError` if a build has one open."""
    refuse_misplaced(location)
    removed: list[Path] = []
    freed = 0
    for name in names:
        path = location.path / name
        if not path.exists():
            continue
        try:
            lock = FileLock(holders_lock(path))
        except OSError as error:
            raise CacheError(f"cannot clear cache {path}: {error.strerror or error}") from error
        try:
            if not lock.own(CLEAR_WAIT):
                raise CacheError(f"cache {path} is in use by another kg process (a build?); nothing of it was removed")
            for suffix in ("", *COMPANIONS):
                target = Path(f"{path}{suffix}")
                size = _size_of(target)
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(target)
                    removed.append(target)
                    freed += size
        except OSError as error:
            raise CacheError(f"cannot remove {path}: {error.strerror or error}") from error
        finally:
            lock.close()
    for aside in _set_aside(location.path, names):
        size = _size_of(aside)
        try:
            os.unlink(aside)
        except FileNotFoundError:
            continue
        except OSError as error:
            raise CacheError(f"cannot remove {aside}: {error.strerror or error}") from error
        removed.append(aside)
        freed += size
    return removed, freed
