"""Where kg may write: one rule for output folders, cache folders and output files.

kg keeps three kinds of folder of its own, and what it writes there it also replaces or removes:

* an output folder's builds, ``OUT/.kg/`` (`kg.generations`): older generations are removed;
* the SPARQL store beside them, ``OUT/graph.oxigraph/`` (`kg.rdf.store`), and its lock
  ``OUT/graph.oxigraph.lock``: the store is swapped whole by the next build, the old one removed;
* the cache folder (`kg.extract.cache_location`): ``extract.sqlite`` and the like, shared by
  every build, whose files and the ones it sets aside ``kg cache`` manages.

So an output folder (``kg build -o``, ``kg train -o``) and an output file (``kg html -o``,
``kg export -o``) may be in none of them, a build's output folder may not be the cache folder or
inside it, and a cache folder may not be in a build's state or store (`kg_place`,
`refuse_cache_as_output`). An output folder's ``.kg`` must be a folder of its own, never a link
(`refuse_linked_state`): kg removes entries there, and through a link it would remove another
folder's; where it removes or renames, it works in the folder it opened and checked (`hold`), so
a link put in its place meanwhile leads nowhere.

A place is known by its path as given and its real path (links resolved), by what it holds
(`kg_place` reads the marks kg leaves: a ``current`` link to a generation, a store's stamp, a
cache's database), and two places are compared by device and inode as well as by real path
(`same`, `within`): a symbolic link, a bind mount, ``KG_CACHE_DIR`` or a relative path cannot
lead around the rule.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

from kg.errors import OutputError

KG_DIR = ".kg"  # an output folder's builds (`kg.generations`)
STORE_DIR = "graph.oxigraph"  # an output folder's SPARQL store (`kg.rdf.store`)
STORE_LOCK = f"{STORE_DIR}.lock"  # beside the store, held while it is written (`kg.rdf.store`)
STORE_STAMP = "kg-stamp.json"  # in the store: what it was built from (`kg.rdf.store`)
CURRENT = "current"  # in OUT/.kg: the link to the published generation (`kg.generations`)
FRAGMENTS = ".graph.ttl.fragments"  # in every generation: graph.ttl's fragment index (`kg.rdf.fragments`)
CACHE_FILES = ("extract.sqlite", "embed.sqlite")  # in the cache folder (`kg.extract.cache`, `kg.related_work.embed`)
BUILDS = "a .kg folder, where kg keeps an output folder's builds"
STORE = "a SPARQL store folder, which the next build replaces whole"
CACHE = "a kg cache folder, whose files every build shares"


def real(path: str | os.PathLike[str]) -> Path:
    """`path` with every link resolved (the part that exists; the rest as given), absolute."""
    return Path(os.path.realpath(path))


def _identity(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except (OSError, ValueError):
        return None
    return found.st_dev, found.st_ino


def same(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether `a` and `b` are one file or folder: the same real path, or (both existing) the
    same device and inode, as a bind mount of a folder is."""
    if real(a) == real(b):
        return True
    first = _identity(a)
    return first is not None and first == _identity(b)


def within(path: str | os.PathLike[str], folder: str | os.PathLike[str]) -> bool:
    """Whether `path` is `folder` or inside it: by real paths, or by device and inode of each
    existing folder on the way up from `path` (a bind mount of `folder` is `folder`)."""
    inner, outer = real(path), real(folder)
    if inner == outer or outer in inner.parents:
        return True
    target = _identity(outer)
    return target is not None and any(_identity(step) == target for step in (inner, *inner.parents))


def output_folder(folder: str | os.PathLike[str]) -> bool:
    """Whether `folder` is (or was) a kg build's output folder: its ``.kg``, a graph.json or the store's lock."""
    here = Path(folder)
    return (here / KG_DIR).is_dir() or (here / "graph.json").exists() or (here / STORE_LOCK).exists()


def _marked(folder: Path) -> str | None:
    """What `folder` is by the marks kg leaves in it, whatever its name or path (a bind mount of
    ``OUT/.kg`` has another name): `BUILDS` for a ``.kg`` (its ``current`` link) or a generation
    (its fragment index), `STORE` for a store (its stamp), `CACHE` for a cache folder."""
    with contextlib.suppress(OSError):
        if os.readlink(folder / CURRENT).startswith("gen-"):
            return BUILDS
    if (folder / FRAGMENTS).is_file() and (folder / "graph.json").is_file():
        return BUILDS
    if (folder / STORE_STAMP).is_file():
        return STORE
    if any((folder / name).is_file() for name in CACHE_FILES):
        return CACHE
    return None


def kg_place(path: str | os.PathLike[str], *, caches: bool = False) -> str | None:
    """What of kg's own `path` is in (`BUILDS` or `STORE`; with `caches` also `CACHE`), judged
    on the path as given, on its real path and on what each existing folder on the way up holds;
    None where kg may write."""
    given = Path(os.path.abspath(path))
    for candidate in dict.fromkeys((given, real(path))):
        for folder in (candidate, *candidate.parents):
            if folder.name == KG_DIR:
                return BUILDS
            if folder.name == STORE_DIR and output_folder(folder.parent):
                return STORE
            marked = _marked(folder) if folder.is_dir() else None
            if marked is not None and (caches or marked != CACHE):
                return marked
    return None


