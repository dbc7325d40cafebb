"""`kg export`: formats, default paths, stdout, N-Triples shards, errors."""

from __future__ import annotations

import json

import networkx as nx
import pytest
import rdflib

from kg.cli import main
from kg.errors import ExitCode
from kg.graph import save
from kg.rdf import convert


@pytest.fixture()
def expected_triples(sample_graph) -> set:
    return set(convert.to_rdflib(sample_graph()))


@pytest.mark.parametrize(("fmt", "parser"), [("ttl", "turtle"), ("nt", "nt"), ("jsonld", "json-ld")])
def test_export_rdf_formats_default_path(sample_dir, capsys, fmt: str, parser: str, expected_triples) -> None:
    assert main(["export", "--graph", str(sample_dir), "--format", fmt]) == 0
    path = sample_dir / f"graph.{fmt}"
    assert capsys.readouterr().out == f"wrote {path} (322 triples)\n"
    assert set(rdflib.Graph().parse(path, format=parser)) == expected_triples
    assert not list(sample_dir.glob(".graph.*.tmp"))  # atomic: no temporary file left


def test_export_is_byte_for_byte_reproducible(sample_dir, sample_graph, tmp_path_factory) -> None:
    other = tmp_path_factory.mktemp("again")
    save(sample_graph(), other)
    for folder in (sample_dir, other):
        assert main(["export", "--graph", str(folder), "-f", "ttl", "-o", str(folder / "x.ttl")]) == 0
    assert (sample_dir / "x.ttl").read_bytes() == (other / "x.ttl").read_bytes()


def test_export_base(sample_dir) -> None:
    out = sample_dir / "b.nt"
    assert main(["export", "--graph", str(sample_dir), "-f", "nt", "-o", str(out), "--base", "https://example.org/mine"]) == 0
    subjects = {str(s) for s in rdflib.Graph().parse(out, format="nt").subjects()}
    assert "https://example.org/mine/paper/p1" in subjects
    assert all(s.startswith("https://example.org/mine/") for s in subjects)


def test_export_graphml(sample_dir, capsys) -> None:
    assert main(["export", "--graph", str(sample_dir), "-f", "graphml", "-o", str(sample_dir / "g.graphml")]) == 0
    assert capsys.readouterr().out == f"wrote {sample_dir / 'g.graphml'} (10 nodes, 10 edges)\n"
    back = nx.read_graphml(sample_dir / "g.graphml")
    assert json.loads(back.nodes["concept:method/rag"]["alt_labels"]) == ["RAG"]


def test_export_to_stdout(sample_dir, capsysbinary, expected_triples) -> None:
    assert main(["export", "--graph", str(sample_dir), "-f", "nt", "-o", "-"]) == 0
    out = capsysbinary.readouterr().out
    assert set(rdflib.Graph().parse(data=out.decode("utf-8"), format="nt")) == expected_triples


def test_export_shards(sample_dir, capsys, expected_triples) -> None:
    target = sample_dir / "dump" / "kg.nt"
    assert main(["export", "--graph", str(sample_dir), "-f", "nt", "--shards", "4", "-o", str(target)]) == 0
    names = sorted(p.name for p in target.parent.iterdir())
    assert names == [f"kg-0000{i}-of-00004.nt" for i in range(4)]
    assert capsys.readouterr().out == f"wrote 4 shards (322 triples): {target.parent / names[0]} … {target.parent / names[-1]}\n"
    union = set()
    for name in names:
        union |= set(rdflib.Graph().parse(target.parent / name, format="nt"))
    assert union == expected_triples


def test_shards_load_into_a_store(sample_dir) -> None:
    import pyoxigraph as ox

    assert main(["export", "--graph", str(sample_dir), "-f", "nt", "--shards", "2"]) == 0
    store = ox.Store()
    for path in sorted(sample_dir.glob("graph-*-of-00002.nt")):
        store.bulk_load(path=str(path), format=ox.RdfFormat.N_TRIPLES)
    assert len(store) == 322


def test_shards_need_nt(sample_dir, capsys) -> None:
    assert main(["export", "--graph", str(sample_dir), "-f", "ttl", "--shards", "2"]) == ExitCode.USAGE
    assert "Error: --shards needs --format nt (got ttl)" in capsys.readouterr().err
    assert main(["export", "--graph", str(sample_dir), "-f", "nt", "--shards", "0"]) == ExitCode.USAGE


def test_export_missing_graph(tmp_path, capsys) -> None:
    assert main(["export", "--graph", str(tmp_path / "nope")]) == ExitCode.GRAPH_NOT_FOUND
    assert capsys.readouterr().err.startswith(f"Error: no graph at {tmp_path / 'nope'}")


def test_export_unwritable_output(sample_dir, capsys) -> None:
    blocker = sample_dir / "file"
    blocker.write_text("x", encoding="utf-8")
    assert main(["export", "--graph", str(sample_dir), "-o", str(blocker / "sub" / "g.ttl")]) == ExitCode.OUTPUT_ERROR
    assert capsys.readouterr().err.startswith(f"Error: cannot write {blocker / 'sub' / 'g.ttl'}: ")


def test_export_to_a_pipe_writes_in_place(sample_dir, expected_triples) -> None:
    """A device or FIFO is written, never replaced (a rename over /dev/null would break it)."""
    import os
    import stat
    import threading

    fifo = sample_dir / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    assert main(["export", "--graph", str(sample_dir), "-f", "nt", "-o", str(fifo)]) == 0
    reader.join(timeout=30)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert set(rdflib.Graph().parse(data=received[0].decode("utf-8"), format="nt")) == expected_triples


def test_export_to_a_folder_is_an_error(sample_dir, capsys) -> None:
    assert main(["export", "--graph", str(sample_dir), "-o", str(sample_dir)]) == ExitCode.OUTPUT_ERROR
    assert capsys.readouterr().err == f"Error: cannot write {sample_dir}: it is a folder\n"
