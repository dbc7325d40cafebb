"""The ways to embed (kg.related_work.embed.EMBEDDERS): each gives its own unit vectors, the
default one needs no torch, vectors of two embedders are never mixed, and `--embedder` picks one.

The torch embedder's tests carry the ``torch`` marker: they run only in their own leg
(``pytest -m torch``, after ``pip install torch==2.13.0 && pip install -e '.[test,embed-torch]'``) and
fail there, not skip, when torch is missing. The default leg checks the ONNX model against
torch's vectors stored in tests/fixtures/embed/ (reference.npz, made by make_reference.py there).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import kg
from kg.cli import main
from kg.errors import ExitCode
from kg.ingest import read_corpus
from kg.related_work import embed

TEXTS = [
    "Graph neural networks for molecular property prediction. We propose a message passing network for molecules.",
    "Attention is all you need. The Transformer relies entirely on attention for machine translation.",
    "Deep residual learning for image recognition. Residual networks ease the training of very deep networks on ImageNet.",
    "A text with unusual characters: naïve Bayes, Schrödinger, 数据, and an emoji 🙂, and a very long tail " + "word " * 600,
]
REFERENCE = Path(__file__).resolve().parents[1] / "fixtures" / "embed"
# Each embedder, the torch one in the torch leg only.
NAMES = [pytest.param(name, marks=pytest.mark.torch) if name == "torch" else name for name in embed.EMBEDDERS]


@pytest.fixture(scope="module")
def vectors() -> Callable[[str], np.ndarray]:
    """`vectors(name)`: TEXTS encoded by that embedder, once per module."""
    done: dict[str, np.ndarray] = {}

    def encoded(name: str) -> np.ndarray:
        if name not in done:
            done[name] = embed.encoder(name)(TEXTS)
        return done[name]

    return encoded


@pytest.mark.parametrize("name", NAMES)
def test_each_embedder_gives_unit_vectors_of_its_size_deterministically(vectors, name):
    matrix, chosen = vectors(name), embed.EMBEDDERS[name]
    assert matrix.shape == (len(TEXTS), chosen.dimensions) and matrix.dtype == np.float32
    assert embed.unit_rows(matrix), name
    again = embed.encoder(name)(list(reversed(TEXTS)))[::-1]  # batch order does not change a text's vector
    assert np.allclose(matrix, again, atol=1e-5), name


@pytest.fixture(scope="module")
def reference() -> tuple[list[str], np.ndarray]:
    """tests/fixtures/embed: the texts and the torch embedder's vectors of them."""
    texts = json.loads((REFERENCE / "texts.json").read_text(encoding="utf-8"))["texts"]
    with np.load(REFERENCE / "reference.npz", allow_pickle=False) as stored:
        assert list(stored["texts"]) == texts, "texts.json changed: run tests/fixtures/embed/make_reference.py (needs torch)"
        assert str(stored["model"]) == embed.EMBEDDERS["torch"].model
        return texts, stored["vectors"]


def test_onnx_int8_agrees_with_the_torch_models_stored_vectors(reference):
    # The shipped int8 export of the same weights, read to the same length (256 tokens).
    texts, torch_vectors = reference
    assert len(texts) >= 12 and torch_vectors.shape == (len(texts), embed.MINILM_DIMENSIONS)
    cosines = (embed.encoder("onnx")(texts) * torch_vectors).sum(axis=1)
    assert cosines.min() > 0.97, cosines


@pytest.mark.torch
def test_torch_still_gives_the_stored_reference_vectors(reference):
    # If torch, sentence-transformers or the weights changed on purpose: make_reference.py.
    texts, torch_vectors = reference
    now = embed.encoder("torch")(texts)
    assert np.allclose(now, torch_vectors, atol=1e-4), np.abs(now - torch_vectors).max()
    assert (now * embed.encoder("onnx")(texts)).sum(axis=1).min() > 0.97  # and the live ONNX vectors agree with it


