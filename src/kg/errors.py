"""Errors the library raises and the exit codes the CLI maps them to.

The library never prints: it raises a `KgError` subclass carrying a one-line message.
The CLI prints ``Error: <message>`` to stderr and exits with the class's `exit_code`.
Codes are stable and documented in docs/exit-codes.md; one code per kind of failure.
Messages state the problem in library terms; the attributes some errors carry (`folder`,
`skippable`, `binding`) let the CLI add what to do in its own terms (a command, a flag).
"""

from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pathlib import Path


class ExitCode(IntEnum):
    OK = 0
    ERROR = 1  # unexpected failure (a bug): the CLI shows a traceback hint
    USAGE = 2  # bad command-line usage (click's own code)
    FILE_NOT_FOUND = 3
    UNSUPPORTED_FORMAT = 4
    DECODE_ERROR = 5
    MALFORMED_RECORD = 6
    MISSING_COLUMN = 7
    EMPTY_ABSTRACT = 8
    EMPTY_CORPUS = 9
    GRAPH_NOT_FOUND = 10
    PAPER_NOT_FOUND = 11
    AMBIGUOUS_PAPER = 12
    QUERY_SYNTAX = 13
    QUERY_FAILED = 14
    GOLD_FORMAT = 15
    CACHE_ERROR = 16
    SERVER_ERROR = 17
    OUTPUT_ERROR = 18
    MODEL_ERROR = 19
    INPUT_UNREADABLE = 20
    RECORD_TOO_LARGE = 21
    OUTPUT_PERMISSION = 22
    OUTPUT_LOCKED = 23
    EXTRA_MISSING = 24  # an optional extra (embed) is not installed
    LABEL_NOT_FOUND = 25  # `kg sparql`: a bound label names no concept (rows, if any, still printed); `kg leaderboard`: no dataset, metric or task has the name
    CONFIRMATION_NEEDED = 26  # `kg cache clear` with no terminal to ask on and no --yes


class KgError(Exception):
    """Base of every error kg reports to a user."""

    exit_code: ExitCode = ExitCode.ERROR

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InputError(KgError):
    """A problem with an input file; `where` names the file and, if known, line or record."""

    skippable = False  # True for a bad record that reading with skip_invalid=True would skip

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        self.path = path
        self.line = line
        where = path if line is None else f"{path}:{line}"
        super().__init__(f"{where}: {message}" if where else message)


class InputNotFound(InputError):
    exit_code = ExitCode.FILE_NOT_FOUND


class UnsupportedFormat(InputError):
    exit_code = ExitCode.UNSUPPORTED_FORMAT


class DecodeFailed(InputError):
    exit_code = ExitCode.DECODE_ERROR


class MalformedRecord(InputError):
    exit_code = ExitCode.MALFORMED_RECORD


class MissingColumn(InputError):
    exit_code = ExitCode.MISSING_COLUMN


class EmptyAbstract(InputError):
    exit_code = ExitCode.EMPTY_ABSTRACT


class EmptyCorpus(KgError):
    exit_code = ExitCode.EMPTY_CORPUS


class GraphNotFound(KgError):
    exit_code = ExitCode.GRAPH_NOT_FOUND

    def __init__(self, message: str, *, folder: str | None = None) -> None:
        super().__init__(message)
        self.folder = folder  # where a graph was expected (None: a file that is not a graph)


class GraphDamaged(GraphNotFound):
    """A graph file that exists but cannot be read (truncated, not JSON, the wrong shape)."""


