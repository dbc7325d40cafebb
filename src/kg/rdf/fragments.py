"""graph.ttl written fragment by fragment, reusing the previous build's bytes for every
fragment whose inputs did not change, and the index that makes that (and a store diff) possible.

`kg.rdf.triples.fragments` splits the graph's triples into subject groups keyed by a digest
of their inputs. Turtle written one fragment at a time is byte for byte the Turtle of the whole
stream (no two fragments share a subject), so a build copies an unchanged fragment's bytes
from the previous generation's graph.ttl instead of making its triples again: the file is
identical to a from-scratch build whatever was reused. The index beside graph.ttl
(``.graph.ttl.fragments``: key, offset, length and CRC-32 of every fragment, in file order)
says where each fragment's bytes are; a fragment whose bytes fail their CRC is made again.
`changed_fragments` gives the Turtle of the fragments one build has and another lacks, which
is how `kg.rdf.store` updates the Oxigraph store instead of reloading it.
"""

from __future__ import annotations

import array
import bisect
import mmap
import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

import pyoxigraph as ox

from kg.rdf.terms import DEFAULT_BASE, PREFIXES
from kg.rdf.triples import fragments
from kg.util.atomic import atomic_open, open_output, output_errors

if TYPE_CHECKING:
    import networkx as nx

    from kg.model import Progress

INDEX_SUFFIX = ".fragments"  # graph.ttl → .graph.ttl.fragments (dot: private to the generation)
_MAGIC = b"KGFRAG1\n"
_KEY = 16  # bytes of a fragment key (`kg.rdf.triples.Fragment.key`)
_PROGRESS_EVERY = 2000
STAGE = "Writing Turtle"


def _prefix_header() -> bytes:
    """The ``@prefix`` lines pyoxigraph writes before the first triple (and only then)."""
    probe = ox.NamedNode("urn:kg:probe")
    text = ox.serialize([ox.Triple(probe, probe, probe)], format=ox.RdfFormat.TURTLE, prefixes=PREFIXES) or b""
    return text[: text.index(b"<urn:kg:probe>")]


HEADER = _prefix_header()


def index_path(turtle: str | os.PathLike[str]) -> Path:
    path = Path(turtle)
    return path.with_name(f".{path.name}{INDEX_SUFFIX}")


@dataclass
class FragmentIndex:
    """Where each fragment of one graph.ttl is: parallel arrays in file order."""

    keys: bytearray
    offsets: array.array[int]
    lengths: array.array[int]
    crcs: array.array[int]

    @classmethod
    def empty(cls) -> FragmentIndex:
        return cls(bytearray(), array.array("Q"), array.array("Q"), array.array("Q"))

    def __len__(self) -> int:
        return len(self.offsets)

    def add(self, key: bytes, offset: int, data: bytes) -> None:
        self.add_known(key, offset, len(data), zlib.crc32(data))

    def add_known(self, key: bytes, offset: int, length: int, crc: int) -> None:
        """A fragment whose length and CRC are known (copied from another index)."""
        self.keys += key
        self.offsets.append(offset)
        self.lengths.append(length)
        self.crcs.append(crc)

    def describes(self, size: int) -> bool:
        """Whether this can be the index of a file of `size` bytes (its last fragment ends there)."""
        last = len(self) - 1
        return last >= 0 and self.offsets[last] + self.lengths[last] == size

    def key(self, i: int) -> bytes:
        return bytes(self.keys[i * _KEY : (i + 1) * _KEY])

    def positions(self) -> dict[bytes, int]:
        return {self.key(i): i for i in range(len(self))}

    def save(self, path: str | os.PathLike[str]) -> None:
        with atomic_open(path, "wb") as handle:
            handle.write(_MAGIC + len(self).to_bytes(8, "little"))
            handle.write(bytes(self.keys))
            for column in (self.offsets, self.lengths, self.crcs):
                handle.write(array.array("Q", column).tobytes())

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> FragmentIndex | None:
        """The index at `path`, or None if it is absent or not whole."""
        try:
            data = Path(path).read_bytes()
        except OSError:
            return None
        if not data.startswith(_MAGIC) or len(data) < len(_MAGIC) + 8:
            return None
        count = int.from_bytes(data[len(_MAGIC) : len(_MAGIC) + 8], "little")
        start = len(_MAGIC) + 8
        if len(data) != start + count * (_KEY + 24):
            return None
        keys = bytearray(data[start : start + count * _KEY])
        columns = []
        for n in range(3):
            column = array.array("Q")
            begin = start + count * _KEY + n * count * 8
            column.frombytes(data[begin : begin + count * 8])
            columns.append(column)
        return cls(keys, columns[0], columns[1], columns[2])


class _IndexedTurtle:
    """A build's graph.ttl (mapped, not read) and its fragment index."""

    def __init__(self, turtle: Path, index: FragmentIndex) -> None:
        self.index = index
        self.where = index.positions()
        self._file = turtle.open("rb")
        try:
            if not index.describes(os.fstat(self._file.fileno()).st_size):
                raise ValueError("index does not match its file")
            self.data = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ)
        except BaseException:
            self._file.close()
            raise

    @classmethod
    def open(cls, turtle: Path | None) -> _IndexedTurtle | None:
        if turtle is None:
            return None
        index = FragmentIndex.load(index_path(turtle))
        if index is None:
            return None
        try:
            return cls(turtle, index)
        except (OSError, ValueError):
            return None

    def bytes_of(self, i: int) -> bytes | None:
        """Fragment `i`'s bytes if they still match their CRC."""
        offset = self.index.offsets[i]
        return self.data[offset : offset + self.index.lengths[i]] if self.intact(i) else None

    def intact(self, i: int) -> bool:
        """Whether fragment `i`'s bytes still match their CRC (checked in place, not copied)."""
        offset = self.index.offsets[i]
        with memoryview(self.data) as view:
            return zlib.crc32(view[offset : offset + self.index.lengths[i]]) == self.index.crcs[i]

    def copy(self, start: int, end: int, handle: IO[bytes]) -> None:
        """Write bytes `start:end` of the file to `handle` (one call for a run of fragments)."""
        with memoryview(self.data) as view:
            handle.write(view[start:end])

    def close(self) -> None:
        self.data.close()
        self._file.close()


