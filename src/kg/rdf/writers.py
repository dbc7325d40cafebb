"""Sinks writing the triple stream (`kg.rdf.triples`) to files, and `kg export`.

Turtle, N-Triples and JSON-LD go through pyoxigraph's streaming serializer: fast at corpus
scale, and no in-memory rdflib graph is ever built for an export. N-Triples can be split
into shards for a triple store's bulk loader. GraphML, not RDF, is written by `kg.graph`.
Files are written atomically (`kg.util.atomic`).
"""

from __future__ import annotations

import contextlib
import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

import pyoxigraph as ox

from kg.errors import OutputError
from kg.graph import serialize_graphml, write_graphml
from kg.rdf.terms import DEFAULT_BASE, EXPORT_FORMATS, PREFIXES, ExportFormat, RdfFormat
from kg.rdf.triples import triples
from kg.util.atomic import open_output, output_errors

if TYPE_CHECKING:
    import networkx as nx

TURTLE_FILE = "graph.ttl"  # written by `kg build` next to graph.json
_OX_FORMATS = {"ttl": ox.RdfFormat.TURTLE, "nt": ox.RdfFormat.N_TRIPLES, "jsonld": ox.RdfFormat.JSON_LD}


def serialize(graph: nx.DiGraph[str], output: IO[bytes], *, format: RdfFormat = "ttl", base: str = DEFAULT_BASE) -> int:
    """Stream the graph's RDF to a binary file object (Turtle uses the kg prefixes).

    JSON-LD is written in expanded form (no @context), as pyoxigraph streams it.
    Returns the number of triples written.
    """
    if format not in _OX_FORMATS:
        raise OutputError(f"unsupported RDF format {format!r} (choose {', '.join(_OX_FORMATS)})")
    prefixes = PREFIXES if format == "ttl" else None
    counter = _Counter(triples(graph, base=base))
    ox.serialize(counter, output, _OX_FORMATS[format], prefixes=prefixes)
    return counter.count


class _Counter:
    """Counts the items of an iterator as a consumer pulls them."""

    def __init__(self, items: Iterator[ox.Triple]) -> None:
        self.items = items
        self.count = 0

    def __iter__(self) -> Iterator[ox.Triple]:
        for item in self.items:
            self.count += 1
            yield item


def write_rdf(graph: nx.DiGraph[str], path: str | os.PathLike[str], *, format: RdfFormat = "ttl", base: str = DEFAULT_BASE) -> int:
    """Write the graph as Turtle, N-Triples or JSON-LD, atomically. Returns the triple count."""
    with output_errors(path), open_output(path) as handle:
        return serialize(graph, handle, format=format, base=base)


def shard_paths(path: str | os.PathLike[str], shards: int) -> list[Path]:
    """``graph.nt`` → ``graph-00000-of-00004.nt`` … (the names `write_nt_shards` uses)."""
    target = Path(path)
    stem = target.name[: -len(".nt")] if target.name.endswith(".nt") else target.name
    return [target.with_name(f"{stem}-{i:05d}-of-{shards:05d}.nt") for i in range(shards)]


def write_nt_shards(graph: nx.DiGraph[str], path: str | os.PathLike[str], *, shards: int, base: str = DEFAULT_BASE) -> int:
    """Split the N-Triples over `shards` files, a subject's triples always in one file.

    The shard of a triple is CRC-32 of its subject IRI modulo `shards`: stable across runs
    and machines, independent of graph size, streamed (never more than a buffer in memory).
    Each file is valid N-Triples on its own; a store bulk-loads them in any order.
    Returns the number of triples written (over all shards).
    """
    if shards < 1:
        raise OutputError(f"shards must be at least 1, got {shards}")
    paths = shard_paths(path, shards)
    buffers: list[list[ox.Triple]] = [[] for _ in range(shards)]
    count = 0
    with output_errors(path), contextlib.ExitStack() as stack:
        handles = [stack.enter_context(open_output(p)) for p in paths]
        last_subject, index = None, 0
        for triple in triples(graph, base=base):
            count += 1
            subject = triple.subject
            if subject != last_subject:  # triples come grouped by subject: hash once per group
                assert not isinstance(subject, ox.Triple)  # kg writes no RDF-star: a subject is an IRI or a blank node
                last_subject, index = subject, zlib.crc32(subject.value.encode("utf-8")) % shards
            buffer = buffers[index]
            buffer.append(triple)
            if len(buffer) >= 50_000:
                # serialise to bytes, then one write: far faster than letting pyoxigraph
                # write piecemeal into a Python file object
                handles[index].write(ox.serialize(buffer, format=ox.RdfFormat.N_TRIPLES) or b"")
                buffer.clear()
        for index, buffer in enumerate(buffers):
            if buffer:
                handles[index].write(ox.serialize(buffer, format=ox.RdfFormat.N_TRIPLES) or b"")
    return count


@dataclass(frozen=True)
class ExportResult:
    paths: tuple[str, ...]
    triples: int | None  # None for GraphML (not RDF)


def export(
    graph: nx.DiGraph[str],
    path: str | os.PathLike[str],
    *,
    format: ExportFormat = "ttl",
    shards: int | None = None,
    base: str = DEFAULT_BASE,
) -> ExportResult:
    """`kg export`: write the graph in `format` to `path`, or to N-Triples shards."""
    if format not in EXPORT_FORMATS:
        raise OutputError(f"unsupported export format {format!r} (choose {', '.join(EXPORT_FORMATS)})")
    if shards is not None:
        if format != "nt":
            raise OutputError(f"shards are N-Triples files: format must be 'nt', not {format!r}")
        count = write_nt_shards(graph, path, shards=shards, base=base)
        return ExportResult(tuple(str(p) for p in shard_paths(path, shards)), count)
    if format == "graphml":
        write_graphml(graph, path)
        return ExportResult((str(path),), None)
    return ExportResult((str(path),), write_rdf(graph, path, format=format, base=base))


def write_stream(graph: nx.DiGraph[str], output: IO[bytes], *, format: ExportFormat = "ttl", base: str = DEFAULT_BASE) -> int | None:
    """Write to an open binary stream (``kg export -o -``)."""
    if format == "graphml":
        serialize_graphml(graph, output)
        return None
    return serialize(graph, output, format=format, base=base)
