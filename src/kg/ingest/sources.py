"""Where records come from: paths and folders expanded, bytes decoded, formats recognised.

Formats are chosen by extension; a file with an unknown or missing extension is recognised by
its content. In a folder only files with a known extension are read (so a README or a PDF
beside the data is left alone); hidden files and folders are ignored.
"""

from __future__ import annotations

import codecs
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

from kg.errors import DecodeFailed, InputNotFound, UnsupportedFormat
from kg.ingest.records import ABSTRACT_NAMES, normalise_key

Format = Literal["text", "jsonl", "json", "csv", "tsv", "bibtex"]

EXTENSIONS: dict[str, Format] = {
    ".txt": "text",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".jsonlines": "jsonl",
    ".json": "json",
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".bib": "bibtex",
    ".bibtex": "bibtex",
}
SUPPORTED = ", ".join(sorted(EXTENSIONS))
STDIN = "-"
STDIN_NAME = "<stdin>"

# Signatures of binary files people pass by mistake.
_BINARY_MAGIC = {b"%PDF": "a PDF", b"PK\x03\x04": "a ZIP/Office file", b"\x1f\x8b": "a gzip file", b"\x89PNG": "an image"}
_BIBTEX_START = re.compile(r"@\s*[A-Za-z]+\s*[{(]")


@dataclass(frozen=True, slots=True)
class Source:
    """One file to read: the name used in messages (as the user wrote it) and where to read it."""

    name: str
    path: Path | None  # None for stdin


def expand(inputs: list[str]) -> list[Source]:
    """Files, folders (every supported file inside, recursively) and '-' → sources sorted by name.

    Sorting (and reading each file once) makes the result independent of the order of `inputs`.
    """
    sources: dict[str, Source] = {}
    seen: set[Path] = set()
    for item in inputs:
        if item == STDIN:
            sources[STDIN_NAME] = Source(STDIN_NAME, None)
            continue
        path = Path(item)
        if path.is_dir():
            files = [(f"{item.rstrip('/' + os.sep)}/{relative}", path / relative) for relative in _folder_files(path)]
        elif path.is_file():
            files = [(item, path)]
        elif path.exists():
            raise UnsupportedFormat("not a regular file or folder", path=item)
        else:
            raise InputNotFound("no such file or folder", path=item)
        for name, file in files:
            resolved = file.resolve()
            if resolved not in seen:
                seen.add(resolved)
                sources[name] = Source(name, file)
    return [sources[name] for name in sorted(sources)]


def _folder_files(folder: Path) -> list[str]:
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if not name.startswith(".") and Path(name).suffix.lower() in EXTENSIONS:
                found.append(Path(root, name).relative_to(folder).as_posix())
    return sorted(found)


def read_source(source: Source, *, stdin: IO[str] | None, lenient: bool) -> tuple[str, bool]:
    """The decoded text and whether it held undecodable bytes (only possible when `lenient`).

    Strict: bytes that are not UTF-8 raise `DecodeFailed` naming line and byte offset.
    Lenient (``--skip-invalid``): they become surrogates, and the records holding them are skipped.
    """
    if source.path is None:
        import sys

        stream = stdin if stdin is not None else sys.stdin
        if _is_terminal(stream):  # `kg build -` typed without a pipe would wait forever
            raise InputNotFound("'-' reads JSON Lines from standard input, but nothing is piped in", path=STDIN_NAME)
        buffer = getattr(stream, "buffer", None)
        if buffer is None:
            return stream.read(), False
        data = buffer.read()
    else:
        try:
            data = source.path.read_bytes()
        except PermissionError:
            raise InputNotFound("cannot read it (permission denied)", path=source.name) from None
        except OSError as error:
            raise InputNotFound(f"cannot read it ({error.strerror or error})", path=source.name) from None
    return decode(data, name=source.name, lenient=lenient)


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):  # closed or stand-in streams (test runners)
        return False


def decode(data: bytes, *, name: str, lenient: bool = False) -> tuple[str, bool]:
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):  # e.g. a TSV saved by Excel as "Unicode text"
        try:
            return data.decode("utf-16"), False
        except UnicodeDecodeError as error:
            raise DecodeFailed(f"not valid UTF-16 at byte offset {error.start}", path=name) from None
    try:
        return data.decode("utf-8-sig"), False
    except UnicodeDecodeError as error:
        if lenient:
            return data.decode("utf-8-sig", errors="surrogateescape"), True
        for magic, kind in _BINARY_MAGIC.items():
            if data.startswith(magic):
                raise UnsupportedFormat(f"this is {kind}, not a corpus file (kg reads {SUPPORTED})", path=name) from None
        line = data.count(b"\n", 0, error.start) + 1
        raise DecodeFailed(
            f"not valid UTF-8: byte 0x{data[error.start]:02x} at byte offset {error.start}; save the file as UTF-8",
            path=name,
            line=line,
        ) from None


def detect_format(source: Source, text: str) -> Format:
    """By extension, else by content; `UnsupportedFormat` when neither tells."""
    if source.path is None:
        return "json" if text.lstrip().startswith("[") else "jsonl"
    by_extension = EXTENSIONS.get(source.path.suffix.lower())
    if by_extension:
        return by_extension
    return sniff(text, name=source.name)


def sniff(text: str, *, name: str) -> Format:
    head = text.lstrip()
    if "\x00" in text[:4096]:
        raise UnsupportedFormat(f"binary content, not a corpus file (kg reads {SUPPORTED})", path=name)
    if head.startswith(("{", "[")):
        return "json"
    if _BIBTEX_START.match(head):
        return "bibtex"
    first_line = head.split("\n", 1)[0]
    for delimiter, kind in (("\t", "tsv"), (",", "csv"), (";", "csv")):
        columns = [normalise_key(c.strip(' "')) for c in first_line.split(delimiter)]
        if len(columns) > 1 and any(c in ABSTRACT_NAMES for c in columns):
            return kind  # type: ignore[return-value]
    if re.search(r"\n[ \t]*\r?\n[ \t]*\S", head):
        return "text"  # paragraphs separated by blank lines
    raise UnsupportedFormat(
        f"cannot tell the format (kg reads {SUPPORTED}; a seed text file needs a header line, "
        "then abstracts separated by blank lines)",
        path=name,
    )