def test_a_texts_onnx_vector_depends_on_its_first_256_tokens_alone(vectors):
    # TEXTS[3] is far longer than 256 tokens: what follows them does not change its vector, nor
    # does the batch it is encoded in (the int8 model's activation scales are per call).
    encode = embed.encoder("onnx")
    longer = encode([TEXTS[3] + " and a different ending about reinforcement learning"])
    assert np.array_equal(longer[0], vectors("onnx")[3])
    assert np.array_equal(encode([TEXTS[0]])[0], vectors("onnx")[0])


@pytest.mark.parametrize("name", NAMES)
def test_every_embedder_finds_the_text_on_the_same_topic(vectors, name):
    queries = ["message passing on molecular graphs", "neural machine translation with self-attention", "very deep convolutional image classifiers"]
    asked = embed.encoder(name)(queries)
    assert list(np.argmax(asked @ vectors(name)[:3].T, axis=1)) == [0, 1, 2], name


@pytest.mark.parametrize("name", NAMES)
def test_a_texts_vector_does_not_depend_on_its_batch(vectors, name):
    # What a cache holds must be what a build from scratch computes, byte for byte.
    encode = embed.encoder(name)
    for row in (0, 2):
        assert np.array_equal(encode([TEXTS[row]])[0], vectors(name)[row]), name


