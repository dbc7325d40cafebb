"""Run per-paper extraction at scale: from the cache where possible, the rest locally on
N processes or on a Dask cluster.

Every route yields the same `PaperExtraction`s in the same (input) order, so the graph
built from them is identical whichever route ran. Cached results are keyed by abstract
content and pipeline version (`kg.extract.cache`); a changed pipeline simply misses.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from functools import partial
from itertools import islice
from typing import Any

from kg.extract.cache import ExtractionCache, content_key, fits_text
from kg.extract.papers import extract_papers
from kg.extract.pipeline import check_recognizer, pipeline_version
from kg.ingest.titles import read_title, sentence_case
from kg.model import DEFAULT_RECOGNIZER, MENTION_SOURCES, Paper, PaperExtraction, Progress, Where

EXTRACT_STAGE = "Extracting entities"
# Results reach the cache in small transactions so a killed build keeps nearly all its work:
# one commit per spaCy batch (64 papers, `kg.extract.papers`), or when the oldest unsaved result is 2 s old.
# A commit costs a few ms, under 0.1 % of the time spaCy takes for 64 abstracts.
_FLUSH_PAPERS = 64
_FLUSH_SECONDS = 2.0
DASK_CHUNK = 250  # papers per Dask task: large enough to amortise scheduling per task
LOCAL_CHUNK = 64  # papers per task for local worker processes


# Peak resident memory of one extraction process (kg's pipeline loaded, batches of 64;
# measured ~560 MB on this machine): what each -j worker adds to a build.
WORKER_MEMORY = 600 * 2**20


CGROUP = "/sys/fs/cgroup"  # cgroup v2: a container's CPU and memory limits


def default_workers() -> int:
    """`kg build -j` by default: the cores this process may use (its CPU affinity, and a
    container's CPU quota), fewer when the memory available now would not hold that many workers."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    quota = _cgroup_cpus()
    if quota is not None:
        cores = min(cores, quota)
    available = _available_memory()
    if available is not None:
        cores = min(cores, max(1, available // WORKER_MEMORY))
    return max(1, cores)


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii") as handle:
            return handle.read()
    except (OSError, ValueError):
        return None


def _cgroup_cpus() -> int | None:
    """CPUs a cgroup v2 quota allows ("200000 100000" in cpu.max: 2), None without a quota."""
    parts = (_read(f"{CGROUP}/cpu.max") or "max").split()
    if len(parts) != 2 or parts[0] == "max":
        return None
    try:
        return max(1, -(-int(parts[0]) // int(parts[1])))
    except (ValueError, ZeroDivisionError):
        return None


def _available_memory() -> int | None:
    """Bytes available now: the machine's MemAvailable, or less under a cgroup v2 memory limit."""
    available = None
    for line in (_read("/proc/meminfo") or "").splitlines():
        if line.startswith("MemAvailable:"):
            try:
                available = int(line.split()[1]) * 1024
            except (ValueError, IndexError):
                pass
    limit, used = _read(f"{CGROUP}/memory.max"), _read(f"{CGROUP}/memory.current")
    if limit is not None and used is not None and limit.strip() != "max":
        try:
            room = max(0, int(limit) - int(used))
        except ValueError:
            return available
        available = room if available is None else min(available, room)
    return available


@dataclass(frozen=True)
class ExtractionStats:
    papers: int
    cached: int  # served from the cache
    extracted: int  # run through spaCy now
    corrupt: int  # cache rows that failed their checksum and were recomputed


def _payload(extraction: PaperExtraction) -> dict[str, Any]:
    data = extraction.to_dict()
    del data["paper_id"]  # the cache is keyed by content: the same abstract may be another paper
    return data


def _from_payload(paper_id: str, payload: dict[str, Any]) -> PaperExtraction:
    return PaperExtraction.from_dict({**payload, "paper_id": paper_id})


def _drop_misfits(cached: dict[str, Any], papers: Sequence[Paper], keys: Sequence[str]) -> int:
    """Remove from `cached` the rows that cannot describe their paper's abstract (`fits_text`):
    they are recomputed like damaged ones. Returns how many were removed."""
    if not cached:
        return 0
    from kg.text.vocab import load_vocabulary

    vocabulary = load_vocabulary()
    misfits = 0
    for paper, key in zip(papers, keys, strict=True):
        value = cached.get(key)
        if value is not None and not fits_text(value, paper.abstract, sources=MENTION_SOURCES, vocabulary=vocabulary):
            del cached[key]
            misfits += 1
    return misfits


def _batches(items: Sequence[Paper], size: int) -> Iterator[list[Paper]]:
    iterator = iter(items)
    while batch := list(islice(iterator, size)):
        yield batch


def _extract_chunk(papers: list[Paper], recognizer: str | None = DEFAULT_RECOGNIZER) -> list[dict[str, Any]]:
    """A Dask task: extract one chunk in a worker (the pipeline is cached per worker process)."""
    return [extraction.to_dict() for extraction in extract_papers(papers, recognizer=recognizer)]


def _exit_with(parent: int) -> None:
    """A worker's initializer: end this process soon after the build that started it dies.
    A killed build (SIGKILL, OOM) cannot shut its pool down, and its idle workers would wait on
    the task queue forever (each other's ends of the pipe keep it open), 0.6 GB each."""
    import threading

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="kg-exit-with-build", daemon=True).start()


def _extract_in_processes(papers: list[Paper], workers: int, recognizer: str | None) -> Iterator[PaperExtraction]:
    """Extraction on `workers` local processes. Workers return plain data, not Docs
    (spaCy's own n_process ships Docs back, which is slower and cannot carry kg's spans)."""
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=workers, initializer=_exit_with, initargs=(os.getpid(),)) as pool:
        # Chunks in order; map yields their results in submission order.
        for chunk in pool.map(partial(_extract_chunk, recognizer=recognizer), _batches(papers, LOCAL_CHUNK)):
            for data in chunk:
                yield PaperExtraction.from_dict(data)


def _extract_on_dask(papers: list[Paper], address: str, recognizer: str | None) -> Iterator[PaperExtraction]:
    """Extraction on a Dask cluster: `address` of a scheduler, or "local" for a LocalCluster."""
    from dask.distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=os.cpu_count() or 1, threads_per_worker=1) if address == "local" else None
    try:
        with Client(cluster if cluster is not None else address) as client:
            futures = client.map(partial(_extract_chunk, recognizer=recognizer), list(_batches(papers, DASK_CHUNK)), pure=False)
            for future in futures:  # in submission order, so results keep input order
                for data in future.result():
                    yield PaperExtraction.from_dict(data)
    finally:
        if cluster is not None:
            cluster.close()


def run_extraction(
    papers: Sequence[Paper],
    *,
    cache_dir: str | os.PathLike[str] | None,
    workers: int = 1,
    dask_address: str | None = None,
    progress: Progress | None = None,
    recognizer: str | None = DEFAULT_RECOGNIZER,
) -> tuple[list[PaperExtraction], ExtractionStats]:
    """Extractions for `papers` in their order; `cache_dir=None` disables the cache.
    `recognizer`: the trained model folder (the shipped one by default; None: rules alone).

    Each paper's abstract is extracted, and its title where kg reads it (`kg.ingest.titles.read_title`),
    in sentence case (`kg.ingest.titles.sentence_case`: extraction reads abstracts' case): the title's
    mentions join the paper's, marked ``where="title"`` with offsets into the title and its text. The
    cache keys each text by its content, so a title is cached like an abstract; a paper counts as
    cached when all its texts are."""
    check_recognizer(recognizer)
    version = pipeline_version(recognizer=recognizer)
    texts: list[tuple[int, Where, Paper]] = []  # (paper's index, which text, the text as a paper to extract)
    for index, paper in enumerate(papers):
        texts.append((index, "abstract", paper))
        title = read_title(paper)
        if title is not None:
            texts.append((index, "title", Paper(id=paper.id, title="", abstract=sentence_case(title))))
    jobs = [job for _, _, job in texts]
    keys = [content_key(job.abstract, version) for job in jobs]
    cache = ExtractionCache(cache_dir, version=version) if cache_dir is not None else None
    last_text = {index: position for position, (index, _, _) in enumerate(texts)}
    try:
        cached = cache.get_many(keys) if cache is not None else {}
        misfits = _drop_misfits(cached, jobs, keys)
        results: list[PaperExtraction | None] = [
            _from_payload(job.id, cached[key]) if key in cached else None for job, key in zip(jobs, keys, strict=True)
        ]
        todo = [position for position, result in enumerate(results) if result is None]
        unfinished = {texts[position][0] for position in todo}  # papers with a text to extract
        done = len(papers) - len(unfinished)
        if progress is not None:
            progress(EXTRACT_STAGE, done, len(papers))
        missing = [jobs[position] for position in todo]
        if not missing:  # everything cached: no statistical model is loaded at all
            stream: Iterator[PaperExtraction] = iter(())
        elif dask_address:
            stream = _extract_on_dask(missing, dask_address, recognizer)
        elif workers > 1 and len(missing) > LOCAL_CHUNK:
            stream = _extract_in_processes(missing, workers, recognizer)
        else:
            stream = extract_papers(missing, recognizer=recognizer)
        pending: dict[str, dict[str, Any]] = {}
        oldest = 0.0  # when the oldest unsaved result arrived
        for position, extraction in zip(todo, stream, strict=True):
            results[position] = extraction
            if cache is not None:
                if not pending:
                    oldest = time.monotonic()
                pending[keys[position]] = _payload(extraction)
                if len(pending) >= _FLUSH_PAPERS or time.monotonic() - oldest >= _FLUSH_SECONDS:
                    cache.put_many(pending)
                    pending.clear()
            if last_text[texts[position][0]] == position:
                done += 1
                if progress is not None and (done % 50 == 0 or done == len(papers)):
                    progress(EXTRACT_STAGE, done, len(papers))
        if cache is not None and pending:
            cache.put_many(pending)
        stats = ExtractionStats(
            papers=len(papers),
            cached=len(papers) - len(unfinished),
            extracted=len(unfinished),
            corrupt=(cache.corrupt + misfits) if cache is not None else 0,
        )
    finally:
        if cache is not None:
            cache.close()
    return _with_titles(papers, texts, results), stats


def _with_titles(papers: Sequence[Paper], texts: list[tuple[int, Where, Paper]], results: list[PaperExtraction | None]) -> list[PaperExtraction]:
    """Each paper's extraction: its abstract's, with its title's mentions (their text as the title
    writes it: extraction read it in sentence case, of the same length) and definitions joined."""
    extractions: list[PaperExtraction] = []
    for (index, where, _), result in zip(texts, results, strict=True):
        assert result is not None  # every text is extracted or cached
        if where == "abstract":
            extractions.append(result)
            continue
        own, title = extractions[index], papers[index].title
        title_mentions = tuple(replace(m, where="title", text=title[m.start : m.end]) for m in result.mentions)
        definitions = tuple(sorted(set(own.definitions) | set(result.definitions), key=lambda d: (d.short, d.long)))
        extractions[index] = replace(own, mentions=(*own.mentions, *title_mentions), definitions=definitions)
    assert len(extractions) == len(papers)
    return extractions
