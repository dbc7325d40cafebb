"""The graph in a pyoxigraph Store, for SPARQL (`kg.sparql.engine`) and the endpoint (`kg.sparql.serve`).

`to_store` loads the triple stream (`kg.rdf.triples`) into a Store; `open_store` keeps one
on disk next to graph.json (``graph.oxigraph/``) so only the first query after a build
pays for loading. The cache is stamped like every derived file (`kg.graph.graph_stamp`).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pyoxigraph as ox

from kg.generations import GraphFolder, resolve
from kg.graph import GRAPH_FILE, graph_stamp, load
from kg.rdf.fragments import changed_fragments, turtle_chunks
from kg.rdf.terms import DEFAULT_BASE, RDF_MODEL_VERSION
from kg.rdf.triples import triples
from kg.util.atomic import output_errors
from kg.util.places import STORE_DIR as STORE_DIR  # named with the rule on where kg may write

if TYPE_CHECKING:
    import networkx as nx

STAMP_FILE = "kg-stamp.json"
LOCK_FILE = f"{STORE_DIR}.lock"  # beside the store, never removed (removing a lock file races)


def to_store(graph: nx.DiGraph[str], *, base: str = DEFAULT_BASE, path: str | None = None) -> ox.Store:
    """A pyoxigraph Store holding the graph (in memory, or on disk at `path`)."""
    store = ox.Store(path) if path else ox.Store()
    batch: list[ox.Quad] = []
    for t in triples(graph, base=base):
        batch.append(ox.Quad(t.subject, t.predicate, t.object))
        if len(batch) >= 200_000:
            store.bulk_extend(batch)
            batch = []
    if batch:
        store.bulk_extend(batch)
    return store


# Above this share of changed fragments, one bulk load of graph.ttl beats removing and
# adding triples one by one in a copy of the old store.
MAX_CHANGED_SHARE = 0.2
# Each update leaves its own small RocksDB files, which every later query reads through: the
# store is compacted once this many updates piled up since it was last compacted, or fragments
# removed and added by them (an edited one counts twice) reach this share of the graph's
# fragments (a bulk load always compacts). bench/store_churn.py: 16 updates of 40 papers made
# whole-graph queries 2-3x slower on 22.9k papers; compaction brought them back.
COMPACT_AFTER_UPDATES = 8
COMPACT_AFTER_SHARE = 0.1
CHURN_FILE = "kg-churn.json"  # in the store: updates and fragments changed since the last compaction


def write_store(
    graph: nx.DiGraph[str] | None,
    directory: str | os.PathLike[str],
    *,
    base: str = DEFAULT_BASE,
    turtle: str | os.PathLike[str] | None = None,
    previous_turtle: str | os.PathLike[str] | None = None,
    graph_file: str | os.PathLike[str] | None = None,
    then: Callable[[], object] | None = None,
) -> StoreWritten:
    """Build ``DIR/graph.oxigraph/`` for `graph` (already saved as ``DIR/graph.json``) now,
    so the first `kg sparql` after `kg build` only opens it.

    `turtle` names a Turtle file of the same graph under the same base (kg build's
    graph.ttl, just written): Oxigraph's bulk loader parses it in Rust instead of taking the
    triples one by one from Python, and `graph` may be None (kg build lets it go first; without
    `turtle` it is needed). When the store holds the build of `previous_turtle` (the
    generation just replaced) and few of its fragments changed (`kg.rdf.fragments`), the
    store is updated instead: a checkpoint of the old store (hard links, nothing copied) gets
    the removed fragments' triples deleted and the new ones added. Either way it happens in
    a temporary folder switched in atomically, under the store lock; a store already current
    is kept. Raises `OutputError` (exit 18 or 22) when the folder cannot hold it, as for kg
    build's other files.

    `graph_file` is the graph.json the store is for (default ``DIR/graph.json``): kg build
    names the one in its unpublished generation and passes the generation's switch as `then`,
    run under the store lock once the store is written, so that the store is complete (and
    on disk) before readers can see the build, and a failure leaves the previous build shown.
    """
    folder = Path(directory)
    graph_file = Path(graph_file) if graph_file is not None else folder / GRAPH_FILE
    store_dir = folder / STORE_DIR
    stamp = _stamp(graph_file, base)
    with _locked(folder / LOCK_FILE):
        with output_errors(store_dir):
            how = _write_store(graph, store_dir, stamp, base=base, turtle=turtle, previous_turtle=previous_turtle)
        if then is not None:
            then()
    return StoreWritten(store_dir, how)


# already current; fragments changed; fragments changed, then the store compacted; bulk load
StoreHow = Literal["kept", "updated", "updated and compacted", "loaded"]


def _write_store(
    graph: nx.DiGraph[str] | None, store_dir: Path, stamp: dict[str, Any], *, base: str, turtle: str | os.PathLike[str] | None, previous_turtle: str | os.PathLike[str] | None,
) -> StoreHow:
    current = _open_current(store_dir, stamp)
    if current is not None:
        del current  # close it: the build only leaves it on disk
        return "kept"
    if turtle is not None and previous_turtle is not None:
        updated = _update_store(store_dir, stamp, Path(previous_turtle), Path(turtle), base)
        if updated is not None:
            return updated
    load = (lambda store: _bulk_load(store, Path(turtle))) if turtle is not None else None
    store = _rebuild_store(graph, store_dir, stamp, base=base, load=load)
    del store  # close it: the build only leaves it on disk
    return "loaded"


# Oxigraph's bulk loader holds what it parsed until it writes it out: the whole graph.ttl of
# 22.9k papers (408 MB) peaked at 1.8 GB, pieces of 20 MB at 0.4 GB and of 40 MB at 0.7 GB
# (about 1.4x the load time: a file is parsed in parallel, a piece in one thread).
BULK_LOAD_CHUNK = 24_000_000


def _bulk_load(store: ox.Store, turtle: Path) -> None:
    """Load graph.ttl a piece at a time (`kg.rdf.fragments.turtle_chunks`), or whole when
    its fragment index is missing; the store is compacted afterwards (`_rebuild_store`)."""
    chunks = turtle_chunks(turtle, BULK_LOAD_CHUNK)
    if chunks is None:
        store.bulk_load(path=str(turtle), format=ox.RdfFormat.TURTLE)
        return
    for chunk in chunks:
        store.bulk_load(chunk, format=ox.RdfFormat.TURTLE)


@dataclass(frozen=True)
class StoreWritten:
    path: Path
    how: StoreHow


def _update_store(store_dir: Path, stamp: dict[str, Any], old_turtle: Path, new_turtle: Path, base: str) -> StoreHow | None:
    """Turn the store of `old_turtle`'s build into the store of `new_turtle`'s (see
    `write_store`), compacting it when updates piled up; None, with nothing changed, when it
    does not hold that build or too much changed."""
    if _read_stamp(store_dir) != _stamp(old_turtle.with_name(GRAPH_FILE), base):
        return None
    diff = changed_fragments(old_turtle, new_turtle)
    if diff is None or diff.changed > MAX_CHANGED_SHARE * diff.total:
        return None

    tmp = _temporary(store_dir)
    try:
        ox.Store.read_only(str(store_dir)).backup(str(tmp))
        store = ox.Store(str(tmp))  # the copy: the store in use is never written
        for quad in ox.parse(diff.removed, format=ox.RdfFormat.TURTLE):
            store.remove(quad)
        store.extend(ox.parse(diff.added, format=ox.RdfFormat.TURTLE))
        store.flush()
        churn = _next_churn(_read_churn(store_dir), diff.changed, diff.total)
        if churn is None:
            store.optimize()
        del store
        _write_churn(tmp, churn)
        _write_stamp(tmp, stamp)
        fsync_tree(tmp)
    except KeyboardInterrupt:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    except Exception:  # a failed update costs a reload, never the build (the reload reports real errors)
        shutil.rmtree(tmp, ignore_errors=True)
        return None
    _swap_in(tmp, store_dir)
    return "updated" if churn is not None else "updated and compacted"


Churn = tuple[int, int]  # (updates, fragments changed) since the store was last compacted


def _next_churn(churn: Churn, changed: int, total: int) -> Churn | None:
    """The churn after one more update of `changed` of `total` fragments; None: compact now."""
    updates, fragments = churn[0] + 1, churn[1] + changed
    if updates >= COMPACT_AFTER_UPDATES or fragments > COMPACT_AFTER_SHARE * total:
        return None
    return updates, fragments


def _read_churn(store_dir: Path) -> Churn:
    """What piled up in the store at `store_dir` since it was compacted ((0, 0) when it says
    nothing: a store bulk-loaded and compacted, or one written before kg counted)."""
    try:
        data = json.loads((store_dir / CHURN_FILE).read_text(encoding="utf-8"))
        return max(0, int(data["updates"])), max(0, int(data["fragments"]))
    except (OSError, ValueError, TypeError, KeyError, OverflowError):  # damaged: count from now
        return 0, 0


def _write_churn(store_dir: Path, churn: Churn | None) -> None:
    updates, fragments = churn or (0, 0)
    (store_dir / CHURN_FILE).write_text(json.dumps({"updates": updates, "fragments": fragments}, sort_keys=True), encoding="utf-8")


def _stamp(graph_file: Path, base: str) -> dict[str, Any]:
    """The store is stale when the graph (`graph_stamp`), the base or the RDF model changed."""
    return {**graph_stamp(graph_file), "base": base, "model": RDF_MODEL_VERSION}


def open_store(directory: str | os.PathLike[str] | GraphFolder, *, base: str = DEFAULT_BASE, cache: bool = True) -> ox.Store:
    """The graph in `directory` as a pyoxigraph Store, reusing ``DIR/graph.oxigraph/``.

    The store lives beside the output folder's stable names, outside its generations
    (`kg.generations`), and records which graph it holds by content id.

    The on-disk store is rebuilt when graph.json changed (its content id), or the base or
    RDF model did; it is built in a temporary folder and renamed into place, then opened
    read-only. Building holds an exclusive lock (``DIR/graph.oxigraph.lock``): a second
    process asking at the same time waits, then finds the store built and opens it.
    Where the folder is not writable (or `cache` is False) the store is built in memory
    instead — same rows, just slower to start.
    """
    view = resolve(directory)  # one generation: the stamp and the graph loaded must agree
    graph_file, folder = view.graph, view.root
    graph = None
    if cache and graph_file.is_file():
        store_dir = folder / STORE_DIR
        stamp = _stamp(graph_file, base)
        store = _open_current(store_dir, stamp)
        if store is not None:
            return store
        try:
            with _locked(folder / LOCK_FILE):
                store = _open_current(store_dir, stamp)  # built while we waited for the lock?
                if store is not None:
                    return store
                graph = load(graph_file)
                if resolve(folder).graph != graph_file:  # a build switched in meanwhile: its store stays on disk
                    return to_store(graph, base=base)
                return _rebuild_store(graph, store_dir, stamp, base=base)
        except OSError:
            pass  # read-only folder, disk full…: fall back to memory
    return to_store(graph if graph is not None else load(graph_file), base=base)


def is_corruption(error: BaseException) -> bool:
    """True if a pyoxigraph error says the store's files are damaged (RocksDB's "Corruption")."""
    return "corruption" in str(error).lower()


def repair_store(directory: str | os.PathLike[str] | GraphFolder, *, base: str = DEFAULT_BASE) -> ox.Store:
    """Rebuild the cached store of `directory`'s graph, whatever its stamp says (its files
    proved damaged: a query failed with a corruption error), from the generation's graph.ttl
    (or graph.json), and open it. Raises `OutputError` if it cannot be rebuilt on disk."""
    view = resolve(directory)
    store_dir = view.root / STORE_DIR
    stamp = _stamp(view.graph, base)
    turtle = view.file("graph.ttl")
    with output_errors(store_dir), _locked(view.root / LOCK_FILE):
        if turtle.is_file() and base == DEFAULT_BASE:  # kg build writes graph.ttl under the default base
            return _rebuild_store(None, store_dir, stamp, base=base, load=lambda store: _bulk_load(store, turtle))
        return _rebuild_store(load(view.graph), store_dir, stamp, base=base)


def _open_current(store_dir: Path, stamp: dict[str, Any]) -> ox.Store | None:
    """The cached store opened read-only if its stamp matches, else None (stale, absent, corrupt)."""
    if _read_stamp(store_dir) == stamp:
        try:
            return ox.Store.read_only(str(store_dir))
        except (OSError, ValueError, RuntimeError):  # RocksDB's "Corruption: …" is a RuntimeError
            pass  # unreadable, corrupt or half-swapped cache: (re)build it under the lock
    return None


def _read_stamp(store_dir: Path) -> dict[str, Any] | None:
    """What graph the store at `store_dir` holds (None: no store, or no readable stamp)."""
    try:
        stamp = json.loads((store_dir / STAMP_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return stamp if isinstance(stamp, dict) else None


def _write_stamp(store_dir: Path, stamp: dict[str, Any]) -> None:
    """Written last: a store folder without its stamp is never taken for a current one."""
    (store_dir / STAMP_FILE).write_text(json.dumps(stamp, sort_keys=True), encoding="utf-8")


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive `flock` on `path` (created if needed), held for the block; OSError if the
    folder is read-only. On systems without fcntl the block runs unlocked."""
    try:
        import fcntl
    except ImportError:  # Windows
        yield
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _rebuild_store(graph: nx.DiGraph[str] | None, store_dir: Path, stamp: dict[str, Any], *, base: str, load: Callable[[ox.Store], None] | None = None) -> ox.Store:
    """Build into a temporary folder beside `store_dir`, stamp it last, swap it in (under the
    lock). `load` fills the new store (default: the graph's triple stream, `to_store`)."""
    tmp = _temporary(store_dir)
    try:
        if load is None:
            assert graph is not None
            store = to_store(graph, base=base, path=str(tmp))
        else:
            store = ox.Store(str(tmp))
            load(store)
        store.flush()
        # Compact the bulk-loaded files (RocksDB leaves them overlapping): every later query
        # reads far fewer blocks (3-4x faster example queries on a 6.9M-triple graph).
        store.optimize()
        del store  # closes RocksDB before the rename
        _write_stamp(tmp, stamp)
        fsync_tree(tmp)  # on disk before it replaces the old store
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _swap_in(tmp, store_dir)
    return ox.Store.read_only(str(store_dir))


