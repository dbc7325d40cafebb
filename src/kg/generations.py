"""The output folder as generations: a build is a transaction, readers see one build whole.

Layout of an output folder ``out/`` (what `kg build -o out/` names)::

    out/graph.json -> .kg/current/graph.json     every output name is a stable symbolic link
    out/.kg/current -> gen-<id>                  the one pointer a build switches
    out/.kg/gen-<id>/graph.json, graph.ttl, …    one complete build (id: 16 hex digits of
                                                 graph.json's content id, `-2`… if taken)
    out/.kg/build-<pid>-<hex>/                   a build being written (not yet a generation)
    out/.kg/lock                                 held (flock) by the build writing out/
    out/graph.oxigraph/                          the SPARQL store: outside generations, stamped by content
                                                 (the extraction cache is the user's, `kg.extract.cache_location`)

A build writes every file into its ``build-…`` folder, renames it ``gen-<id>`` and replaces
``current`` with a new symbolic link (`os.replace`: atomic), so a reader of ``out/graph.json``
and ``out/graph.ttl`` sees both from the old build or both from the new one, and a build
killed at any point leaves the previous generation in place. kg's own readers resolve the
pointer once (`resolve`) and read every file from that generation. After the switch every
generation but the new one and the one it replaced is removed: the replaced one stays until the
next build, so a reader that resolved it just before the switch can finish. What a killed
build leaves (``build-…`` folders, temporary links, unswitched generations, temporary files of
dead processes beside the links) is removed by the next build, under the lock.

An output folder of an older kg (plain files, no ``.kg``) is migrated in place: its files are
hard-linked into a first generation, the pointer set to it and each plain file replaced by its
link (each step shows the same old content), then the new build is switched in as usual.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import shutil
import time
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from kg.errors import OutputError, OutputLocked, UserFileSetAside
from kg.graph import GRAPH_FILE, content_id
from kg.util.atomic import output_errors
from kg.util.places import KG_DIR, refuse_linked_state

CURRENT = "current"
LOCK = "lock"
_GEN, _BUILD = "gen-", "build-"
# atomic_open's temporary names: ".NAME.<pid>-<random>.tmp"; older kg wrote ".NAME.<random>.tmp".
_TEMP = re.compile(r"^\.(?P<name>.+)\.(?:(?P<pid>\d+)-)?[a-z0-9_]{8}\.tmp$")
# kg.rdf.store's working folders: ".NAME.<pid>.tmp" (being built) and ".NAME.<pid>.old" (swapped out).
_STORE_TEMP = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.(?:tmp|old)$")


@dataclass(frozen=True)
class GraphFolder:
    """A built folder resolved once: `graph` (graph.json) and its companions in `folder`, the
    caches in `root`. For a folder without generations (older kg, a graph.json saved by hand)
    `folder` is `root`."""

    root: Path  # the output folder (graph.oxigraph/ and other caches live here)
    folder: Path  # where this generation's files are
    graph: Path  # the graph.json to read

    def file(self, name: str) -> Path:
        return self.folder / name


def resolve(path: str | os.PathLike[str] | GraphFolder) -> GraphFolder:
    """Where to read the graph named by `path` (a folder, or its graph.json): the generation
    ``.kg/current`` points at, read once, when ``PATH/graph.json`` is kg's link; else the folder."""
    if isinstance(path, GraphFolder):
        return path
    given = Path(path)
    if given.is_dir() or not given.suffix:
        root, graph = given, given / GRAPH_FILE
    else:
        root, graph = given.parent, given
    if root.parent.name == KG_DIR and root.name.startswith(_GEN):  # a generation named directly
        return GraphFolder(root.parent.parent, root, graph)
    if root.parent.name == KG_DIR and root.name == CURRENT:  # the pointer named: read it once
        root, graph = root.parent.parent, root.parent.parent / graph.name
    try:
        linked = os.readlink(graph) == f"{KG_DIR}/{CURRENT}/{graph.name}"
        generation = os.readlink(root / KG_DIR / CURRENT) if linked else ""
    except OSError:
        generation = ""  # a plain file, or no generation yet (readers then find no graph)
    if not generation.startswith(_GEN) or "/" in generation:
        return GraphFolder(root, root, graph)
    folder = root / KG_DIR / generation
    return GraphFolder(root, folder, folder / graph.name)


