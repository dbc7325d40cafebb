"""Where records come from: paths and folders expanded, bytes decoded, formats recognised.

Formats are chosen by extension; a file with an unknown or missing extension, and a ``.txt`` (a
format people save anything as), is recognised by its content: RIS, BibTeX, JSON or a table with
an abstract column before seed text. A file read as seed text that still looks structured (RIS
tags, BibTeX entries, JSON objects, rows of a table) gets a `LooksStructured` warning: nothing
structured is read as plain text without saying so. ``--format`` (`read_corpus(format=…)`)
forces one format for every input. In a folder only files with a known extension are read (so a
README or a PDF beside the data is left alone); hidden files and folders are ignored.
"""

from __future__ import annotations

import codecs
import errno
import os
import re
import stat
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

from kg.errors import DecodeFailed, InputNotFound, InputUnreadable, LooksStructured, OutputsSkipped, UnsupportedFormat
from kg.ingest.records import ABSTRACT_NAMES, normalise_key

Format = Literal["text", "jsonl", "json", "csv", "tsv", "bibtex", "ris", "openalex"]
FORMATS: tuple[Format, ...] = ("text", "jsonl", "json", "csv", "tsv", "bibtex", "ris", "openalex")  # what --format takes

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
    ".ris": "ris",
}
SUPPORTED = ", ".join(sorted(EXTENSIONS))
STDIN = "-"
STDIN_NAME = "<stdin>"