def refuse_cache_as_output(out: str | os.PathLike[str], cache: str | os.PathLike[str], why: str, *, instead: str = "build into another folder") -> None:
    """`OutputError` if the output folder `out` is the cache folder `cache` (chosen as `why`
    says) or inside it, or inside any other folder holding a cache file: a build's outputs would
    sit among the cache every build shares. `instead` says what to do."""
    if within(out, cache):
        where = "kg's cache folder" if same(out, cache) else "inside kg's cache folder"
        raise OutputError(f"cannot write {out}: it is {where} {cache} ({why}); {instead}")
    if kg_place(out, caches=True) == CACHE:  # another cache folder (an earlier KG_CACHE_DIR): as much kg's
        raise OutputError(f"cannot write {out}: it is inside {CACHE} (it holds {' or '.join(CACHE_FILES)}); {instead}")


def refuse_linked_state(out: str | os.PathLike[str]) -> Path:
    """``OUT/.kg``, after an `OutputError` if it is a symbolic link or not a folder: kg removes
    old generations and what killed builds left there, and must remove only its own."""
    state = Path(out) / KG_DIR
    if state.is_symlink():
        raise _linked(out, state)
    if state.exists() and not state.is_dir():
        raise _not_a_folder(out, state)
    return state


def _linked(out: str | os.PathLike[str], state: Path) -> OutputError:
    try:
        where = os.readlink(state)
    except OSError:
        where = "elsewhere"
    return OutputError(
        f"cannot write {out}: {state} is a symbolic link (to {where}); kg keeps the builds of {out} there "
        "and removes old ones, so it must be a folder of its own: remove the link"
    )


def _not_a_folder(out: str | os.PathLike[str], state: Path) -> OutputError:
    return OutputError(f"cannot write {out}: {state} is not a folder; kg keeps the builds of {out} there: move it away")


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


# -- folders held open: removing and renaming by name inside the folder that was checked ---------


class Held:
    """A folder held open (a file descriptor): entries are listed, removed, renamed and linked
    by name relative to it (``dir_fd``), so whatever is put in place of the folder's path later
    (a link to another folder) is never touched. `path` is for messages and for readers."""

    def __init__(self, fd: int, path: Path) -> None:
        self.fd = fd
        self.path = path

    def names(self) -> list[str]:
        return os.listdir(self.fd)

    def _lstat(self, name: str) -> os.stat_result | None:
        try:
            return os.stat(name, dir_fd=self.fd, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def child(self, name: str) -> Held:
        """The folder `name` in this one, held open in turn (never through a link)."""
        return Held(os.open(name, _DIR_FLAGS | _NOFOLLOW, dir_fd=self.fd), self.path / name)

    def is_dir(self, name: str, *, follow: bool = False) -> bool:
        """Whether `name` is a folder (with `follow`, or a link to one)."""
        try:
            found = os.stat(name, dir_fd=self.fd, follow_symlinks=follow)
        except OSError:
            return False
        return stat.S_ISDIR(found.st_mode)

    def is_file(self, name: str) -> bool:
        found = self._lstat(name)
        return found is not None and stat.S_ISREG(found.st_mode)

    def exists(self, name: str) -> bool:
        return self._lstat(name) is not None

    def readlink(self, name: str) -> str | None:
        try:
            return os.readlink(name, dir_fd=self.fd)
        except OSError:
            return None

    def remove(self, name: str) -> None:
        """Remove the entry `name` (a folder with all it holds; a link, not what it points to)."""
        if self.is_dir(name):
            shutil.rmtree(name, dir_fd=self.fd, ignore_errors=True)  # fd-based: never follows a link
        else:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name, dir_fd=self.fd)

    def rename(self, name: str, new: str, *, into: Held | None = None) -> None:
        os.rename(name, new, src_dir_fd=self.fd, dst_dir_fd=(into or self).fd)

    def mkdir(self, name: str) -> None:
        os.mkdir(name, dir_fd=self.fd)

    def symlink_over(self, target: str, name: str, *, into: Held | None = None) -> None:
        """Point the link `name` (in `into`, default here) at `target` atomically: a new link
        made here, renamed over it."""
        tmp = f"link-{os.getpid()}-{secrets.token_hex(4)}.tmp"
        os.symlink(target, tmp, dir_fd=self.fd)
        try:
            os.replace(tmp, name, src_dir_fd=self.fd, dst_dir_fd=(into or self).fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=self.fd)
            raise

    def fsync(self) -> None:
        """Make renames here durable (a power cut after a switch must not undo it)."""
        with contextlib.suppress(OSError):
            os.fsync(self.fd)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


@contextlib.contextmanager
def hold(out: str | os.PathLike[str], *, create: bool = False) -> Iterator[tuple[Held, Held | None]]:
    """`out` and its ``.kg`` held open for the block (``.kg`` with ``O_NOFOLLOW``: a link there
    is the `OutputError` of `refuse_linked_state`, whenever it was made); ``.kg`` is None where
    there is none, unless `create` makes it. Raises OSError when `out` cannot be opened."""
    folder = open_folder(out)
    state: Held | None = None
    try:
        state = hold_state(folder, create=create)
        yield folder, state
    finally:
        if state is not None:
            state.close()
        folder.close()


def open_folder(path: str | os.PathLike[str]) -> Held:
    """The folder `path` held open (a link named as `path` is followed: it is the caller's name)."""
    return Held(os.open(path, _DIR_FLAGS), Path(path))


def hold_state(folder: Held, *, create: bool = False) -> Held | None:
    """``.kg`` in the held output folder `folder`, opened without following a link."""
    state = folder.path / KG_DIR
    if create:
        with contextlib.suppress(FileExistsError):
            folder.mkdir(KG_DIR)
    try:
        held = folder.child(KG_DIR)
    except FileNotFoundError:
        return None
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):  # a link (ELOOP or ENOTDIR under O_NOFOLLOW) or a file
            raise (_linked(folder.path, state) if folder.readlink(KG_DIR) is not None else _not_a_folder(folder.path, state)) from None
        raise
    return held
