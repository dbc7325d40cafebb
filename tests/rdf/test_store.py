"""The Oxigraph store `kg build` leaves next to graph.json (`kg.rdf.store.write_store`): current
after a build (the first `kg sparql` only opens it), the same triples whether bulk-loaded
from graph.ttl or streamed from the graph, kept when already current, and an OutputError
when it cannot be written."""

from __future__ import annotations

import errno
from pathlib import Path

import pyoxigraph as ox
import pytest

from kg.errors import OutputError
from kg.graph import save
from kg.rdf import store as kg_store
from kg.rdf.writers import write_rdf
from kg.sparql import engine as sparql


def quads(store: ox.Store) -> set[ox.Quad]:
    return set(store)


def test_kg_build_leaves_a_current_store(seeds_out: Path) -> None:
    store_dir = seeds_out / kg_store.STORE_DIR
    stamp = kg_store._stamp(seeds_out / "graph.json", kg_store.DEFAULT_BASE)
    assert kg_store._open_current(store_dir, stamp) is not None  # no rebuild needed
    papers = sparql.query(seeds_out, "SELECT (COUNT(*) AS ?n) WHERE { ?p a fabio:ResearchPaper }", backend="oxigraph")
    assert [row[0].value for row in papers.rows] == ["38"]


def test_bulk_load_from_turtle_holds_the_streamed_triples(sample_graph, tmp_path: Path) -> None:
    graph = sample_graph()
    save(graph, tmp_path)
    write_rdf(graph, tmp_path / "graph.ttl")
    kg_store.write_store(graph, tmp_path, turtle=tmp_path / "graph.ttl")
    from_turtle = quads(ox.Store.read_only(str(tmp_path / kg_store.STORE_DIR)))
    assert from_turtle == quads(kg_store.to_store(graph)) and len(from_turtle) == 322
    assert not list(tmp_path.glob(".graph.oxigraph.*"))  # no temporary folders left


@pytest.mark.parametrize("chunk", [1, 2_000, 10**9])  # every fragment alone, a few at a time, all at once
def test_bulk_load_in_pieces_holds_the_same_triples(sample_graph, tmp_path: Path, monkeypatch, chunk: int) -> None:
    """kg build's graph.ttl has a fragment index: the store loads it a piece at a time (memory)."""
    from kg.rdf.fragments import turtle_chunks, write_turtle

    graph = sample_graph()
    save(graph, tmp_path)
    written = write_turtle(graph, tmp_path / "graph.ttl")
    pieces = list(turtle_chunks(tmp_path / "graph.ttl", chunk))
    expected = {1: written.fragments, 10**9: 1}.get(chunk)
    assert len(pieces) == expected if expected else 1 < len(pieces) < written.fragments  # the sample's Turtle is about 20 kB
    monkeypatch.setattr(kg_store, "BULK_LOAD_CHUNK", chunk)
    kg_store.write_store(None, tmp_path, turtle=tmp_path / "graph.ttl")
    loaded = quads(ox.Store.read_only(str(tmp_path / kg_store.STORE_DIR)))
    assert loaded == quads(kg_store.to_store(graph)) and len(loaded) == 322


def test_a_turtle_file_its_index_does_not_describe_is_loaded_whole(sample_graph, tmp_path: Path) -> None:
    from kg.rdf.fragments import turtle_chunks, write_turtle

    graph = sample_graph()
    save(graph, tmp_path)
    write_turtle(graph, tmp_path / "graph.ttl")
    with (tmp_path / "graph.ttl").open("ab") as handle:  # one more triple than the index knows of
        handle.write(b"<urn:x:s> <urn:x:p> <urn:x:o> .\n")
    assert turtle_chunks(tmp_path / "graph.ttl", 1) is None
    kg_store.write_store(None, tmp_path, turtle=tmp_path / "graph.ttl")
    assert len(ox.Store.read_only(str(tmp_path / kg_store.STORE_DIR))) == 323


@pytest.mark.parametrize("content", ['{"updates": 1e400, "fragments": 0}', '{"updates": -50, "fragments": -1}', "not json", '{"updates": "x"}'])
def test_a_damaged_churn_file_counts_from_zero(tmp_path: Path, content: str) -> None:
    (tmp_path / kg_store.CHURN_FILE).write_text(content, encoding="utf-8")
    assert kg_store._read_churn(tmp_path) == (0, 0)
    assert kg_store._next_churn((0, 0), 1, 100) == (1, 1)
    assert kg_store._next_churn((kg_store.COMPACT_AFTER_UPDATES - 1, 0), 1, 100) is None  # the last update before compaction


def test_a_current_store_is_kept_and_a_stale_one_replaced(sample_graph, tmp_path: Path) -> None:
    graph = sample_graph()
    save(graph, tmp_path)
    stamp_file = kg_store.write_store(graph, tmp_path).path / kg_store.STAMP_FILE
    first = stamp_file.stat().st_mtime_ns
    kg_store.write_store(graph, tmp_path)
    assert stamp_file.stat().st_mtime_ns == first
    graph.remove_node("paper:p3/x y")
    save(graph, tmp_path)
    kg_store.write_store(graph, tmp_path)
    assert stamp_file.stat().st_mtime_ns != first
    count = sparql.query(tmp_path, "SELECT (COUNT(*) AS ?n) WHERE { ?p a fabio:ResearchPaper }", backend="oxigraph")
    assert [row[0].value for row in count.rows] == ["2"]


def test_a_store_that_cannot_be_written_is_an_output_error(sample_graph, tmp_path: Path, monkeypatch) -> None:
    graph = sample_graph()
    save(graph, tmp_path)

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(kg_store, "_rebuild_store", full)
    with pytest.raises(OutputError, match=r"cannot write .*graph\.oxigraph: No space left on device"):
        kg_store.write_store(graph, tmp_path)