def test_the_default_embedder_imports_no_torch(torch_stand_ins):
    code = (
        "import sys; from kg.related_work import embed; v = embed.encoder()(['a text about graphs']); "
        "print(v.shape, sorted(m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, env=torch_stand_ins)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[-2] == "(1, 384) []"


def fake_encode(texts: list[str]) -> np.ndarray:
    """Unit vectors from a digest of each text: deterministic, no model."""
    rows = [np.random.default_rng(list(hashlib.sha256(t.encode()).digest())).standard_normal(embed.MINILM_DIMENSIONS) for t in texts]
    return np.stack([row / np.linalg.norm(row) for row in rows]).astype(np.float32)


FAKE = embed.Embedder(name="fake", model="test/fake-384", dimensions=embed.MINILM_DIMENSIONS, modules=("numpy",),
                      about="a stand-in for a second embedder", install="nothing", load=lambda: fake_encode)  # fmt: skip


@pytest.fixture(params=["fake", pytest.param("torch", marks=pytest.mark.torch)])
def other_embedder(request, monkeypatch) -> str:
    """An embedder besides the default: torch (in the torch leg), or a stand-in registered for the test."""
    if request.param == "fake":
        monkeypatch.setitem(embed.EMBEDDERS, FAKE.name, FAKE)
        monkeypatch.setitem(embed.MODEL_DIMENSIONS, FAKE.model, FAKE.dimensions)
    return request.param


def test_cache_keys_and_stored_files_name_the_embedder(tmp_path, seeds, other_embedder):
    papers = read_corpus([str(seeds)]).papers[:6]
    cache = tmp_path / "cache"
    model = embed.EMBEDDERS[other_embedder].model
    first = embed.embed_papers(papers, cache_dir=cache, embedder_name=other_embedder)
    assert first.encoded == 6 and first.model == model
    other = embed.embed_papers(papers, cache_dir=cache, embedder_name="onnx")
    assert other.encoded == 6  # another embedder's vectors are never taken from the cache
    assert embed.embed_papers(papers, cache_dir=cache, embedder_name=other_embedder).encoded == 0
    assert embed.embed_papers(papers, cache_dir=cache).encoded == 0  # the default: onnx
    embed.save(first, tmp_path)
    meta = json.loads((tmp_path / embed.EMBED_META_FILE).read_text())
    assert meta["model"] == model and meta["dimensions"] == 384
    assert embed.load(tmp_path, list(first.ids)).shape == (6, 384)
    meta["model"] = "someone-else/model"
    (tmp_path / embed.EMBED_META_FILE).write_text(json.dumps(meta))
    assert embed.load(tmp_path, list(first.ids)) is None  # vectors of an unknown model are not used
    meta["model"] = embed.EMBEDDERS["onnx"].model
    (tmp_path / embed.EMBED_META_FILE).write_text(json.dumps(meta))
    short = first.vectors[:, :256] / np.linalg.norm(first.vectors[:, :256], axis=1, keepdims=True)
    np.save(tmp_path / embed.EMBED_FILE, short.astype("<f4"))
    assert embed.load(tmp_path, list(first.ids)) is None  # 256-d unit vectors under a 384-d model's name


@pytest.mark.torch
def test_build_with_another_embedder_and_related_uses_it(tmp_path, seeds, capsys):
    out = tmp_path / "out"
    assert main(["build", str(seeds), "-o", str(out), "--embedder", "torch", "-q"]) == 0
    assert json.loads((out / embed.EMBED_META_FILE).read_text())["model"] == embed.EMBEDDERS["torch"].model
    assert main(["related", "HippoRAG 2", "--graph", str(out), "--top", "3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["signals"] == ["concepts", "lexical", "embedding"]
    graph = kg.load(out)
    assert len([1 for *_, d in graph.edges(data=True) if d.get("kind") == "similar"]) == 38 * embed.NEIGHBOURS


def test_unknown_embedder_is_a_usage_error(tmp_path, seeds, capsys):
    assert main(["build", str(seeds), "-o", str(tmp_path / "out"), "--embedder", "word2vec"]) == ExitCode.USAGE
    assert "'word2vec' is not one of 'onnx', 'torch'" in capsys.readouterr().err


def test_the_model_name_is_made_from_the_shipped_files():
    # A new export (bench/make_minilm_models.py) changes the digest: update ONNX_FILES_SHA256, and
    # with it the model name, so no cache or embeddings.json mixes old vectors with new ones.
    assert embed.shipped_onnx_digest() == embed.ONNX_FILES_SHA256, "the shipped ONNX model changed: set ONNX_FILES_SHA256 to its digest"
    assert embed.EMBEDDERS["onnx"].model.endswith(f"-{embed.MAX_TOKENS}-{embed.ONNX_FILES_SHA256[:12]}")


def test_damaged_shipped_model_files_are_refused(tmp_path, monkeypatch):
    from kg.errors import ModelError

    for name in embed.ONNX_FILES:
        (tmp_path / name).write_bytes((embed.MODELS / name).read_bytes())
    with (tmp_path / "tokenizer.json").open("ab") as handle:
        handle.write(b" ")
    monkeypatch.setattr(embed, "MODELS", tmp_path)
    with pytest.raises(ModelError, match="damaged: reinstall kg"):
        embed.encoder("onnx")


@pytest.mark.parametrize("model", [["x"], {"a": 1}, 384, None])
def test_forged_model_names_in_embeddings_json_are_ignored(tmp_path, model):
    ids = ["a", "b"]
    vectors = np.eye(2, 384, dtype="<f4")
    np.save(tmp_path / embed.EMBED_FILE, vectors)
    meta = {"model": model, "dimensions": 384, "papers": 2, "ids_sha256": embed.ids_digest(ids)}
    (tmp_path / embed.EMBED_META_FILE).write_text(json.dumps(meta))
    assert embed.load(tmp_path, ids) is None
    meta["model"] = embed.MODEL_NAME
    (tmp_path / embed.EMBED_META_FILE).write_text(json.dumps(meta))
    assert embed.load(tmp_path, ids).shape == (2, 384)  # the same files with a real name load


def test_a_fifo_in_place_of_the_vectors_is_not_read(tmp_path):
    import os

    ids = ["a", "b"]
    os.mkfifo(tmp_path / embed.EMBED_FILE)
    meta = {"model": embed.MODEL_NAME, "dimensions": 384, "papers": 2, "ids_sha256": embed.ids_digest(ids)}
    (tmp_path / embed.EMBED_META_FILE).write_text(json.dumps(meta))
    assert embed.load(tmp_path, ids) is None  # returns at once: np.load on a FIFO waited for a writer forever
