"""Lexicon propagation on a built graph's records: time, added links, and a sample to check by eye.

Reads ``papers.jsonl``, ``entities.jsonl`` and ``concepts.jsonl`` of a `kg build` output (no
spaCy: the resolved mentions are taken as they are), runs `kg.concepts.propagate.propagate`, prints
how long it took and how many concepts each paper has before and after, and prints a seeded
random sample of the added mentions with their context. With ``--out DIR`` it also writes the
propagated graph (graph.json with the old graph's meta, related.idx, entities.jsonl) there, for
``bench/related_eval.py``.

    .venv/bin/python -P bench/propagate.py --graph /work/bench-data/graph-30k \\
        --out /work/bench-data/graph-30k-prop --sample 50
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from kg.concepts.propagate import LEXICON_SOURCE, build_lexicon, propagate
from kg.model import Concept, Mention, Paper, PaperEntities, Resolution
from kg.text.vocab import load_vocabulary
from kg.util.atomic import atomic_open


def read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def load_records(folder: Path) -> tuple[list[Paper], Resolution]:
    """Papers and their resolved mentions as `kg build` wrote them (sentence spans are not
    stored in entities.jsonl: they come back empty, 0–0, which propagation treats as unknown)."""
    papers = [Paper.from_dict(record) for record in read_jsonl(folder / "papers.jsonl")]
    by_id = {record["id"]: record["entities"] for record in read_jsonl(folder / "entities.jsonl")}
    entities = tuple(
        PaperEntities(paper.id, tuple(Mention(**m, sent_start=0, sent_end=0) for m in by_id.get(paper.id, ()))) for paper in papers
    )
    concepts = tuple(Concept.from_dict(record) for record in read_jsonl(folder / "concepts.jsonl"))
    return papers, Resolution(entities, concepts)


def concepts_per_paper(entities: Sequence[PaperEntities]) -> list[int]:
    return [len({m.concept for m in record.mentions}) for record in entities]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--graph", default="/work/bench-data/graph-30k", help="a `kg build` output folder")
    parser.add_argument("--out", help="write the propagated graph and index here")
    parser.add_argument("--sample", type=int, default=50, help="added mentions to print (seeded)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    folder = Path(args.graph)

    tick = time.perf_counter()
    papers, resolution = load_records(folder)
    print(f"{folder}: {len(papers):,} papers, {len(resolution.concepts):,} concepts, "
          f"{sum(len(e.mentions) for e in resolution.entities):,} mentions (read in {time.perf_counter() - tick:.1f} s)")

    tick = time.perf_counter()
    lexicon = build_lexicon(resolution.concepts, vocabulary=load_vocabulary())
    lexicon_seconds = time.perf_counter() - tick
    tick, cpu = time.perf_counter(), time.process_time()
    propagated = propagate(papers, resolution, lexicon=lexicon)
    match_seconds, match_cpu = time.perf_counter() - tick, time.process_time() - cpu
    print(f"lexicon: {len(lexicon.phrases):,} phrases + {len(lexicon.exact):,} exact-case names, built in {lexicon_seconds:.1f} s; "
          f"matching {len(papers):,} abstracts took {match_seconds:.1f} s wall, {match_cpu:.1f} s CPU "
          f"(total {lexicon_seconds + match_seconds:.1f} s wall)")

    before, after = concepts_per_paper(resolution.entities), concepts_per_paper(propagated.entities)
    added = [(paper, m) for paper, record in zip(papers, propagated.entities, strict=True) for m in record.mentions if m.source == LEXICON_SOURCE]
    old_links = sum(before)
    new_links = sum(after)
    df = Counter(concept for record in propagated.entities for concept in {m.concept for m in record.mentions})
    singletons = sum(1 for record in propagated.entities for c in {m.concept for m in record.mentions} if df[c] == 1)
    print(f"added mentions: {len(added):,}; paper–concept links {old_links:,} → {new_links:,} "
          f"(+{new_links - old_links:,}); links to a concept no other paper has: {singletons / new_links:.1%}")
    print(f"concepts per paper: mean {statistics.mean(before):.2f} → {statistics.mean(after):.2f}, "
          f"median {statistics.median(before):g} → {statistics.median(after):g}")
    gained = Counter(m.concept for _, m in added)
    print("most added concepts: " + ", ".join(f"{c} +{n}" for c, n in gained.most_common(15)))

    if args.sample:
        print(f"\nrandom sample of {args.sample} added mentions (seed {args.seed}):")
        for number, (paper, m) in enumerate(random.Random(args.seed).sample(added, min(args.sample, len(added))), 1):
            text = paper.abstract
            left, right = max(0, m.start - 60), min(len(text), m.end + 60)
            context = " ".join((text[left : m.start] + "[[" + m.text + "]]" + text[m.end : right]).split())
            print(f"{number:3}. {m.concept:<45} …{context}…")

    if args.out:
        from kg.graph import build_graph, save
        from kg.related_work.rank import write_index

        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        with (folder / "graph.json").open(encoding="utf-8") as handle:
            meta = json.load(handle).get("meta", {})
        tick = time.perf_counter()
        graph = build_graph(papers, propagated.entities, propagated.concepts, meta=meta)
        save(graph, out)
        write_index(graph, out)
        from kg.builder import write_jsonl
        from kg.concepts.find import entities_record

        write_jsonl(out / "entities.jsonl", [entities_record(p, e) for p, e in zip(papers, propagated.entities, strict=True)])
        for name in ("papers.jsonl", "concepts.jsonl"):
            with atomic_open(out / name) as handle:
                handle.write((folder / name).read_text(encoding="utf-8"))
        print(f"\nwrote {out} (graph.json, related.idx, entities.jsonl) in {time.perf_counter() - tick:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
