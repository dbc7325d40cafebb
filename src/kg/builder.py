"""`kg build` as a library call (`kg.build`): run every stage in order and write ``out/``.

Stages: ingest → extract (spaCy) → resolve (concepts) → propagate (lexicon) → graph → RDF → HTML.
The build is a transaction (`kg.generations`): every file goes into a new generation folder
that one atomic switch makes current, under an exclusive lock on the output folder. The
returned `BuildSummary` is plain data.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from kg.errors import OutputError
from kg.generations import Generation, OutputLock, check_names, clean_stale, current_folder, unlink_missing
from kg.ingest import PROGRESS_STAGE, read_corpus
from kg.model import DEFAULT_RECOGNIZER, Paper, Progress
from kg.util.atomic import atomic_open, check_output_dir, make_output_dir
from kg.util.memory import release_memory
from kg.util.places import refuse_cache_as_output, refuse_linked_state, same
from kg.util.stages import StageClock

if TYPE_CHECKING:
    from kg.extract.cache_location import CacheLocation
    from kg.extract.runner import ExtractionStats
    from kg.ingest.sources import Format
    from kg.model import Corpus
    from kg.rdf.fragments import TurtleWritten
    from kg.rdf.store import StoreWritten

PAPERS_FILE = "papers.jsonl"
ENTITIES_FILE = "entities.jsonl"
CONCEPTS_FILE = "concepts.jsonl"
# Every file a build writes (kg.graph, kg.rdf.writers, kg.html, kg.related_work.rank, kg.leaderboard name the last five).
OUTPUT_FILES = (PAPERS_FILE, ENTITIES_FILE, CONCEPTS_FILE, "graph.json", "graph.ttl", "graph.html", "related.idx", "leaderboard.idx")
EMBED_FILES = ("embeddings.npy", "embeddings.json")  # with embed only (kg.related_work.embed names them)


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
    embedded: int | None = None  # with embed: papers encoded in this build (the rest came from the cache)
    recomputed: int = 0  # cache rows refused (damaged, or forged: not fitting their paper) and computed again
    seconds: float = 0.0
    stages: tuple[tuple[str, float], ...] = ()  # (stage, wall seconds) in the order they ran
    memory: tuple[tuple[str, int | None, int | None], ...] = ()  # (stage, bytes held at its end, peak bytes so far)
    fragments: int = 0  # Turtle fragments in graph.ttl (`kg.rdf.fragments`)
    reused: int = 0  # of them, copied from the previous build (the rest were made now)
    store: str = ""  # how the SPARQL store was brought up to date: kept, updated, updated and compacted, or loaded
    outputs: tuple[str, ...] = ()


def write_jsonl(path: str | os.PathLike[str], records: Sequence[dict[str, Any]]) -> None:
    with atomic_open(path) as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False, sort_keys=True))
            handle.write("\n")


def check_not_an_input(out: Path, inputs: Sequence[str]) -> None:
    """Refuse to build into a folder given as input: its outputs would sit among the papers
    (and an input named like an output, papers.jsonl, would have to make way). A folder inside
    an input folder is fine: reading skips kg output folders (`kg.ingest.sources`)."""
    for name in inputs:
        if name != "-" and os.path.isdir(name) and same(name, out):
            raise OutputError(f"cannot write {out}: it is the input folder {name}; build into another folder (e.g. {Path(name) / 'out'})")


# A first build's outputs, roughly: the page's fixed part plus a multiple of the abstracts
# (seeds: 52 kB of abstracts gave 3.7 MB with the store). A lower bound, so that a build
# that would fit is never refused; one that fails anyway fails whole (`Generation`).
FIRST_BUILD_BYTES = 1_000_000
BYTES_PER_ABSTRACT_BYTE = 20


def estimated_output_bytes(out: Path, papers: Sequence[Paper]) -> tuple[int, str]:
    """How many bytes this build will need at least, and what the estimate rests on: the size
    of the build it replaces (both are on disk until the switch), else a multiple of the input."""
    previous = current_folder(out)
    if previous is not None:
        size = sum(entry.stat().st_size for entry in previous.iterdir() if entry.is_file())
        return size, "the size of the previous build"
    text = sum(len(paper.abstract.encode("utf-8")) + len(paper.title.encode("utf-8")) for paper in papers)
    return FIRST_BUILD_BYTES + BYTES_PER_ABSTRACT_BYTE * text, "the size of the input"


def check_free_space(out: Path, papers: Sequence[Paper]) -> None:
    """Refuse a build that cannot fit before anything is written (exit 18)."""
    needed, basis = estimated_output_bytes(out, papers)
    free = shutil.disk_usage(out).free
    if free < needed:
        raise OutputError(f"cannot write {out}: about {_megabytes(needed)} are needed (estimated from {basis}) and {_megabytes(free)} are free")


def _megabytes(size: int) -> str:
    return f"{size / 1e6:,.1f} MB"


def _created() -> str:
    """Build time (UTC, ISO 8601); SOURCE_DATE_EPOCH pins it for byte-for-byte reproducible builds."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    moment = datetime.fromtimestamp(int(epoch), tz=timezone.utc) if epoch else datetime.now(timezone.utc)
    return moment.replace(microsecond=0).isoformat()


