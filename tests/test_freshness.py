"""Files derived from graph.json (related.idx, graph.oxigraph/) share one freshness stamp.

The stamp is graph.json's content id, so a graph that changes while keeping its size and
mtime still makes them stale, and a copy of an unchanged graph does not.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from kg.graph import GRAPH_FILE, content_id, graph_stamp, save
from kg.related_work import rank as related
from kg.sparql import engine as sparql

TITLES = "SELECT ?t WHERE { ?p dcterms:identifier 'p1' ; dcterms:title ?t }"


def resave_keeping_size_and_mtime(folder: Path, title: str, graph) -> None:
    """Give paper p1 another title of the same length; put graph.json's size and mtime back."""
    path = folder / GRAPH_FILE
    before = path.stat()
    assert len(graph.nodes["paper:p1"]["title"]) == len(title)
    graph.nodes["paper:p1"]["title"] = title
    save(graph, folder)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def test_stamp_is_the_content_id(sample_graph, tmp_path: Path) -> None:
    save(sample_graph(), tmp_path)
    stamp = graph_stamp(tmp_path)
    assert stamp == {"content_id": content_id(tmp_path)} == graph_stamp(tmp_path / GRAPH_FILE)
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(tmp_path / GRAPH_FILE, copy / GRAPH_FILE)  # another mtime, same content
    assert graph_stamp(copy) == stamp


def test_stamp_of_a_graph_without_content_id(tmp_path: Path) -> None:
    path = tmp_path / GRAPH_FILE
    path.write_text('{"format":"kg-graph","version":1,"meta":{},"nodes":[],"edges":[]}', encoding="utf-8")
    assert graph_stamp(tmp_path) == {"size": path.stat().st_size, "mtime_ns": path.stat().st_mtime_ns}


def test_store_is_rebuilt_when_the_content_changes_but_size_and_mtime_do_not(sample_graph, tmp_path: Path) -> None:
    save(sample_graph(), tmp_path)
    assert [row[0].value for row in sparql.query(tmp_path, TITLES, backend="oxigraph").rows] == ["HippoRAG: memory"]
    resave_keeping_size_and_mtime(tmp_path, "HippoRAG: MEMORY", sample_graph())
    assert [row[0].value for row in sparql.query(tmp_path, TITLES, backend="oxigraph").rows] == ["HippoRAG: MEMORY"]


def test_index_is_stale_when_the_content_changes_but_size_and_mtime_do_not(sample_graph, tmp_path: Path) -> None:
    graph = sample_graph()
    save(graph, tmp_path)
    related.write_index(graph, tmp_path)
    index, source = related.open_index(tmp_path)
    assert source == "index"
    resave_keeping_size_and_mtime(tmp_path, "HippoRAG: MEMORY", sample_graph())
    index, source = related.open_index(tmp_path)
    assert source == "graph"
    assert "HippoRAG: MEMORY" in index.titles
