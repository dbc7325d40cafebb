"""`kg build` as a library call (`kg.build`): run every stage in order and write ``out/``.

Stages: ingest → extract (spaCy) → resolve (concepts) → propagate (lexicon) → graph → RDF → HTML.
Every file is written atomically; the returned `BuildSummary` is plain data.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import IO

from kg.atomic import atomic_open, check_output_dir, make_output_dir
from kg.ingest import read_corpus
from kg.model import DEFAULT_RECOGNIZER, Progress

PAPERS_FILE = "papers.jsonl"
ENTITIES_FILE = "entities.jsonl"
CONCEPTS_FILE = "concepts.jsonl"


@dataclass(frozen=True)
class BuildSummary:
    out_dir: str
    papers: int
    duplicates: int
    skipped: tuple[str, ...] = ()
    concepts_by_type: dict[str, int] = field(default_factory=dict)
    edges: int = 0
    cached: int = 0  # papers whose extraction came from the cache
    extracted: int = 0  # papers run through spaCy in this build
    seconds: float = 0.0
    outputs: tuple[str, ...] = ()


def write_jsonl(path: str | os.PathLike[str], records: Sequence[dict]) -> None:
    with atomic_open(path) as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False, sort_keys=True))
            handle.write("\n")


def _created() -> str:
    """Build time (UTC, ISO 8601); SOURCE_DATE_EPOCH pins it for byte-for-byte reproducible builds."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    moment = datetime.fromtimestamp(int(epoch), tz=timezone.utc) if epoch else datetime.now(timezone.utc)
    return moment.replace(microsecond=0).isoformat()


def build(
    inputs: Sequence[str],
    out_dir: str | os.PathLike[str] = "out",
    *,
    skip_invalid: bool = False,
    stdin: IO[str] | None = None,
    progress: Progress | None = None,
    workers: int = 1,
    cache_dir: str | os.PathLike[str] | None = None,
    no_cache: bool = False,
    dask_address: str | None = None,
    recognizer: str | None = DEFAULT_RECOGNIZER,
) -> BuildSummary:
    """Run every stage; `workers` spaCy processes, or a Dask scheduler at `dask_address`
    ("local" starts a LocalCluster). Extraction results are cached in `cache_dir`
    (default ``OUT/cache``) unless `no_cache`."""
    started = time.perf_counter()
    out = Path(out_dir)
    from kg.pipeline import check_recognizer

    # Everything that can be found wrong is found before the first output file is replaced:
    # the output folder, the model, then every input record (ingestion refuses what extraction
    # could not take: surrogates, over-long abstracts).
    check_output_dir(out)
    check_recognizer(recognizer)  # a bad model folder fails before anything is written
    corpus = read_corpus(inputs, skip_invalid=skip_invalid, stdin=stdin, progress=progress)
    make_output_dir(out)
    outputs = []

    papers_path = out / PAPERS_FILE
    write_jsonl(papers_path, [paper.to_dict() for paper in corpus.papers])
    outputs.append(str(papers_path))

    # Extract (spaCy, per paper) → resolve (corpus-wide concepts) → propagate → graph.
    from kg.concepts import entities_record, find_concepts
    from kg.graph import build_graph, save
    from kg.pipeline import load_pipeline, pipeline_info
    from kg.runner import CACHE_DIR

    nlp = load_pipeline(recognizer=recognizer)
    found = find_concepts(
        corpus.papers,
        cache_dir=None if no_cache else (cache_dir if cache_dir is not None else out / CACHE_DIR),
        workers=workers,
        dask_address=dask_address,
        progress=progress,
        recognizer=recognizer,
    )
    resolution, extraction_stats = found.resolution, found.stats
    entities_path, concepts_path = out / ENTITIES_FILE, out / CONCEPTS_FILE
    write_jsonl(entities_path, [entities_record(p, e) for p, e in zip(corpus.papers, resolution.entities, strict=True)])
    write_jsonl(concepts_path, [concept.to_dict() for concept in resolution.concepts])
    meta = {"pipeline": pipeline_info(nlp), "created": _created()}
    graph = build_graph(corpus.papers, resolution.entities, resolution.concepts, meta=meta)
    graph_path = save(graph, out)
    outputs.extend([str(entities_path), str(concepts_path), str(graph_path)])
    # RDF: streamed through pyoxigraph (fast at corpus scale), validated by schemas/shapes.ttl.
    from kg.rdf.writers import TURTLE_FILE, write_rdf

    write_rdf(graph, out / TURTLE_FILE)
    outputs.append(str(out / TURTLE_FILE))
    # The interactive page (as `kg html` draws it by default): self-contained, offline.
    from kg.html import HTML_FILE, write_html

    outputs.append(write_html(graph, out / HTML_FILE).path)
    # The related-papers index, so `kg related` answers without loading graph.json.
    from kg.related_work import write_index

    outputs.append(str(write_index(graph, out)))
    # The Oxigraph store `kg sparql` and `kg serve` open, bulk-loaded from graph.ttl.
    from kg.store import write_store

    outputs.append(str(write_store(graph, out, turtle=out / TURTLE_FILE)))
    concepts_by_type = dict(sorted(Counter(concept.type for concept in resolution.concepts).items()))
    edges = graph.number_of_edges()

    return BuildSummary(
        out_dir=str(out),
        papers=len(corpus.papers),
        duplicates=corpus.duplicates,
        skipped=corpus.skipped,
        concepts_by_type=concepts_by_type,
        edges=edges,
        cached=extraction_stats.cached,
        extracted=extraction_stats.extracted,
        seconds=round(time.perf_counter() - started, 3),
        outputs=tuple(outputs),
    )
