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
from kg.graph import GRAPH_FILE, content_id, names_a_folder
from kg.util.atomic import output_errors
from kg.util.places import CURRENT, KG_DIR, hold, hold_state, open_folder, refuse_linked_state

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
    """Where to read the graph named by `path` (a folder, or its graph.json: `names_a_folder`): the generation
    ``.kg/current`` points at, read once, when ``PATH/graph.json`` is kg's link; else the folder."""
    if isinstance(path, GraphFolder):
        return path
    given = Path(path)
    if names_a_folder(given):
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
            self.out.mkdir(parents=True, exist_ok=True)
            # .kg opened without following a link, even one made by another process just now
            with hold(self.out, create=True) as (_, state):
                assert state is not None  # made if missing
                fd = os.open(LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0), 0o666, dir_fd=state.fd)
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
# Whatever kg removes or renames in OUT and OUT/.kg it does by name in the folders it opened
# (`kg.util.places.hold`): a .kg swapped for a link after the checks leads nowhere.


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def clean_stale(out: Path, names: Iterable[str]) -> list[Path]:
    """Remove what killed builds left (call under the lock): ``build-…`` folders and temporary
    links in ``.kg/``, and beside the links the temporary files of `names` (and any other
    ``.NAME.<pid>-….tmp``) whose writing process is gone. Returns what was removed."""
    removed: list[Path] = []
    refuse_linked_state(out)
    with output_errors(out), hold(out) as (folder, state):  # entries of another folder are never removed through a link
        if state is not None:
            if state.is_dir(CURRENT):  # a copy that followed the link: adopt it
                adopted = f"{_GEN}adopted-{secrets.token_hex(4)}"
                state.rename(CURRENT, adopted)
                state.symlink_over(adopted, CURRENT)
            for name in state.names():
                if name.startswith(_BUILD) or name.endswith(".tmp"):
                    state.remove(name)
                    removed.append(state.path / name)
        known = set(names)
        for name in folder.names():
            store_temp = _STORE_TEMP.match(name)
            if store_temp is not None and folder.is_dir(name) and not _alive(int(store_temp.group("pid"))):
                folder.remove(name)  # a store folder a killed build was making or swapping out
                removed.append(folder.path / name)
                continue
            match = _TEMP.match(name)
            if match is None or not folder.is_file(name):
                continue
            pid = match.group("pid")
            if (pid is not None and not _alive(int(pid))) or (pid is None and match.group("name") in known):
                folder.remove(name)
                removed.append(folder.path / name)
    return removed


class Generation:
    """A build being written into ``out/.kg/build-…``; `publish` makes it the current one.
    Use as a context manager: leaving it without `publish` (an error, Ctrl-C) removes the folder.
    ``out`` and ``out/.kg`` are held open from here to the end (`kg.util.places.Held`)."""

    def __init__(self, out: str | os.PathLike[str]) -> None:
        self.out = Path(out)
        self.state = refuse_linked_state(self.out)
        self._build = f"{_BUILD}{os.getpid()}-{secrets.token_hex(4)}"
        with output_errors(self.out):
            self.out.mkdir(parents=True, exist_ok=True)
            self._out = open_folder(self.out)
            try:
                held = hold_state(self._out, create=True)
                assert held is not None  # made if missing
                self._state = held
                try:
                    held.mkdir(self._build)
                except BaseException:
                    held.close()
                    raise
            except BaseException:
                self._out.close()
                raise
        self.folder = self.state / self._build
        self.name: str | None = None

    def __enter__(self) -> Generation:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if self.name is None:
                self._state.remove(self._build)
        finally:
            self._state.close()
            self._out.close()

    def publish(self) -> str:
        """Rename the folder ``gen-<id>``, link every output name, switch ``current`` to it,
        remove older generations. Returns the generation's name."""
        state, out = self._state, self._out
        with output_errors(self.out):
            build = state.child(self._build)
            try:
                # Dot files are the generation's own (e.g. graph.ttl's fragment index): never linked.
                names = sorted(n for n in build.names() if not n.startswith("."))
                build.fsync()
            finally:
                build.close()
        for n in names:
            if out.is_dir(n, follow=True):
                raise OutputError(f"cannot write {self.out / n}: it is a folder")
        with output_errors(self.out):
            stem = f"{_GEN}{(content_id(self.folder) or secrets.token_hex(8))[:16]}"
            name, suffix = stem, 1
            while state.exists(name):
                suffix += 1
                name = f"{stem}-{suffix}"
            state.rename(self._build, name)
            self.folder, self.name = self.state / name, name
            state.fsync()
            self._link_names(names)
            previous = state.readlink(CURRENT)
            state.symlink_over(name, CURRENT)
            state.fsync()
        for entry in state.names():
            if entry.startswith(_GEN) and entry not in (name, previous):
                state.remove(entry)
        return name

    def _link_names(self, names: list[str]) -> None:
        """Make every output name the link through ``current`` before the switch, showing
        readers the same build they saw until now."""
        plain = [n for n in names if self._out.exists(n) and not self._is_link(n)]
        if plain and self._state.readlink(CURRENT) is None and content_id(self.out) is not None:
            self._adopt(plain)  # an older kg's output folder (a plain graph.json of kg's): its files become the first generation
        elif plain:
            for n in plain:  # a file kg did not write: renamed, never deleted
                self._set_aside(n)
        for n in names:
            if not self._is_link(n):
                self._state.symlink_over(f"{KG_DIR}/{CURRENT}/{n}", n, into=self._out)

    def _is_link(self, name: str) -> bool:
        return self._out.readlink(name) == f"{KG_DIR}/{CURRENT}/{name}"

    def _set_aside(self, name: str) -> None:
        stamp = time.strftime("%Y%m%dT%H%M%S")
        aside = f"{name}.user-{stamp}"
        n = 1
        while self._out.exists(aside):
            n += 1
            aside = f"{name}.user-{stamp}-{n}"
        self._out.rename(name, aside)
        warnings.warn(f"{self.out / name} was not written by kg; renamed it {aside} so the build's {name} can take its place", UserFileSetAside, stacklevel=4)

    def _adopt(self, plain: list[str]) -> None:
        legacy_name = f"{_BUILD}legacy-{os.getpid()}-{secrets.token_hex(4)}"
        self._state.mkdir(legacy_name)
        legacy = self._state.child(legacy_name)
        try:
            for n in plain:
                try:  # same inode: nothing copied, nothing changes
                    os.link(n, n, src_dir_fd=self._out.fd, dst_dir_fd=legacy.fd, follow_symlinks=False)
                except OSError:
                    shutil.copy2(self.out / n, self.state / legacy_name / n)
        finally:
            legacy.close()
        stem = f"{_GEN}{(content_id(self.state / legacy_name) or 'legacy')[:16]}"
        name = stem if not self._state.exists(stem) else f"{stem}-legacy-{secrets.token_hex(2)}"
        self._state.rename(legacy_name, name)
        self._state.symlink_over(name, CURRENT)
        self._state.fsync()


def unlink_missing(out: str | os.PathLike[str], names: Iterable[str]) -> None:
    """Remove output links (through ``current``) whose file the current generation lacks."""
    with contextlib.suppress(OSError), hold(out) as (folder, _):
        for name in names:
            if folder.readlink(name) == f"{KG_DIR}/{CURRENT}/{name}" and not (Path(out) / name).exists():
                with contextlib.suppress(OSError):
                    os.unlink(name, dir_fd=folder.fd)
