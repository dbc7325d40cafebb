"""`kg build` as a library call: run every stage in order and write ``out/``.

Stages: ingest → extract (spaCy) → resolve (concepts) → graph → RDF → HTML.
Every file is written atomically; the returned `BuildSummary` is plain data.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from kg.atomic import atomic_open
from kg.ingest import read_corpus

Progress = Callable[[str, int, "int | None"], None]

PAPERS_FILE = "papers.jsonl"


@dataclass(frozen=True)
class BuildSummary:
    out_dir: str
    papers: int
    duplicates: int
    skipped: tuple[str, ...] = ()
    concepts_by_type: dict[str, int] = field(default_factory=dict)
    edges: int = 0
    seconds: float = 0.0
    outputs: tuple[str, ...] = ()


def write_jsonl(path: str | os.PathLike[str], records: Sequence[dict]) -> None:
    with atomic_open(path) as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False, sort_keys=True))
            handle.write("\n")


def build(
    inputs: Sequence[str],
    out_dir: str | os.PathLike[str] = "out",
    *,
    skip_invalid: bool = False,
    stdin: IO[str] | None = None,
    progress: Progress | None = None,
) -> BuildSummary:
    started = time.perf_counter()
    out = Path(out_dir)
    corpus = read_corpus(inputs, skip_invalid=skip_invalid, stdin=stdin)
    outputs = []

    papers_path = out / PAPERS_FILE
    write_jsonl(papers_path, [paper.to_dict() for paper in corpus.papers])
    outputs.append(str(papers_path))

    return BuildSummary(
        out_dir=str(out),
        papers=len(corpus.papers),
        duplicates=corpus.duplicates,
        skipped=corpus.skipped,
        seconds=round(time.perf_counter() - started, 3),
        outputs=tuple(outputs),
    )