# Signatures of binary files people pass by mistake.
_BINARY_MAGIC = {b"%PDF": "a PDF", b"PK\x03\x04": "a ZIP/Office file", b"\x1f\x8b": "a gzip file", b"\x89PNG": "an image"}
_BIBTEX_START = re.compile(r"@\s*[A-Za-z]+\s*[{(]")
_RIS_START = re.compile(r"TY  -(?: |\r?$)", re.MULTILINE)  # rispy's tag line: two letters, two spaces, a hyphen
_JSON_START = re.compile(r"\[\s*[{\]]|\{\s*[\"}]")  # an array of objects or an object, not "[1] We show …"
# In text read as seed text, signs of a structured file (looks_structured):
_RIS_TAG_LINE = re.compile(r"^(?:TY|ER)  -", re.MULTILINE)
_BIBTEX_ENTRY = re.compile(r"^\s*@\s*[A-Za-z]+\s*[{(]", re.MULTILINE)
_JSON_OBJECT_LINE = re.compile(r"^\s*\{\s*\"[^\"\n]*\"\s*:.*\}\s*,?\s*$", re.MULTILINE)
STRUCTURE_SAMPLE = 65_536  # characters of a file looked at for signs of structure
TABLE_ROWS = 3  # a table: this many lines in a row with the same delimiters, from the first
# A table's delimiters in the order tried: each with how many a line of a table that looks
# structured holds at least, and the format it means.
_DELIMITERS: tuple[tuple[str, int, Format], ...] = (("\t", 1, "tsv"), (",", 2, "csv"), (";", 2, "csv"))
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f\ud800-\udfff]")
_CONTROL_IN_NAME = re.compile("[\x00-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class Source:
    """One file to read: the name used in messages (as the user wrote it) and where to read it.

    `problem` is set when listing found that it cannot be read (permission denied, a symbolic
    link loop, a named pipe in a folder …): reading it raises that error, which
    ``skip_invalid`` skips like a bad record."""

    name: str
    path: Path | None  # None for stdin
    problem: InputUnreadable | None = None


def expand(inputs: list[str]) -> list[Source]:
    """Files, folders (every supported file inside, recursively) and '-' → sources sorted by name.

    Sorting (and reading each file once) makes the result independent of the order of `inputs`.
    Symbolic links are followed, to folders too (a loop is an unreadable source, not a hang).
    """
    sources: dict[str, Source] = {}
    seen: set[str] = set()
    for item in inputs:
        if item == STDIN:
            sources[STDIN_NAME] = Source(STDIN_NAME, None)
            continue
        path = Path(item)
        name = display_name(item)
        mode, problem = _stat(path, name)
        if problem is not None:
            if isinstance(problem, InputNotFound):
                raise problem
            sources[name] = Source(name, path, problem)
            continue
        if stat.S_ISDIR(mode):
            refuse_kg_folder(path, name)
            found = _folder_files(path, name.rstrip("/" + os.sep))
        elif stat.S_ISREG(mode):
            found = [Source(name, path)]
        else:
            raise UnsupportedFormat("not a regular file or folder", path=name)
        for source in found:
            resolved = os.path.realpath(source.path) if source.path is not None and source.problem is None else source.name
            if resolved not in seen:
                seen.add(resolved)
                sources[source.name] = source
    return [sources[name] for name in sorted(sources)]


def display_name(name: str) -> str:
    """A file name as messages and records show it: bytes that were not UTF-8 as U+FFFD, control
    characters escaped (a newline in a name must not split an ``Error:`` line)."""
    if _UNPRINTABLE.search(name):
        name = name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        name = _CONTROL_IN_NAME.sub(lambda match: f"\\x{ord(match.group()):02x}", name)
    return name


def _stat(path: Path, name: str) -> tuple[int, InputNotFound | InputUnreadable | None]:
    """The file mode of `path` (symbolic links followed), or why it cannot be had."""
    try:
        return path.stat().st_mode, None
    except OSError as error:
        if error.errno in (errno.ENOENT, errno.ENOTDIR):
            if os.path.lexists(path):
                return 0, InputNotFound("broken symbolic link (what it points to does not exist)", path=name)
            return 0, InputNotFound("no such file or folder", path=name)
        return 0, unreadable(error, name)


def unreadable(error: OSError, name: str) -> InputUnreadable:
    if error.errno == errno.ELOOP:
        return InputUnreadable("cannot read it (a symbolic link loop)", path=name)
    if isinstance(error, PermissionError):
        return InputUnreadable("cannot read it (permission denied)", path=name)
    return InputUnreadable(f"cannot read it ({error.strerror or error})", path=name)


STORE_STAMP = "kg-stamp.json"  # in a SPARQL store kg wrote (`kg.util.places.STORE_STAMP`)

# How every kg has begun graph.json (`kg.graph.FORMAT`, not imported: ingestion stays light).
_KG_GRAPH = re.compile(rb'\A\s*\{\s*"format"\s*:\s*"kg-graph"')


# What a build writes into its output folder (`kg.builder.OUTPUT_FILES`, `EMBED_FILES`; not
# imported: ingestion stays light): an older kg's folder held these as plain files.
OUTPUT_NAMES = frozenset({"papers.jsonl", "entities.jsonl", "concepts.jsonl", "graph.json", "graph.ttl", "graph.html", "related.idx", "embeddings.npy", "embeddings.json"})


def output_folder_kind(path: str | os.PathLike[str]) -> str | None:
    """Why `path` is a folder kg built into, or None: it holds ``.kg/current`` (`kg.generations`),
    or, as an older kg left its output folder (plain files, no ``.kg``), a graph.json of kg's own
    with its entities.jsonl or concepts.jsonl, and no input file but kg's outputs. A graph.json of kg's beside other papers is a stray copy
    in a folder of papers (`_folder_files` skips that file alone)."""
    if os.path.islink(os.path.join(path, ".kg", "current")):
        return "it holds .kg/current, the link to its build"
    if not _is_kg_graph(os.path.join(path, "graph.json")):
        return None
    try:
        names = os.listdir(path)
    except OSError:
        return None
    papers = [n for n in names if not n.startswith(".") and Path(n).suffix.lower() in EXTENSIONS and n not in OUTPUT_NAMES]
    made = {"entities.jsonl", "concepts.jsonl"} & set(names)  # every build wrote them beside graph.json; a user's papers.jsonl alone is no sign
    return None if papers or not made else "it holds a graph.json kg built, and only kg's outputs"


def is_output_folder(path: str | os.PathLike[str]) -> bool:
    """True if `path` is a folder kg built into (`output_folder_kind`)."""
    return output_folder_kind(path) is not None


def refuse_kg_folder(path: Path, name: str) -> None:
    """`UnsupportedFormat` if the folder `path`, named as an input, is a kg output folder, or a
    folder of kg's inside one (its ``.kg``, a generation, the SPARQL store) or a cache folder:
    their files are kg's outputs, not papers (a store's kg-stamp.json was read as a paper)."""
    from kg.util.places import kg_place

    why = output_folder_kind(path)
    if why is not None:
        raise UnsupportedFormat(f"a kg output folder ({why}), not a folder of papers; name the files or folder your papers are in", path=name)
    place = kg_place(path, caches=True)
    if place is not None:
        raise UnsupportedFormat(f"{place}, not a folder of papers; name the files or folder your papers are in", path=name)


def _is_kg_graph(path: str) -> bool:
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a pipe there would block the read
            return False
        with open(path, "rb") as handle:
            return bool(_KG_GRAPH.match(handle.read(64)))
    except OSError:
        return False


def _is_output_link(path: str) -> bool:
    try:
        return os.readlink(path).startswith(".kg/current/")
    except OSError:
        return False


def _folder_files(folder: Path, name: str) -> list[Source]:
    """Every file with a known extension under `folder`, and a problem source for each entry that
    cannot be read (a folder that cannot be listed, a link loop, a pipe): none is left out silently."""
    found: list[Source] = []
    visited: set[str] = set()

    def named(path: str) -> str:
        relative = Path(path).relative_to(folder).as_posix()
        return name if relative == "." else f"{name}/{display_name(relative)}"

    def cannot_list(error: OSError) -> None:
        where = error.filename or str(folder)
        found.append(Source(named(where) + "/", Path(where), unreadable(error, named(where) + "/")))

    top = os.path.join(os.path.realpath(folder), "")
    for root, dirs, files in os.walk(folder, onerror=cannot_list, followlinks=True):
        real = os.path.realpath(root)
        # A link to a folder already read, or to one holding `folder` (a loop), is not entered.
        if real in visited or (root != str(folder) and top.startswith(os.path.join(real, ""))):
            dirs[:] = []
            continue
        visited.add(real)
        if root != str(folder) and is_output_folder(root):
            dirs[:] = []  # a kg output folder (e.g. `-o INPUT/out` of an earlier build): its files are not papers
            warnings.warn(f"{named(root)}/ is a kg output folder; its files are not read as input", OutputsSkipped, stacklevel=2)
            continue
        if root != str(folder) and os.path.isfile(os.path.join(root, STORE_STAMP)):
            dirs[:] = []  # a SPARQL store kg wrote (copied out of its output folder): its stamp is no paper
            warnings.warn(f"{named(root)}/ is a SPARQL store kg wrote; its files are not read as input", OutputsSkipped, stacklevel=2)
            continue
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        own_outputs = is_output_folder(root)  # `-o INPUT`: skip the outputs, read the rest
        for file in sorted(files):
            if file.startswith(".") or Path(file).suffix.lower() not in EXTENSIONS:
                continue
            if own_outputs and _is_output_link(os.path.join(root, file)):
                warnings.warn(f"{named(os.path.join(root, file))} is an output of kg (a build into this folder); not read as input", OutputsSkipped, stacklevel=2)
                continue
            if file == "graph.json" and _is_kg_graph(os.path.join(root, file)):  # a stray copy among papers: that file alone
                warnings.warn(f"{named(os.path.join(root, file))} is a graph kg built; not read as input", OutputsSkipped, stacklevel=2)
                continue
            path = Path(root, file)
            mode, problem = _stat(path, named(str(path)))
            if problem is None and not stat.S_ISREG(mode):
                problem = InputUnreadable("not a regular file (a named pipe, device or socket)", path=named(str(path)))
            if isinstance(problem, InputNotFound):  # a broken link inside a folder: say so, but skippably
                problem = InputUnreadable(problem.message.split(": ", 1)[-1], path=problem.path)
            found.append(Source(named(str(path)), path, problem))
    return found


def read_source(source: Source, *, stdin: IO[str] | None, lenient: bool) -> tuple[str, bool]:
    """The decoded text and whether it held undecodable bytes (only possible when `lenient`).

    Strict: bytes that are not UTF-8 raise `DecodeFailed` naming line and byte offset.
    Lenient (``--skip-invalid``): they become surrogates, and the records holding them are skipped.
    A source that cannot be read raises `InputUnreadable`.
    """
    if source.problem is not None:
        raise source.problem
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
        except FileNotFoundError:  # removed since it was listed
            raise InputNotFound("no such file or folder", path=source.name) from None
        except OSError as error:
            raise unreadable(error, source.name) from None
    return decode(data, name=source.name, lenient=lenient)


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):  # closed or stand-in streams (test runners)
        return False


