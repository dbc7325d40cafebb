"""The front half of every build: papers → extractions → concepts → mentions found again.

`find_concepts` runs per-paper extraction (from the cache where it can, the rest on worker
processes or Dask: `kg.extract.runner`), then the corpus-wide stages in order: `kg.concepts.title_roles`
marks the name a title opens with as proposed, `kg.concepts.resolve` merges mentions into concepts,
`kg.concepts.propagate` finds every concept again wherever the corpus names it; `kg.results.link` then
ties each paper's result claims to those concepts. `kg build` and `kg extract` both call it, so they report the same mentions.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kg.concepts.propagate import propagate
from kg.concepts.resolve import resolve
from kg.concepts.title_roles import mark_title_names
from kg.extract.runner import EXTRACT_STAGE, ExtractionStats, run_extraction
from kg.extract.scoring import default_min_score, load_scorer, score_extractions, without_mentions_below
from kg.model import DEFAULT_RECOGNIZER, Paper, PaperEntities, PaperExtraction, Progress, Resolution, Result
from kg.results.link import link_results
from kg.util.stages import StageClock


@dataclass(frozen=True)
class CorpusConcepts:
    """What the front half returns: resolved mentions and concepts, each paper's result claims
    (parallel to the papers), and how extraction ran."""

    resolution: Resolution
    stats: ExtractionStats
    results: tuple[tuple[Result, ...], ...] = ()


def resolve_corpus(
    papers: Sequence[Paper], extractions: Sequence[PaperExtraction], *, clock: StageClock | None = None, min_score: float | None = None
) -> Resolution:
    """Corpus-wide concepts for per-paper extractions (parallel to `papers`): the names titles
    open with marked proposed; every mention scored (`kg.extract.scoring`) and those below
    `min_score` dropped (None: the threshold chosen on kg's gold dev set; 0 keeps all); then
    resolve, then propagate (each a stage of `clock`). Only concepts of kept mentions spread."""
    clock = clock or StageClock()
    scorer = load_scorer()
    threshold = default_min_score() if min_score is None else min_score
    with clock.stage("Resolving concepts", len(papers)) as report:
        scored = score_extractions(papers, mark_title_names(papers, extractions), scorer)
        resolved = resolve(without_mentions_below(scored, threshold), report=report)
    with clock.stage("Propagating concepts", len(papers)) as report:
        return propagate(papers, resolved, report=report, concept_scores=scorer is not None)


def find_concepts(
    papers: Sequence[Paper],
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    workers: int = 1,
    dask_address: str | None = None,
    progress: Progress | None = None,
    recognizer: str | None = DEFAULT_RECOGNIZER,
    clock: StageClock | None = None,
    min_score: float | None = None,
) -> CorpusConcepts:
    """Extract every paper (cached in `cache_dir` unless None), then resolve and propagate.
    `recognizer`: the trained model folder (the shipped one by default; None: rules alone).
    `clock` times the three stages (and reports them to its progress, which replaces `progress`).
    `min_score`: mentions scored below it are dropped (see `resolve_corpus`)."""
    clock = clock or StageClock(progress)
    with clock.stage(EXTRACT_STAGE, reports_itself=True):
        extractions, stats = run_extraction(
            papers, cache_dir=cache_dir, workers=workers, dask_address=dask_address, progress=clock.progress, recognizer=recognizer
        )
    resolution = resolve_corpus(papers, extractions, clock=clock, min_score=min_score)
    with clock.stage("Linking results", len(papers)) as report:
        results = link_results(papers, [x.claims for x in extractions], resolution.entities, resolution.concepts)
        report(len(papers))
    return CorpusConcepts(resolution, stats, results)


def entities_record(paper: Paper, entities: PaperEntities) -> dict[str, Any]:
    """One line of `kg extract` / ``out/entities.jsonl``: the paper and its resolved mentions."""
    return {
        "id": paper.id,
        "title": paper.title,
        "entities": [
            {
                "start": m.start,
                "end": m.end,
                "text": m.text,
                "label": m.label,
                "concept": m.concept,
                "role": m.role,
                "source": m.source,
                "score": m.score,
                "where": m.where,
            }
            for m in entities.mentions
        ],
    }
