"""The leaderboards of a built graph: `leaderboard(DIR, dataset)` answers `kg leaderboard`, the
tables made by `kg.results.leaderboard` (rows, ranking, the labels a dataset is named by).

`kg build` writes ``leaderboard.idx`` beside graph.json so that `kg leaderboard` answers without
loading it: a JSON header line (every dataset concept with its look-up keys and where its claims
are), then one JSON line of claims per dataset, read alone. A missing or stale index (another
graph's content id, an older layout) is rebuilt in memory from graph.json (slow, but right).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg.errors import GraphDamaged, GraphNotFound
from kg.results.leaderboard import Entry, Index, Leaderboard, build_entries, make_leaderboard
from kg.util.atomic import atomic_open

if TYPE_CHECKING:
    import networkx as nx

    from kg.generations import GraphFolder

INDEX_FILE = "leaderboard.idx"
INDEX_FORMAT = "kg-leaderboard-index"
INDEX_VERSION = 1  # bump when the layout changes: an older index is then stale


def write_index(graph: nx.DiGraph[str], directory: str | os.PathLike[str]) -> Path:
    """Write ``DIR/leaderboard.idx`` for the graph just saved as ``DIR/graph.json`` (called by `kg build`)."""
    from kg.graph import GRAPH_FILE, graph_stamp

    folder = Path(directory)
    entries, chunks = build_entries(graph)
    body: list[bytes] = []
    placed = []
    offset = 0
    for entry in entries:
        chunk = chunks.get(entry.concept)
        if chunk is None:
            placed.append([entry.concept, entry.label, list(entry.keys), 0, 0, 0])
            continue
        line = (json.dumps(chunk, ensure_ascii=False, separators=(",", ":"), sort_keys=True) + "\n").encode("utf-8")
        placed.append([entry.concept, entry.label, list(entry.keys), entry.claims, offset, len(line)])
        body.append(line)
        offset += len(line)
    header = {"format": INDEX_FORMAT, "version": INDEX_VERSION, "graph": graph_stamp(folder / GRAPH_FILE), "datasets": placed}
    path = folder / INDEX_FILE
    with atomic_open(path, "wb", encoding=None) as handle:
        handle.write((json.dumps(header, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8"))
        for line in body:
            handle.write(line)
    return path


def open_index(directory: str | os.PathLike[str] | GraphFolder) -> Index:
    """The saved index if it is fresh (graph.json's content id, this layout), else one made from graph.json."""
    from kg.generations import resolve
    from kg.graph import graph_stamp

    view = resolve(directory)
    if not view.graph.is_file():
        raise GraphNotFound(f"no graph at {view.graph}", folder=str(view.root))
    path = view.file(INDEX_FILE)
    try:
        handle = path.open("rb")
    except OSError:
        handle = None
    if handle is not None:
        with handle:
            try:
                header = json.loads(handle.readline())
                fresh = isinstance(header, dict) and header.get("format") == INDEX_FORMAT and header.get("version") == INDEX_VERSION
                if fresh and header.get("graph") == graph_stamp(view.graph):
                    start = handle.tell()
                    entries = [Entry(str(c), str(label), tuple(keys), int(n), int(o), int(length)) for c, label, keys, n, o, length in header["datasets"]]
                    return Index(entries, lambda entry: _read_chunk(path, start, entry), "index")
            except (ValueError, TypeError, KeyError, UnicodeDecodeError, RecursionError):
                pass  # damaged or another layout: made anew from the graph below
    from kg.graph import load  # imports networkx: only on this slow path

    entries, chunks = build_entries(load(view.graph))
    return Index(entries, lambda entry: chunks[entry.concept], "graph")


def _read_chunk(path: Path, start: int, entry: Entry) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            handle.seek(start + entry.offset)
            chunk = json.loads(handle.read(entry.length))
    except (OSError, ValueError, UnicodeDecodeError) as error:
        raise GraphDamaged(f"{path} is damaged ({error}): build the graph again", folder=str(path.parent)) from None
    if not isinstance(chunk, dict) or not isinstance(chunk.get("rows"), list):
        raise GraphDamaged(f"{path} is damaged (not a leaderboard chunk at byte {start + entry.offset:,})", folder=str(path.parent))
    return chunk


def leaderboard(
    directory: str | os.PathLike[str] | GraphFolder,
    dataset: str,
    *,
    metric: str | None = None,
    task: str | None = None,
    min_score: float | None = None,
) -> Leaderboard:
    """The leaderboard of `dataset` in the graph of `directory`: one table per metric (only
    `metric`'s when given), claims of `task` only when given, scored `min_score` or more."""
    return make_leaderboard(open_index(directory), dataset, metric=metric, task=task, min_score=min_score)