def decode(data: bytes, *, name: str, lenient: bool = False) -> tuple[str, bool]:
    # UTF-32 first: its little-endian mark begins with UTF-16's.
    for boms, codec in (((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE), "utf-32"), ((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE), "utf-16")):
        if data.startswith(boms):  # e.g. a TSV saved by Excel as "Unicode text"
            try:
                return data.decode(codec), False
            except UnicodeDecodeError as error:
                raise DecodeFailed(f"not valid {codec.upper()} at byte offset {error.start}", path=name) from None
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


def detect_format(source: Source, text: str, *, forced: Format | None = None) -> Format:
    """`forced` if given; else by extension, by content for ``.txt`` and unknown extensions;
    `UnsupportedFormat` when neither tells. Warns (`LooksStructured`) when it chooses seed text
    for a file that looks structured."""
    if forced is not None:
        return forced
    if source.path is None:
        return "json" if text.lstrip().startswith("[") else "jsonl"
    by_extension = EXTENSIONS.get(source.path.suffix.lower())
    if by_extension == "text":
        by_content = structured_format(text, strict_table=True)
        if by_content is not None:
            return by_content
    elif by_extension:
        return by_extension
    else:
        by_extension = sniff(text, name=source.name)
    if by_extension == "text" and (looks := looks_structured(text)) is not None:
        what, fmt, extension = looks
        warning = LooksStructured(f"{source.name}: read as seed text (an abstract per paragraph), but it looks like {what}; if it is, give it the extension {extension}")
        warning.format = fmt
        warnings.warn(warning, stacklevel=2)
    return by_extension