def _turtle(triples: Iterator[ox.Triple]) -> bytes:
    text = ox.serialize(list(triples), format=ox.RdfFormat.TURTLE, prefixes=PREFIXES) or b""
    return text[len(HEADER) :] if text.startswith(HEADER) else text


@dataclass(frozen=True)
class TurtleWritten:
    fragments: int
    reused: int  # copied from the previous build's graph.ttl


def write_turtle(
    graph: nx.DiGraph[str],
    path: str | os.PathLike[str],
    *,
    base: str = DEFAULT_BASE,
    previous: str | os.PathLike[str] | None = None,
    progress: Progress | None = None,
) -> TurtleWritten:
    """Write graph.ttl (atomically) and its fragment index; `previous` names an earlier
    build's graph.ttl whose unchanged fragments are copied instead of made again."""
    old = _IndexedTurtle.open(Path(previous)) if previous is not None else None
    # Fragments: the head, one per node, one per author; the authors are counted as they come.
    index, reused, total = FragmentIndex.empty(), 0, graph.number_of_nodes() + 1
    try:
        with output_errors(path), open_output(path) as handle:
            handle.write(HEADER)
            offset = len(HEADER)
            # Unchanged fragments mostly follow each other in both files (both are in id order):
            # such a run is copied from the old file in one write, not fragment by fragment.
            run_start = run_end = 0  # the old file's bytes not yet copied
            for n, fragment in enumerate(fragments(graph, base=base), start=1):
                i = old.where.get(fragment.key) if old is not None else None
                if old is not None and i is not None and old.intact(i):
                    start, length = old.index.offsets[i], old.index.lengths[i]
                    if start != run_end:
                        old.copy(run_start, run_end, handle)
                        run_start = start
                    run_end = start + length
                    index.add_known(fragment.key, offset, length, old.index.crcs[i])
                    reused += 1
                else:
                    if old is not None:
                        old.copy(run_start, run_end, handle)
                        run_start = run_end = 0
                    data = _turtle(fragment.make())
                    handle.write(data)
                    index.add(fragment.key, offset, data)
                    length = len(data)
                offset += length
                if progress is not None and n % _PROGRESS_EVERY == 0:
                    total = max(total, n)
                    progress(STAGE, n, total)
            if old is not None:
                old.copy(run_start, run_end, handle)
        with output_errors(path):
            index.save(index_path(path))
    finally:
        if old is not None:
            old.close()
    if progress is not None:
        progress(STAGE, len(index), len(index))
    return TurtleWritten(len(index), reused)


def turtle_chunks(turtle: str | os.PathLike[str], size: int) -> Iterator[bytes] | None:
    """graph.ttl in Turtle documents of about `size` bytes each, cut between fragments (each
    with the prefixes), read one at a time; None when the file has no whole index. Together
    they hold exactly the file's triples: no two fragments share a subject."""
    path = Path(turtle)
    index = FragmentIndex.load(index_path(path))
    try:
        end_of_file = path.stat().st_size
    except OSError:
        return None
    if index is None or not index.describes(end_of_file):
        return None  # no index, or not this file's: load it whole
    last = len(index) - 1

    def chunks() -> Iterator[bytes]:
        with path.open("rb") as handle:
            start = index.offsets[0]
            cut = 0  # the fragment each chunk starts at
            while start < end_of_file:
                cut = bisect.bisect_left(index.offsets, start + size, lo=cut + 1)
                end = index.offsets[cut] if cut <= last else end_of_file
                handle.seek(start)
                yield HEADER + handle.read(end - start)
                start = end

    return chunks()


@dataclass(frozen=True)
class FragmentDiff:
    removed: bytes  # Turtle (with prefixes) of the fragments only the old build has
    added: bytes  # and of those only the new build has
    changed: int  # fragments removed + added
    total: int  # fragments in the new build


def changed_fragments(old_turtle: Path, new_turtle: Path) -> FragmentDiff | None:
    """What turns the old build's triples into the new one's, fragment by fragment; None if
    either index is missing or a fragment fails its CRC (then reload from scratch)."""
    old, new = _IndexedTurtle.open(old_turtle), _IndexedTurtle.open(new_turtle)
    try:
        if old is None or new is None:
            return None
        parts: list[list[bytes]] = [[HEADER], [HEADER]]
        for side, (this, other) in enumerate(((old, new), (new, old))):
            for key, i in this.where.items():
                if key not in other.where:
                    data = this.bytes_of(i)
                    if data is None:
                        return None
                    parts[side].append(data)
        changed = len(parts[0]) + len(parts[1]) - 2
        return FragmentDiff(b"".join(parts[0]), b"".join(parts[1]), changed, len(new.index))
    finally:
        for indexed in (old, new):
            if indexed is not None:
                indexed.close()