def current_generation(out: str | os.PathLike[str]) -> str | None:
    """The name of the generation ``out/.kg/current`` points at (None if there is none)."""
    try:
        return os.readlink(Path(out) / KG_DIR / CURRENT)
    except OSError:
        return None


def current_folder(out: str | os.PathLike[str]) -> Path | None:
    """The current generation's folder (None if there is none): what a build may reuse."""
    name = current_generation(out)
    if name is None or not name.startswith(_GEN) or "/" in name:
        return None
    folder = Path(out) / KG_DIR / name
    return folder if folder.is_dir() else None


def check_names(out: str | os.PathLike[str], names: Iterable[str]) -> None:
    """Raise `OutputError` if a folder sits where an output link must go (found before a build
    spends its time; `Generation.publish` checks again)."""
    for name in names:
        path = Path(out) / name
        if path.is_dir() and not path.is_symlink():
            raise OutputError(f"cannot write {path}: it is a folder")


# -- the lock ------------------------------------------------------------------------------


class OutputLock:
    """An exclusive, non-blocking `flock` on ``out/.kg/lock`` for the duration of a build.

    A second build into the same folder fails at once (`OutputLocked`) instead of waiting: a
    build takes minutes, and two builds racing for one folder is a mistake worth reporting.
    The lock file is never removed (removing a lock file races with its next taker); the kernel
    releases the lock when the process ends, however it ends."""

    def __init__(self, out: str | os.PathLike[str]) -> None:
        self.out = Path(out)
        self.path = self.out / KG_DIR / LOCK
        self._fd: int | None = None

    def acquire(self) -> None:
        if self._fd is not None:
            return
        try:
            import fcntl
        except ImportError:  # Windows: builds are not locked there
            return
        refuse_linked_state(self.out)
        with output_errors(self.out):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            refuse_linked_state(self.out)  # made just now by another process, as a link
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0), 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            os.close(fd)
            if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise OutputError(f"cannot lock {self.path}: {error.strerror or error}") from error
            raise OutputLocked(f"{str(self.out).rstrip('/')}/ is being built by another kg build (which holds {self.path})") from None
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> OutputLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


# -- writing a generation --------------------------------------------------------------------