@dataclass(frozen=True)
class BuildOptions:
    """How `build` runs: what `kg build`'s options choose. Every default is the command's."""

    format: Format | None = None  # read every input as this format (None: by extension, else by content; `kg.ingest.read_corpus`)
    skip_invalid: bool = False  # go on past invalid records (the summary lists them) instead of refusing the input
    workers: int | None = None  # spaCy processes (None: `kg.extract.runner.default_workers`)
    dask_address: str | None = None  # extract on this Dask scheduler instead ("local" starts a LocalCluster)
    cache_dir: str | os.PathLike[str] | None = None  # the extraction cache (None: KG_CACHE_DIR, else the user cache folder; `kg.extract.cache_location`)
    no_cache: bool = False  # neither read nor write a cache, and make every Turtle fragment and the store anew
    recognizer: str | None = DEFAULT_RECOGNIZER  # the trained recognizer's folder (None: rules alone; `kg.extract.pipeline.check_recognizer`)
    min_score: float | None = None  # drop mentions scored below this (None: the threshold chosen on kg's gold dev set; 0: keep all)
    embed: bool = False  # also embed every paper, for semantic neighbours (`kg.related_work.embed`; needs the embed extra)
    embedder: str | None = None  # what embeds with `embed` (None: `kg.related_work.embed.DEFAULT_EMBEDDER`)


def build(
    inputs: Sequence[str],
    out_dir: str | os.PathLike[str] = "out",
    options: BuildOptions | None = None,
    *,
    stdin: IO[str] | None = None,
    progress: Progress | None = None,
) -> BuildSummary:
    """Run every stage on `inputs` (files, folders, or ``-`` for `stdin`) as `options` say
    (None: `kg build`'s defaults), and write ``out_dir``; `progress` is told how each stage goes."""
    options = options or BuildOptions()
    started = time.perf_counter()
    clock = StageClock(progress)
    out = Path(out_dir)
    cache = _check_before_writing(out, inputs, options)
    lock = OutputLock(out)
    if lock.path.exists():
        lock.acquire()  # a second build fails at once, before reading its input
    try:
        generated = _generate(out, lock, inputs, options, cache=cache, stdin=stdin, clock=clock)
        if not options.embed:  # an earlier build's embeddings: their links now point at nothing
            unlink_missing(out, EMBED_FILES)
    finally:
        lock.release()
    return _summary(out, options, generated, clock=clock, seconds=round(time.perf_counter() - started, 3))


def _check_before_writing(out: Path, inputs: Sequence[str], options: BuildOptions) -> CacheLocation | None:
    """Everything that can be found wrong before reading: the output folder, the model, the
    cache folder and the embed extra (every input record is checked as it is read, before the
    first output file is replaced: ingestion refuses what extraction could not take). Returns
    the cache folder to use (None: no cache)."""
    from kg.extract.cache_location import check_cache_dir, resolve_cache_dir
    from kg.extract.pipeline import check_recognizer

    check_output_dir(out)
    refuse_linked_state(out)
    check_not_an_input(out, inputs)
    check_names(out, OUTPUT_FILES + EMBED_FILES)
    check_recognizer(options.recognizer)  # a bad model folder fails before anything is written
    location = resolve_cache_dir(options.cache_dir)
    assert location is not None  # asked without no_cache
    refuse_cache_as_output(out, location.path, location.why)  # with --no-cache too: the folder is the cache's all the same
    cache = None if options.no_cache else location
    if cache is not None:
        check_cache_dir(cache, out=out)  # so does a cache folder that cannot be written, or one inside a build (this one's too, made or not)
    if options.embed:
        from kg.related_work.embed import check_available

        check_available(options.embedder)  # a missing extra fails before anything is written
    return cache


def _read(inputs: Sequence[str], options: BuildOptions, *, stdin: IO[str] | None, clock: StageClock) -> Corpus:
    with clock.stage(PROGRESS_STAGE, reports_itself=True):
        return read_corpus(inputs, skip_invalid=options.skip_invalid, stdin=stdin, progress=clock.progress, format=options.format)