def structured_format(text: str, *, strict_table: bool = False) -> Format | None:
    """The structured format `text` begins as: RIS, JSON, BibTeX or a table with an abstract
    column; None if none. `strict_table`: a table also needs a row right under its header (seed
    text has a blank line under its header line, and a header may hold commas)."""
    head = text.lstrip()
    if _RIS_START.match(head):
        return "ris"
    if _JSON_START.match(head) if strict_table else head.startswith(("{", "[")):
        return "json"
    if _BIBTEX_START.match(head):
        return "bibtex"
    first_line, _, rest = head.partition("\n")
    if strict_table and not rest.split("\n", 1)[0].strip():
        return None
    for delimiter, _, kind in _DELIMITERS:
        columns = [normalise_key(c.strip(' "')) for c in first_line.split(delimiter)]
        if len(columns) > 1 and any(c in ABSTRACT_NAMES for c in columns):
            return kind
    return None


def looks_structured(text: str) -> tuple[str, Format, str] | None:
    """What a file read as seed text looks like instead, if anything, as (what, format, extension):
    RIS tag lines, BibTeX entries, JSON objects one per line, or lines with the same delimiters
    from the top (a table)."""
    sample = text[:STRUCTURE_SAMPLE]
    if len(_RIS_TAG_LINE.findall(sample)) >= 2:
        return "RIS (TY  - … ER  - records)", "ris", ".ris"
    if _BIBTEX_ENTRY.search(sample):
        return "BibTeX (@type{key, …} entries)", "bibtex", ".bib"
    if _JSON_OBJECT_LINE.search(sample):
        return "JSON Lines (one object per line)", "jsonl", ".jsonl"
    lines = sample.lstrip().split("\n")[:TABLE_ROWS]
    for delimiter, least, fmt in _DELIMITERS:
        counts = {line.count(delimiter) for line in lines}
        if len(lines) == TABLE_ROWS and len(counts) == 1 and min(counts) >= least:
            return f"a table ({TABLE_ROWS} lines in a row with {min(counts)} {'tabs' if fmt == 'tsv' else repr(delimiter) + 's'} each)", fmt, f".{fmt}"
    return None


def sniff(text: str, *, name: str) -> Format:
    head = text.lstrip()
    if "\x00" in text[:4096]:
        raise UnsupportedFormat(f"binary content, not a corpus file (kg reads {SUPPORTED})", path=name)
    structured = structured_format(text)
    if structured is not None:
        return structured
    if re.search(r"\n[ \t]*\r?\n[ \t]*\S", head):
        return "text"  # paragraphs separated by blank lines
    raise UnsupportedFormat(
        f"cannot tell the format (kg reads {SUPPORTED}; a seed text file needs a header line, "
        "then abstracts separated by blank lines)",
        path=name,
    )