def _fsync_dir(path: Path) -> None:
    """Make renames in `path` durable (a power cut after the switch must not undo it)."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def _symlink_over(target: str, link: Path, staging: Path) -> None:
    """Point `link` at `target` atomically: a new link made in `staging`, renamed over `link`."""
    tmp = staging / f"link-{os.getpid()}-{secrets.token_hex(4)}.tmp"
    os.symlink(target, tmp)
    try:
        os.replace(tmp, link)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def clean_stale(out: Path, names: Iterable[str]) -> list[Path]:
    """Remove what killed builds left (call under the lock): ``build-…`` folders and temporary
    links in ``.kg/``, and beside the links the temporary files of `names` (and any other
    ``.NAME.<pid>-….tmp``) whose writing process is gone. Returns what was removed."""
    removed: list[Path] = []
    state = refuse_linked_state(out)  # entries of another folder are never removed through a link
    current = state / CURRENT
    if current.is_dir() and not current.is_symlink():  # a copy that followed the link: adopt it
        adopted = state / f"{_GEN}adopted-{secrets.token_hex(4)}"
        os.rename(current, adopted)
        _symlink_over(adopted.name, current, state)
    for entry in state.iterdir() if state.is_dir() else ():
        if entry.name.startswith(_BUILD) or entry.name.endswith(".tmp"):
            _remove(entry)
            removed.append(entry)
    known = set(names)
    for entry in out.iterdir():
        store_temp = _STORE_TEMP.match(entry.name)
        if store_temp is not None and entry.is_dir() and not entry.is_symlink() and not _alive(int(store_temp.group("pid"))):
            _remove(entry)  # a store folder a killed build was making or swapping out
            removed.append(entry)
            continue
        match = _TEMP.match(entry.name)
        if match is None or not entry.is_file() or entry.is_symlink():
            continue
        pid = match.group("pid")
        if (pid is not None and not _alive(int(pid))) or (pid is None and match.group("name") in known):
            _remove(entry)
            removed.append(entry)
    return removed


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


class Generation:
    """A build being written into ``out/.kg/build-…``; `publish` makes it the current one.
    Use as a context manager: leaving it without `publish` (an error, Ctrl-C) removes the folder."""

    def __init__(self, out: str | os.PathLike[str]) -> None:
        self.out = Path(out)
        self.state = refuse_linked_state(self.out)
        with output_errors(self.out):
            self.state.mkdir(parents=True, exist_ok=True)
            self.folder = self.state / f"{_BUILD}{os.getpid()}-{secrets.token_hex(4)}"
            self.folder.mkdir()
        self.name: str | None = None

    def __enter__(self) -> Generation:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.name is None:
            shutil.rmtree(self.folder, ignore_errors=True)

    def publish(self) -> str:
        """Rename the folder ``gen-<id>``, link every output name, switch ``current`` to it,
        remove older generations. Returns the generation's name."""
        # Dot files are the generation's own (e.g. graph.ttl's fragment index): never linked.
        refuse_linked_state(self.out)  # older generations are removed below: only kg's own
        names = sorted(n for n in os.listdir(self.folder) if not n.startswith("."))
        for n in names:
            if (self.out / n).is_dir():
                raise OutputError(f"cannot write {self.out / n}: it is a folder")
        with output_errors(self.out):
            _fsync_dir(self.folder)
            stem = f"{_GEN}{(content_id(self.folder) or secrets.token_hex(8))[:16]}"
            name, suffix = stem, 1
            while (self.state / name).exists():
                suffix += 1
                name = f"{stem}-{suffix}"
            os.rename(self.folder, self.state / name)
            self.folder, self.name = self.state / name, name
            _fsync_dir(self.state)
            self._link_names(names)
            previous = current_generation(self.out)
            _symlink_over(name, self.state / CURRENT, self.state)
            _fsync_dir(self.state)
        for entry in self.state.iterdir():
            if entry.name.startswith(_GEN) and entry.name not in (name, previous):
                _remove(entry)
        return name

    def _link_names(self, names: list[str]) -> None:
        """Make every output name the link through ``current`` before the switch, showing
        readers the same build they saw until now."""
        plain = [n for n in names if (self.out / n).exists() and not self._is_link(n)]
        if plain and current_generation(self.out) is None and content_id(self.out) is not None:
            self._adopt(plain)  # an older kg's output folder (a plain graph.json of kg's): its files become the first generation
        elif plain:
            for n in plain:  # a file kg did not write: renamed, never deleted
                self._set_aside(n)
        for n in names:
            if not self._is_link(n):
                _symlink_over(f"{KG_DIR}/{CURRENT}/{n}", self.out / n, self.state)

    def _is_link(self, name: str) -> bool:
        try:
            return os.readlink(self.out / name) == f"{KG_DIR}/{CURRENT}/{name}"
        except OSError:
            return False

    def _set_aside(self, name: str) -> None:
        stamp = time.strftime("%Y%m%dT%H%M%S")
        aside = self.out / f"{name}.user-{stamp}"
        n = 1
        while aside.exists() or aside.is_symlink():
            n += 1
            aside = self.out / f"{name}.user-{stamp}-{n}"
        os.rename(self.out / name, aside)
        warnings.warn(f"{self.out / name} was not written by kg; renamed it {aside.name} so the build's {name} can take its place", UserFileSetAside, stacklevel=4)

    def _adopt(self, plain: list[str]) -> None:
        legacy = self.state / f"{_BUILD}legacy-{os.getpid()}-{secrets.token_hex(4)}"
        legacy.mkdir()
        for n in plain:
            try:
                os.link(self.out / n, legacy / n)  # same inode: nothing copied, nothing changes
            except OSError:
                shutil.copy2(self.out / n, legacy / n)
        stem = f"{_GEN}{(content_id(legacy) or 'legacy')[:16]}"
        name = stem if not (self.state / stem).exists() else f"{stem}-legacy-{secrets.token_hex(2)}"
        os.rename(legacy, self.state / name)
        _symlink_over(name, self.state / CURRENT, self.state)
        _fsync_dir(self.state)


def unlink_missing(out: str | os.PathLike[str], names: Iterable[str]) -> None:
    """Remove output links (through ``current``) whose file the current generation lacks."""
    for name in names:
        link = Path(out) / name
        with contextlib.suppress(OSError):
            if os.readlink(link) == f"{KG_DIR}/{CURRENT}/{name}" and not link.exists():
                link.unlink()