@dataclass(frozen=True)
class _Generated:
    """What the summary needs of a build's generation: counts, not the stages' data."""

    papers: int
    duplicates: int
    skipped: tuple[str, ...]
    written: _Written
    store: StoreWritten


def _generate(
    out: Path, lock: OutputLock, inputs: Sequence[str], options: BuildOptions, *, cache: CacheLocation | None, stdin: IO[str] | None, clock: StageClock
) -> _Generated:
    """Read the inputs, then write every output into a new generation of `out` and bring the
    SPARQL store up to date, under `lock` (taken once the folder exists). It reads as well as
    writes so that the papers are held by this frame alone and can be let go before the store's
    bulk load, the build's last big allocation."""
    from kg.extract.runner import default_workers

    corpus = _read(inputs, options, stdin=stdin, clock=clock)
    papers, duplicates, skipped = corpus.papers, corpus.duplicates, corpus.skipped
    del corpus
    make_output_dir(out)
    lock.acquire()  # a first build: only now may out/ be written
    clean_stale(out, OUTPUT_FILES + EMBED_FILES)
    check_free_space(out, papers)
    # The build being replaced: its unchanged Turtle fragments are copied, not made again,
    # and the store is updated from it (unless --no-cache: then everything is made anew).
    previous = None if options.no_cache else current_folder(out)
    workers = options.workers if options.workers is not None else default_workers()
    with Generation(out) as generation:
        count = len(papers)
        written = _write_outputs(papers, generation.folder, options, cache_dir=None if cache is None else cache.path, workers=workers, clock=clock, previous=previous)
        # The mentions and the graph are gone now (only counts came back), and the papers go
        # too: the store's bulk loader gets their memory.
        del papers
        store = _write_store(out, generation, previous, clock=clock)
    return _Generated(count, duplicates, skipped, written, store)


def _write_store(out: Path, generation: Generation, previous: Path | None, *, clock: StageClock) -> StoreWritten:
    """The Oxigraph store `kg sparql` and `kg serve` open (outside generations, stamped by
    content): updated from the replaced build's, or bulk-loaded from the new graph.ttl, before
    the switch, which runs under the store lock once the store is on disk: a build that fails
    (a full disk) leaves out/ showing the previous build, store and all."""
    from kg.graph import GRAPH_FILE
    from kg.rdf.store import write_store
    from kg.rdf.writers import TURTLE_FILE

    with clock.stage("Loading SPARQL store"):
        release_memory()
        return write_store(
            None, out, turtle=generation.folder / TURTLE_FILE, graph_file=generation.folder / GRAPH_FILE,
            previous_turtle=previous / TURTLE_FILE if previous is not None else None, then=generation.publish,
        )


def _summary(out: Path, options: BuildOptions, generated: _Generated, *, clock: StageClock, seconds: float) -> BuildSummary:
    from kg.rdf.store import STORE_DIR

    written, stats = generated.written, generated.written.stats
    return BuildSummary(
        out_dir=str(out),
        papers=generated.papers,
        duplicates=generated.duplicates,
        skipped=generated.skipped,
        concepts_by_type=written.concepts_by_type,
        edges=written.edges,
        cached=stats.cached,
        extracted=stats.extracted,
        embedded=written.embedded,
        recomputed=stats.corrupt + written.embeddings_recomputed,
        seconds=seconds,
        stages=clock.timed(),
        memory=clock.memory_used(),
        fragments=written.turtle.fragments,
        reused=written.turtle.reused,
        store=generated.store.how,
        outputs=tuple(str(out / name) for name in (*OUTPUT_FILES, *(EMBED_FILES if options.embed else ()), STORE_DIR)),
    )


@dataclass(frozen=True)
class _Written:
    """What the summary needs of the stages `_write_outputs` ran: counts, not their data."""

    stats: ExtractionStats
    concepts_by_type: dict[str, int]
    edges: int
    turtle: TurtleWritten
    embedded: int | None  # papers encoded in this build (None: no embeddings)
    embeddings_recomputed: int


