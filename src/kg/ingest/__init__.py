"""Ingestion: corpus files → a `Corpus` of unique, identified `Paper` records.

    from kg.ingest import read_corpus
    corpus = read_corpus(["seeds/"])            # or files, folders, "-" for JSON Lines on stdin

One module per format (`text`, `jsonl`, `table`, `bibtex`, `ris`; `openalex` turns OpenAlex
works read as JSON into records); `sources` finds, decodes and recognises files (``format=``
forces one format for every input); `records` turns a raw record into a `Paper` (field aliases, identity,
derived titles); `merge` joins exact-duplicate abstracts. No spaCy here: reading the
65k-paper corpus takes seconds.

Bad input raises a `KgError` naming file and line, before anything is written anywhere. With
``skip_invalid=True`` bad *records* (malformed, empty abstract, undecodable bytes or lone
surrogates, over a size limit) and files or folders that cannot be read (permission, link loops,
pipes in a folder) are skipped and listed in `Corpus.skipped`; problems with a whole file
(missing, unsupported, no abstract column) still raise.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import IO

from kg.errors import EmptyCorpus, InputError, InputUnreadable
from kg.ingest.bibtex import read_bibtex
from kg.ingest.jsonl import read_json, read_json_lines
from kg.ingest.merge import Candidate, merge_duplicates
from kg.ingest.openalex import works
from kg.ingest.records import RawRecord, to_paper
from kg.ingest.ris import read_ris
from kg.ingest.sources import FORMATS, Format, Source, detect_format, expand, read_source
from kg.ingest.table import read_table
from kg.ingest.text import read_text
from kg.model import Corpus, Progress

__all__ = ["FORMATS", "read_corpus"]

PROGRESS_STAGE = "Reading corpus"


def read_corpus(
    inputs: Sequence[str],
    *,
    skip_invalid: bool = False,
    stdin: IO[str] | None = None,
    progress: Progress | None = None,
    format: Format | None = None,
) -> Corpus:
    """Read every input and return unique papers sorted by id (the same whatever the input order).

    `format` (one of `FORMATS`) reads every input as that format, whatever its name or content;
    None: by extension, else by content (`kg.ingest.sources.detect_format`)."""
    if format is not None and format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {format!r}")
    sources = expand(list(inputs))
    candidates: list[Candidate] = []
    skipped: list[tuple[str, int, str]] = []
    for done, source in enumerate(sources):
        if progress:
            progress(PROGRESS_STAGE, done, len(sources))
        for item in _records(source, stdin=stdin, skip_invalid=skip_invalid, forced=format):
            if isinstance(item, InputError):
                if not skip_invalid:
                    item.skippable = True  # skip_invalid=True would have skipped it
                    raise item
                skipped.append(_skip_entry(item, source))
            else:
                candidates.append(item)
    if progress:
        progress(PROGRESS_STAGE, len(sources), len(sources))
    papers, duplicates = merge_duplicates(candidates)
    if not papers:
        raise EmptyCorpus(_empty_message(inputs, sources, len(skipped)))
    skipped.sort(key=lambda entry: (entry[0], entry[1]))
    return Corpus(papers=tuple(papers), duplicates=duplicates, skipped=tuple(message for _, _, message in skipped))


def _records(source: Source, *, stdin: IO[str] | None, skip_invalid: bool, forced: Format | None = None) -> Iterator[Candidate | InputError]:
    """Papers of one source, with bad records as errors in their place (raised later or skipped).
    A source that cannot be read at all is one such error."""
    try:
        text, undecodable = read_source(source, stdin=stdin, lenient=skip_invalid)
    except InputUnreadable as error:
        yield error
        return
    for raw in _raw_records(detect_format(source, text, forced=forced), text, name=source.name):
        if isinstance(raw, InputError):
            yield raw
            continue
        try:
            paper = to_paper(raw, path=source.name, undecodable=undecodable)
        except InputError as error:
            yield error
            continue
        yield Candidate(paper, source.name, raw.line)


def _raw_records(kind: Format, text: str, *, name: str) -> Iterator[RawRecord | InputError]:
    if kind == "text":
        return read_text(text)
    if kind == "jsonl":
        return works(read_json_lines(text, path=name), path=name)
    if kind == "json":
        return works(read_json(text, path=name), path=name)
    if kind == "openalex":  # an array, JSON Lines or an API page: read_json takes each
        return works(read_json(text, path=name), path=name, always=True)
    if kind in ("csv", "tsv"):
        return read_table(text, path=name, delimiter="\t" if kind == "tsv" else ",")
    if kind == "ris":
        return read_ris(text, path=name)
    return read_bibtex(text, path=name)


def _skip_entry(error: InputError, source: Source) -> tuple[str, int, str]:
    line = getattr(error, "line", None) or 0
    return (source.name, line, error.message)


def _empty_message(inputs: Sequence[str], sources: list[Source], skipped: int) -> str:
    named = ", ".join(inputs) if len(inputs) <= 3 else f"{', '.join(inputs[:3])} …"
    if not sources:
        return f"no corpus files in {named} (kg reads files ending in .txt, .jsonl, .json, .csv, .tsv, .bib, .ris)"
    if skipped:
        return f"no papers read from {named}: all {skipped:,} records were invalid and skipped"
    return f"no papers read from {named}: the input holds no records"
