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


def test_streamed_graph_json_is_the_one_shot_dump_and_its_digest(sample_graph, tmp_path: Path, monkeypatch) -> None:
    """`save` writes graph.json in batches (memory); the bytes are those of one `json.dumps` of
    the whole graph, and the content id is the SHA-256 of that dump, whatever the batch size."""
    import hashlib
    import json

    from kg import graph as kg_graph

    graph = sample_graph()
    data = kg_graph.to_json(graph)
    body = json.dumps({k: data[k] for k in ("meta", "nodes", "edges")}, ensure_ascii=False, separators=(",", ":"))
    digest = hashlib.sha256(body.encode("utf-8")).hexdigest()
    expected = f'{{"format":"kg-graph","version":1,"content_id":"{digest}",{body[1:]}'.encode()
    for batch in (1, 3, 1000):  # the sample graph has 10 nodes and 10 edges
        monkeypatch.setattr(kg_graph, "_SAVE_BATCH", batch)
        save(graph, tmp_path)
        assert (tmp_path / GRAPH_FILE).read_bytes() == expected
        assert content_id(tmp_path) == digest
        assert kg_graph.to_json(kg_graph.load(tmp_path))["nodes"] == data["nodes"]