def _write_outputs(
    papers: Sequence[Paper],
    folder: Path,
    options: BuildOptions,
    *,
    cache_dir: str | os.PathLike[str] | None,
    workers: int,
    clock: StageClock,
    previous: Path | None,
) -> _Written:
    """Every stage after reading, each output file written into `folder` (a new generation);
    `previous` is the generation being replaced (None: make everything from scratch). Returns
    counts only, so that the caller holds none of the stages' data once it returns."""
    progress = clock.progress
    recognizer = options.recognizer
    # Extract (spaCy, per paper) → resolve (corpus-wide concepts) → propagate → graph.
    from kg.concepts.find import entities_record, find_concepts
    from kg.extract.provenance import describe_pipeline
    from kg.graph import build_graph, save

    found = find_concepts(
        papers, cache_dir=cache_dir, workers=workers, dask_address=options.dask_address, recognizer=recognizer, clock=clock, min_score=options.min_score
    )
    resolution = found.resolution
    similar: list[tuple[str, str, float]] = []  # (paper id, neighbour id, cosine)
    embedded = None
    if options.embed:
        from kg.related_work.embed import EMBED_STAGE, embed_papers, neighbour_links
        from kg.related_work.embed import save as save_embeddings

        with clock.stage(EMBED_STAGE, reports_itself=True):
            embedded = embed_papers(papers, cache_dir=cache_dir, progress=progress, embedder_name=options.embedder)
            similar = neighbour_links(embedded)
            # The vectors `kg related` fuses with concept overlap (mapped, not loaded, at query time).
            save_embeddings(embedded, folder)
    with clock.stage("Writing records"):
        write_jsonl(folder / PAPERS_FILE, [paper.to_dict() for paper in papers])
        write_jsonl(folder / ENTITIES_FILE, [entities_record(p, e) for p, e in zip(papers, resolution.entities, strict=True)])
        write_jsonl(folder / CONCEPTS_FILE, [concept.to_dict() for concept in resolution.concepts])
    with clock.stage("Building graph"):
        # Described, not loaded: a build whose papers all come from the cache never loads spaCy.
        meta = {"pipeline": describe_pipeline(recognizer=recognizer), "created": _created()}
        graph = build_graph(papers, resolution.entities, resolution.concepts, meta=meta, similar=similar, results=found.results)
        save(graph, folder)
    # RDF: fragment by fragment through pyoxigraph, the previous build's unchanged fragments
    # copied (`kg.rdf.fragments`); the same triples as every other export (schemas/shapes.ttl).
    from kg.rdf.fragments import STAGE as TURTLE_STAGE
    from kg.rdf.fragments import write_turtle
    from kg.rdf.writers import TURTLE_FILE

    with clock.stage(TURTLE_STAGE, reports_itself=True):
        turtle = write_turtle(
            graph, folder / TURTLE_FILE, previous=previous / TURTLE_FILE if previous is not None else None, progress=progress
        )
    # The interactive page (as `kg html` draws it by default): self-contained, offline.
    from kg.html import HTML_FILE, write_html

    with clock.stage("Drawing page"):
        write_html(graph, folder / HTML_FILE, embeddings=embedded)  # related papers ranked as `kg related` ranks them
    # The related-papers index, so `kg related` answers without loading graph.json.
    from kg.related_work.rank import write_index

    with clock.stage("Indexing related work"):
        write_index(graph, folder)
    # The leaderboards' index, so `kg leaderboard` answers without loading graph.json.
    from kg.leaderboard import write_index as write_leaderboards

    with clock.stage("Indexing leaderboards"):
        write_leaderboards(graph, folder)
    return _Written(
        stats=found.stats,
        concepts_by_type=dict(sorted(Counter(concept.type for concept in resolution.concepts).items())),
        edges=graph.number_of_edges(),
        turtle=turtle,
        embedded=None if embedded is None else embedded.encoded,
        embeddings_recomputed=0 if embedded is None else embedded.recomputed,
    )


def current_cache_versions(recognizers: Sequence[str] = ()) -> dict[str, dict[str, str]]:
    """Per cache file, the versions this kg writes (version → what writes it): extraction with
    the shipped recognizer, with rules alone and with each of `recognizers` (model folders,
    `kg.extract.pipeline.check_recognizer`), and every embedder's model. `kg cache prune` keeps these."""
    from kg.extract.cache import CACHE_FILE
    from kg.extract.pipeline import check_recognizer, pipeline_version
    from kg.related_work.embed import CACHE_FILE as EMBED_CACHE_FILE
    from kg.related_work.embed import EMBEDDERS

    extraction = {pipeline_version(): "the shipped recognizer", pipeline_version(recognizer=None): "rules alone"}
    for folder in recognizers:
        check_recognizer(folder)
        extraction.setdefault(pipeline_version(recognizer=folder), f"the recognizer {folder}")
    embedding = {e.model: f"the {e.name} embedder" for e in EMBEDDERS.values()}
    return {CACHE_FILE: extraction, EMBED_CACHE_FILE: embedding}