def fsync_tree(folder: Path) -> None:
    """fsync every file in `folder` and the folder itself (a store's files, before its swap)."""
    for entry in folder.iterdir():
        if entry.is_file():
            fd = os.open(entry, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _temporary(store_dir: Path) -> Path:
    """A fresh temporary folder name beside the store (called under the lock)."""
    tmp = store_dir.with_name(f".{store_dir.name}.{os.getpid()}.tmp")
    for stale in [*store_dir.parent.glob(f".{store_dir.name}.*.tmp"), *store_dir.parent.glob(f".{store_dir.name}.*.old")]:
        shutil.rmtree(stale, ignore_errors=True)  # left by a killed build; we hold the lock
    shutil.rmtree(tmp, ignore_errors=True)
    return tmp


def _swap_in(tmp: Path, store_dir: Path) -> None:
    old = store_dir.with_name(f".{store_dir.name}.{os.getpid()}.old")
    if (store_dir.exists() or store_dir.is_symlink()) and not (store_dir / STAMP_FILE).is_file():
        _set_aside(store_dir)  # not a store kg wrote (a file, someone's folder): kept, never deleted
    if store_dir.exists():
        os.replace(store_dir, old)
    os.replace(tmp, store_dir)
    shutil.rmtree(old, ignore_errors=True)


def _set_aside(path: Path) -> None:
    import time
    import warnings

    from kg.errors import UserFileSetAside

    aside = path.with_name(f"{path.name}.user-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}")
    os.rename(path, aside)
    warnings.warn(f"{path} was not written by kg; renamed it {aside.name} so the SPARQL store can take its place", UserFileSetAside, stacklevel=4)