class PaperNotFound(KgError):
    exit_code = ExitCode.PAPER_NOT_FOUND

    def __init__(self, message: str, *, suggestions: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.suggestions = suggestions


class AmbiguousPaper(KgError):
    exit_code = ExitCode.AMBIGUOUS_PAPER

    def __init__(self, message: str, *, candidates: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.candidates = candidates


class LabelNotFound(KgError):
    """A name that no concept of the asked kind has (`kg leaderboard DATASET`); `suggestions` are
    the closest labels, best first (the message names them too)."""

    exit_code = ExitCode.LABEL_NOT_FOUND

    def __init__(self, message: str, *, label: str = "", suggestions: tuple[str, ...] = ()) -> None:
        close = f"; close labels: {', '.join(suggestions)}" if suggestions else "; no label is close"
        super().__init__(message + close)
        self.label = label
        self.suggestions = suggestions


class QueryError(KgError):
    """A SPARQL query that cannot run. `binding` names the bound variable at fault ("" for
    the bindings as a whole; None when no binding is), `reason` is the message without it."""

    def __init__(self, message: str, *, binding: str | None = None) -> None:
        where = None if binding is None else f"binding {binding}" if binding else "bindings"
        super().__init__(message if where is None else f"{where}: {message}")
        self.reason = message
        self.binding = binding


class QuerySyntaxError(QueryError):
    exit_code = ExitCode.QUERY_SYNTAX
    # Where the parser stopped: (line, column), 1-based; and the query line with a caret under
    # the column (`kg.sparql.hints.excerpt`), which the CLI prints under the Error line.
    position: tuple[int, int] | None = None
    excerpt: tuple[str, str] | None = None


class QueryFailed(QueryError):
    exit_code = ExitCode.QUERY_FAILED


class GoldFormatError(InputError):
    exit_code = ExitCode.GOLD_FORMAT


class CacheError(KgError):
    exit_code = ExitCode.CACHE_ERROR


class CacheLocationLike(Protocol):
    """What the errors read of a `kg.extract.cache_location.CacheLocation` (not imported: every
    layer imports this module)."""

    @property
    def path(self) -> Path: ...
    @property
    def source(self) -> str: ...
    @property
    def why(self) -> str: ...


class CacheFolderUnusable(CacheError):
    """The cache folder cannot be made or written. `location` (a `CacheLocation`) is the folder
    and what chose it, `problem` what is wrong; the CLI names its own option and how to choose another."""

    offer_no_cache = True  # False where the command has no way to run without a cache (`kg cache …`)

    def __init__(self, location: CacheLocationLike, problem: str) -> None:
        self.location = location
        self.problem = problem
        super().__init__(f"cache folder {location.path} ({location.why}) {problem}")


class ConfirmationNeeded(KgError):
    """A destructive command with no terminal to ask on and no --yes."""

    exit_code = ExitCode.CONFIRMATION_NEEDED


class ServerError(KgError):
    exit_code = ExitCode.SERVER_ERROR


class OutputError(KgError):
    exit_code = ExitCode.OUTPUT_ERROR


class ModelError(InputError):
    """A folder given as a recognizer model (`--model`) that is not one kg can load."""

    exit_code = ExitCode.MODEL_ERROR


class InputUnreadable(InputError):
    """An input file or folder that exists but cannot be read: permission denied, a symbolic
    link loop, a named pipe or device inside a folder, an I/O error. Skippable like a bad record."""

    exit_code = ExitCode.INPUT_UNREADABLE


class RecordTooLarge(InputError):
    """A record with a field over its length limit (`kg.ingest.records.MAX_ABSTRACT_CHARS`, …)."""

    exit_code = ExitCode.RECORD_TOO_LARGE


class OutputPermissionDenied(OutputError):
    """The output cannot be written for lack of permission (or on a read-only file system)."""

    exit_code = ExitCode.OUTPUT_PERMISSION


class OutputLocked(OutputError):
    """Another `kg build` holds the output folder's lock (``OUT/.kg/lock``): it is writing there."""

    exit_code = ExitCode.OUTPUT_LOCKED


class KgWarning(UserWarning):
    """Base of the warnings kg gives (`warnings.warn`); the CLI shows them as ``Warning: …``."""


class CacheSetAside(KgWarning):
    """A cache file that could not be used was moved aside and a new one started."""


class CacheUnused(KgWarning):
    """A cache file that could not be used is still open in another process: this run goes without it."""


class UnknownTerm(KgWarning):
    """A query names a term of kg's namespace that its ontology does not declare."""


class OutputsSkipped(KgWarning):
    """An input folder holds a kg output folder; its files were not read as input."""


class LooksStructured(KgWarning):
    """A file read as seed text (by its .txt name or by content) that looks like a structured
    format: RIS, BibTeX, JSON Lines or a table. `format` names the format it looks like."""

    format: str | None = None


class EmbeddingsUnused(KgWarning):
    """A build's stored embeddings could not be used (damaged, forged, of other papers): related
    papers are ranked without them, which changes the ranking."""


class UserFileSetAside(KgWarning):
    """A file kg did not write stood where an output goes; it was renamed, not deleted."""


class ExtraMissing(KgError):
    """An option that needs an optional extra (``pip install 'kg[embed]'``) that is not installed."""

    exit_code = ExitCode.EXTRA_MISSING
