"""Stored embeddings that cannot be used are said so, once (issue 36): a damaged or non-finite
embeddings.npy was dropped silently, and `kg related` ranked differently without a word."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kg.builder import BuildOptions, build
from kg.cli import main
from kg.errors import EmbeddingsUnused
from kg.generations import resolve
from kg.related_work import embed
from kg.related_work.rank import find_related, open_index

PAPERS = [
    {"id": "a1", "title": "Transformers", "abstract": "We propose the Transformer, built on attention, and train it on WMT with GPUs."},
    {"id": "a2", "title": "BERT", "abstract": "We introduce BERT, a bidirectional Transformer encoder evaluated on GLUE."},
    {"id": "a3", "title": "ResNet", "abstract": "We train ResNet, a deep residual network, on ImageNet and report top-1 accuracy."},
]


@pytest.fixture
def out(tmp_path, monkeypatch) -> Path:
    """A build with vectors stored as `kg build --embed` stores them (made here: no model needed)."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    source = tmp_path / "papers.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in PAPERS), encoding="utf-8")
    folder = tmp_path / "out"
    build([str(source)], folder, BuildOptions(recognizer=None, no_cache=True))
    generation = resolve(folder).folder
    ids = open_index(folder)[0].paper_ids
    vectors = np.random.default_rng(0).normal(size=(len(ids), embed.DIMENSIONS))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    np.save(generation / embed.EMBED_FILE, vectors.astype("<f4"))
    meta = {"model": embed.MODEL_NAME, "dimensions": embed.DIMENSIONS, "papers": len(ids), "ids_sha256": embed.ids_digest(ids)}
    (generation / embed.EMBED_META_FILE).write_text(json.dumps(meta), encoding="utf-8")
    assert find_related(folder, "a1").signals == ("concepts", "lexical", "embedding")  # the stored vectors are used
    return folder


def spoil(out: Path, how: str) -> str:
    """Damage the stored vectors as `how` says; returns the reason the warning gives."""
    path = resolve(out).folder / embed.EMBED_FILE
    matrix = np.load(path)
    if how == "nan":
        matrix[1, 5] = np.nan
        np.save(path, matrix)
        return f"{embed.EMBED_FILE} holds vectors that are not finite and of unit length, as the encoder writes them"
    if how == "infinite":
        matrix[0, 0] = np.inf
        np.save(path, matrix)
        return f"{embed.EMBED_FILE} holds vectors that are not finite and of unit length, as the encoder writes them"
    if how == "truncated":
        path.write_bytes(path.read_bytes()[:200])
        return f"{embed.EMBED_FILE} is damaged ("
    if how == "empty":  # np.load raises EOFError: click read it as Ctrl-D ("Aborted.", exit 130)
        path.write_bytes(b"")
        return f"{embed.EMBED_FILE} is damaged (No data left in file)"
    if how == "bad header":
        path.write_bytes(b"\x93NUMPY\x01\x00\x10\x00{'descr': ?}     \n")
        return f"{embed.EMBED_FILE} is damaged ("
    if how == "pickled":
        np.save(path, np.array([{"a": 1}], dtype=object), allow_pickle=True)
        return f"{embed.EMBED_FILE} is damaged ("
    np.save(path, matrix[:, :100])
    return f"{embed.EMBED_FILE} holds float32 of shape (3, 100), not 3 vectors of {embed.DIMENSIONS} float32"


@pytest.mark.parametrize("how", ["nan", "infinite", "truncated", "shape", "empty", "bad header", "pickled"])
def test_kg_related_warns_once_and_ranks_without_them(out, capsys, how: str) -> None:
    reason = spoil(out, how)
    assert main(["related", "a1", "--graph", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["signals"] == ["concepts", "lexical"]
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Warning: the embeddings in {resolve(out).folder} cannot be used: {reason}")
    assert lines[0].endswith("; related papers are ranked without them")


def test_the_library_warns_once_per_folder(out) -> None:
    spoil(out, "nan")
    with pytest.warns(EmbeddingsUnused) as caught:
        first = find_related(out, "a1")
        second = find_related(out, "a2")
    assert len(caught) == 1 and first.signals == second.signals == ("concepts", "lexical")


@pytest.mark.parametrize("how", ["nan", "empty", "bad header"])
def test_kg_html_ranks_twice_and_warns_once(out, tmp_path, capsys, how: str) -> None:
    spoil(out, how)
    assert main(["html", "--graph", str(out), "-o", str(tmp_path / "page.html")]) in (0, None)
    assert capsys.readouterr().err.count("Warning: the embeddings in ") == 1


def test_an_empty_embeddings_file_is_warned_of_not_an_interrupt(out, capsys) -> None:
    """Found by the hostile review of issue 36: a 0-byte embeddings.npy makes np.load raise
    EOFError, which no check catches: click reads it as Ctrl-D, prints "Aborted." and kg exits
    130 (for `kg related` and `kg html`), no ranking at all."""
    (resolve(out).folder / embed.EMBED_FILE).write_bytes(b"")
    assert main(["related", "a1", "--graph", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["signals"] == ["concepts", "lexical"]
    assert captured.err.startswith(f"Warning: the embeddings in {resolve(out).folder} cannot be used: {embed.EMBED_FILE} ")
