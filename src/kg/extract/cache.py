"""Extraction cache: per-paper results keyed by (abstract content, pipeline version).

One SQLite file (``extract.sqlite``) in the user cache folder that every build shares
(`kg.extract.cache_location`). Each row stores its payload with a SHA-256 checksum, the
version of the pipeline (or model) that made it and when it was last written or used. A row is used only if its checksum holds,
its JSON decodes and the value passes validation (by default: the shape of an extraction,
`valid_extraction`); any other row is reported as a miss (and later overwritten), never trusted.
A cache *file* that SQLite cannot use (not a database, truncated, a table of the wrong shape)
is moved aside (``extract.sqlite.damaged-<time>``) with a `CacheSetAside` warning and a new one
is started: a cache only saves time, so losing it must not stop a build.

Several builds share one cache at once, by design: SQLite's WAL mode lets readers run beside
the one writer, writes are short ``BEGIN IMMEDIATE`` transactions (64 papers) that wait up to
`BUSY_SECONDS` for each other, and a damaged file is moved aside only while no other process
has it open (`holders_lock`), never under a process still writing it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import sqlite3
import time
import unicodedata
import warnings
from collections.abc import Callable, Collection, Container, Iterable, Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

from kg.errors import CacheError, CacheSetAside, CacheUnused
from kg.extract.cache_schema import prepare, writing
from kg.model import CLAIM_KINDS, ENTITY_TYPES, ROLES, WHERE, Definition, LocalClaim, LocalMention
from kg.text.clean import clean_text
from kg.text.vocab import Vocabulary, normalize_key
from kg.util.filelock import FileLock

CACHE_FILE = "extract.sqlite"
BUSY_SECONDS = 60  # how long a write waits for another process's write (each takes milliseconds)
# A read refreshes a row's stamp only when it is older than this: `kg cache prune --older-than`
# counts in days, and rewriting every row a build reads would make each build a writer.
TOUCH_SECONDS = 86_400
SET_ASIDE_WAIT = 5.0  # seconds a damaged file waits for its other users to close it before it is moved
# SQLite result codes that mean the file (or its schema) is damaged, not busy or unwritable.
_DAMAGED = {"SQLITE_CORRUPT", "SQLITE_NOTADB", "SQLITE_FORMAT", "SQLITE_ERROR", "SQLITE_SCHEMA", "SQLITE_MISMATCH"}
_NO_ROOM = {"SQLITE_FULL", "SQLITE_IOERR_WRITE", "SQLITE_IOERR_FSYNC", "SQLITE_IOERR_SHMSIZE"}  # the disk, not the file
COMPANIONS = ("-wal", "-shm", "-journal")  # SQLite's side files, moved with the database


def content_key(text: str, pipeline_version: str) -> str:
    """The cache key of one text under one pipeline version."""
    digest = hashlib.sha256()
    digest.update(pipeline_version.encode("utf-8"))
    digest.update(b"\0")
    digest.update(text.encode("utf-8"))
    return digest.hexdigest()


def _checksum(payload: str) -> str:
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


# -- what a cached extraction must look like ------------------------------------------------

_TYPE_CHECKS: dict[str, Callable[[Any], bool]] = {
    "int": lambda v: type(v) is int,
    "float": lambda v: type(v) in (int, float) and math.isfinite(v),
    "float | None": lambda v: v is None or (type(v) in (int, float) and math.isfinite(v)),
    "str": lambda v: type(v) is str,
    "str | None": lambda v: v is None or type(v) is str,
    "EntityType": lambda v: v in ENTITY_TYPES,
    "Role": lambda v: v in ROLES, "Where": lambda v: v in WHERE,
    "ClaimKind": lambda v: v in CLAIM_KINDS,
    "bool": lambda v: type(v) is bool,
    "Span | None": lambda v: v is None or (type(v) is list and len(v) == 2 and all(type(x) is int for x in v) and 0 <= v[0] < v[1]),
}


def _record_check(cls: type) -> Callable[[Any], bool]:
    """A check that a JSON object has exactly the fields of dataclass `cls`, each of its type
    (a field of a type not listed above is checked for presence only)."""
    checks = {f.name: _TYPE_CHECKS.get(str(f.type), lambda v: True) for f in fields(cls)}

    def check(value: Any) -> bool:
        return isinstance(value, dict) and value.keys() == checks.keys() and all(checks[k](v) for k, v in value.items())

    return check


_MENTION_OK = _record_check(LocalMention)
_DEFINITION_OK = _record_check(Definition)
_CLAIM_OK = _record_check(LocalClaim)
_CLAIM_LINKS = ("metric", "dataset", "task", "method", "baseline")


def valid_extraction(value: Any) -> bool:
    """True if `value` is a cached `PaperExtraction` (its `to_dict()` without ``paper_id``):
    exactly ``mentions``, ``definitions`` and ``claims``, lists of complete, well-typed records, each
    mention and claim value a non-empty span at a non-negative offset."""
    if not isinstance(value, dict) or value.keys() != {"mentions", "definitions", "claims"}:
        return False
    mentions, definitions, claims = value["mentions"], value["definitions"], value["claims"]
    if not isinstance(mentions, list) or not isinstance(definitions, list) or not isinstance(claims, list):
        return False
    return (
        all(_MENTION_OK(m) and 0 <= m["start"] < m["end"] for m in mentions)
        and all(map(_DEFINITION_OK, definitions))
        and all(_CLAIM_OK(c) and 0 <= c["start"] < c["end"] for c in claims)
    )


def fits_text(value: dict[str, Any], text: str, *, sources: Container[str], vocabulary: Vocabulary) -> bool:
    """True if a valid cached extraction (`valid_extraction`) can describe `text`, the abstract
    its key was made from. A forged row with a recomputed checksum passes the checksum, not this:

    * every mention lies inside the text and equals its slice, within its sentence, at most once
      per span, from a known source, with a score, a confidence (and a recognizer's, if any) in [0, 1];
    * its curated concept, if any, exists and has the mention's type;
    * its key is the mention's own (`normalize_key` of its text), a long form the paper defines,
      or a key of its curated concept: a forged key cannot merge unrelated mentions;
    * every definition's short form is in the text and every word of its long form too."""
    length = len(text)
    plain = unicodedata.normalize("NFKC", text)
    words = set(re.findall(r"\w+", plain.lower()))
    for d in value["definitions"]:
        if not (0 < len(d["short"]) <= length and 0 < len(d["long"]) <= length) or d["short"] not in plain:
            return False
        if not all(w in words or w + "s" in words or w.removesuffix("s") in words for w in re.findall(r"\w+", unicodedata.normalize("NFKC", d["long"]).lower())):
            return False
    long_keys = {normalize_key(d["long"]) for d in value["definitions"]}
    spans: set[tuple[int, int]] = set()
    for m in value["mentions"]:
        start, end = m["start"], m["end"]
        if end > length or text[start:end] != m["text"] or not 0 <= m["sent_start"] <= start or not end <= m["sent_end"] <= length:
            return False
        if (start, end) in spans or m["source"] not in sources or not 0.0 <= m["score"] <= 1.0 or not 0.0 <= m["confidence"] <= 1.0 or not m["key"]:
            return False
        if m["model_confidence"] is not None and not 0.0 <= m["model_confidence"] <= 1.0:
            return False
        spans.add((start, end))
        entry = None
        if m["vocab"] is not None:
            entry = vocabulary.get(m["vocab"])
            if entry is None or entry.type != m["label"]:
                return False
        key = m["key"]
        if key != normalize_key(m["text"]) and key not in long_keys and (entry is None or vocabulary.by_key.get((m["label"], key)) is not entry):
            if key != normalize_key(clean_text(m["text"]).text):  # the key of the cleaned text (a word split across a line joined)
                return False
    return all(_claim_fits(c, text) for c in value["claims"])


def _claim_fits(claim: dict[str, Any], text: str) -> bool:
    """A claim's value is its slice of the text, a number, inside its sentence; every link lies in the text."""
    start, end, sent_start, sent_end = claim["start"], claim["end"], claim["sent_start"], claim["sent_end"]
    if end > len(text) or text[start:end] != claim["value"] or not re.match(r"\.?\d", claim["value"]) or not 0 <= sent_start <= start:
        return False
    return end <= sent_end <= len(text) and 0.0 <= claim["score"] <= 1.0 and all(claim[link] is None or claim[link][1] <= len(text) for link in _CLAIM_LINKS)


# -- the store --------------------------------------------------------------------------------

def lenient_text(raw: bytes) -> str:
    """SQLite text as str, invalid UTF-8 replaced: such a row then fails its checksum and is a
    miss, where Python's default decoding raised on the first one and stopped every build."""
    return raw.decode("utf-8", "replace")


def is_damage(error: sqlite3.DatabaseError) -> bool:
    """Whether SQLite's error means the file is damaged (moved aside and started anew), not
    busy, unwritable or missing; a constraint kg's own writes cannot break (a trigger's RAISE) too."""
    name = getattr(error, "sqlite_errorname", None)
    return (name in _DAMAGED or name.startswith("SQLITE_CONSTRAINT")) if name is not None else not isinstance(error, sqlite3.OperationalError)


def _use_wal(db: sqlite3.Connection) -> None:
    """WAL mode (readers beside the writer; kept in the file once set). Switching needs the file
    to itself and SQLite answers "database is locked" at once, without the busy timeout, when
    another process has it open (two builds starting on a new cache): so wait here, as a write would."""
    deadline = time.monotonic() + BUSY_SECONDS
    while db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return  # switched, or a mode SQLite keeps (a read-only file): as before, use it as it is
        except sqlite3.OperationalError as error:
            if getattr(error, "sqlite_errorname", None) not in ("SQLITE_BUSY", "SQLITE_LOCKED") or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def holders_lock(database: Path) -> Path:
    """The lock file every user of `database` holds shared (`kg.util.filelock`)."""
    return database.with_name(f"{database.name}.lock")


def _identity(path: Path) -> tuple[int, int] | None:
    """Which file is at `path` now (device, inode); None: none."""
    try:
        status = os.stat(path)
    except FileNotFoundError:
        return None
    return status.st_dev, status.st_ino


class ExtractionCache:
    """A key → JSON-value store with integrity checks. Use as a context manager.

    `validate` decides whether a decoded value may be used (`valid_extraction` by default;
    ``None`` accepts any JSON value). `version` is the pipeline (or model) version the caller's
    keys are made from: written with each row, and given to rows of unknown version it finds.
    `corrupt` counts the rows refused since opening; `set_aside` lists the damaged files moved
    away; `unused` says why this cache is not used this run (None: it is)."""

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        validate: Callable[[Any], bool] | None = valid_extraction,
        file_name: str = CACHE_FILE,
        version: str | None = None,
    ) -> None:
        self.path = Path(directory) / file_name
        self.version = version
        self.corrupt = 0  # rows found damaged since opening
        self.set_aside: list[Path] = []
        self.unused: str | None = None
        self._validate = validate
        self._identity: tuple[int, int] | None = None  # the file this connection opened
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise CacheError(f"cannot use cache {self.path}: {error.strerror or error}") from error
        # Every user holds FILE.lock shared; moving a damaged file aside takes it exclusively: moved
        # from under a process still using it, the file would take that process's later writes
        # with it, and its -wal and -shm side files could meet the new file's.
        try:
            self._holders = FileLock(holders_lock(self.path))
        except OSError as error:
            raise CacheError(f"cannot use cache {self.path}: {error.strerror or error}") from error
        if not self._holders.share(BUSY_SECONDS):  # only `kg cache clear` or a set-aside holds it exclusively, briefly
            self._holders.close()
            raise CacheError(f"cannot use cache {self.path}: another kg process kept it locked for {BUSY_SECONDS} s")
        self._db: sqlite3.Connection | None = None
        try:
            self._db = self._open()
        except BaseException:
            self._holders.close()
            raise

    def __enter__(self) -> ExtractionCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
        self._holders.close()

    def _connect(self) -> sqlite3.Connection:
        if self.path.exists() and not self.path.is_file():  # a folder or FIFO where the file goes: SQLite cannot open it
            self._identity = _identity(self.path)
            raise sqlite3.DatabaseError("it is not a file")  # damaged: moved aside like a file SQLite cannot read
        # isolation_level=None: no implicit transactions; writes use `_writing`, reads hold no lock.
        db = sqlite3.connect(self.path, timeout=BUSY_SECONDS, isolation_level=None)
        db.text_factory = lenient_text
        try:
            self._identity = _identity(self.path)
            _use_wal(db)
            db.execute("PRAGMA synchronous=NORMAL")  # still consistent in WAL; a power cut may lose the last commits, which a cache can afford
            prepare(db)  # kg's table made, or migrated; a file holding anything else is damaged
            db.execute("SELECT key, checksum, payload, version, stamp FROM extraction LIMIT 1").fetchall()
        except BaseException:
            db.close()
            raise
        return db

    def _open(self) -> sqlite3.Connection | None:
        """Connect; a damaged file is moved aside (with a warning) and a new one started.
        None: the damaged file is still open in another process, so this run goes without."""
        try:
            return self._connect()
        except sqlite3.DatabaseError as error:
            if getattr(error, "sqlite_errorname", None) in _NO_ROOM:
                self._go_without(error)
                return None
            if not is_damage(error):
                raise CacheError(f"cannot use cache {self.path}: {error}") from error
            if not self._move_aside(error):
                return None
        try:
            return self._connect()
        except sqlite3.DatabaseError as error:
            raise CacheError(f"cannot use cache {self.path}: {error}") from error

    def _move_aside(self, error: BaseException) -> bool:
        """Move the damaged file (and its side files) aside once no other process has it open;
        False if one still has after `SET_ASIDE_WAIT`: then this run goes without the cache."""
        damaged_file = self._identity
        self._holders.release()  # others handling the same damage can take it too
        if not self._holders.own(SET_ASIDE_WAIT):
            self.unused = f"cache {self.path} could not be used ({error}) and another kg process has it open; going without the cache this time"
            warnings.warn(self.unused, CacheUnused, stacklevel=4)
            return False
        try:
            if _identity(self.path) == damaged_file:  # else another process moved it first: use the new one
                self._rename_aside(error)
        finally:
            self._holders.share(BUSY_SECONDS)  # an ordinary user of the new file again
        return True

    def _rename_aside(self, error: BaseException) -> None:
        aside = self.path.with_name(f"{self.path.name}.damaged-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}")
        try:
            for suffix in ("", *COMPANIONS):
                with contextlib.suppress(FileNotFoundError):
                    os.replace(f"{self.path}{suffix}", f"{aside}{suffix}")
        except OSError as move_error:
            raise CacheError(f"cache {self.path} is damaged ({error}) and cannot be moved aside: {move_error.strerror}") from move_error
        self.set_aside.append(aside)
        warnings.warn(
            f"cache {self.path} could not be used ({error}); moved it to {aside.name} and started a new one",
            CacheSetAside,
            stacklevel=5,
        )

    def _recover(self, error: sqlite3.DatabaseError) -> None:
        """The file turned out damaged while in use: set it aside and go on with a new one."""
        if not is_damage(error):
            raise CacheError(f"cannot use cache {self.path}: {error}") from error
        if self._db is not None:
            self._db.close()
            self._db = None
        if self._move_aside(error):
            self._db = self._open()

    def get_many(self, keys: Iterable[str]) -> dict[str, Any]:
        """Values for the keys present and intact; damaged rows count in `corrupt`. If the file
        proves damaged while reading, the rows read so far (each checked) are kept."""
        found: dict[str, Any] = {}
        wanted = list(dict.fromkeys(keys))
        asked = set(wanted)
        now = int(time.time())
        for offset in range(0, len(wanted), 500):  # stay under SQLite's variable limit
            if self._db is None:
                return found
            chunk = wanted[offset : offset + 500]
            marks = ",".join("?" * len(chunk))
            try:
                rows = self._db.execute(f"SELECT key, checksum, payload, version, stamp FROM extraction WHERE key IN ({marks})", chunk).fetchall()
            except sqlite3.DatabaseError as error:
                self._recover(error)
                return found
            stale = []
            for key, checksum, payload, version, stamp in rows:
                value = self._decode(checksum, payload)
                if key not in asked or value is None:
                    self.corrupt += 1
                    continue
                found[key] = value
                if type(stamp) is not int or stamp < now - TOUCH_SECONDS or (version is None and self.version is not None):
                    stale.append(key)
            if stale:
                self._touch(stale, now)
        return found

    def _touch(self, keys: list[str], now: int) -> None:
        """Stamp rows as used now, and give rows of unknown version the caller's (their key is
        made from it). Best effort: a busy, read-only or damaged file keeps its old stamps."""
        assert self._db is not None
        with contextlib.suppress(sqlite3.DatabaseError):
            with writing(self._db):
                self._db.executemany("UPDATE extraction SET stamp = ?, version = COALESCE(version, ?) WHERE key = ?", [(now, self.version, key) for key in keys])

    def put_many(self, items: Mapping[str, Any]) -> None:
        now = int(time.time())
        rows = []
        for key, value in items.items():
            payload = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
            rows.append((key, _checksum(payload), payload, self.version, now))
        for attempt in (1, 2):
            if self._db is None:
                return
            try:
                with writing(self._db):  # one transaction: all or nothing
                    self._db.executemany("INSERT OR REPLACE INTO extraction (key, checksum, payload, version, stamp) VALUES (?, ?, ?, ?, ?)", rows)
                return
            except sqlite3.DatabaseError as error:
                if getattr(error, "sqlite_errorname", None) in _NO_ROOM:
                    self._go_without(error)
                    return
                if attempt == 2 or not is_damage(error):
                    raise CacheError(f"cannot write cache {self.path}: {error}") from error
                self._recover(error)

    def _go_without(self, error: sqlite3.DatabaseError) -> None:
        """A full disk or quota: the cache only saves time, so the run goes on without it."""
        self.unused = f"cache {self.path} cannot take more ({error}); going on without writing to it this time"
        warnings.warn(self.unused, CacheUnused, stacklevel=4)
        self.close()

    def _decode(self, checksum: str, payload: Any) -> Any | None:
        if not isinstance(payload, str) or _checksum(payload) != checksum:
            return None
        try:
            value = json.loads(payload)
        except (ValueError, RecursionError):
            return None
        if self._validate is not None and not self._validate(value):
            return None
        return value

    # -- housekeeping (`kg cache prune`) --

    def entries_by_version(self) -> dict[str | None, int]:
        """Rows per version (None: not known, a row from before kg recorded versions)."""
        if self._db is None:
            return {}
        return dict(self._db.execute("SELECT version, COUNT(*) FROM extraction GROUP BY version").fetchall())

    def drop(self, *, keep_versions: Collection[str] | None = None, written_before: int | None = None) -> dict[str | None, int]:
        """Delete the rows of a version not in `keep_versions` (rows of unknown version stay:
        they may be current) and, with `written_before` (unix seconds), the rows not written or
        used since. Returns the rows deleted per version; run `compact` after to free the space."""
        if self._db is None:
            return {}
        clauses, parameters = list[str](), list[str | int]()  # versions, then a stamp
        if keep_versions is not None:
            keep = sorted(keep_versions)
            clauses.append(f"(version IS NOT NULL AND version NOT IN ({','.join('?' * len(keep))}))" if keep else "version IS NOT NULL")
            parameters += keep
        if written_before is not None:
            clauses.append("stamp < ?")
            parameters.append(written_before)
        if not clauses:
            return {}
        where = " OR ".join(clauses)
        with writing(self._db):
            dropped = dict(self._db.execute(f"SELECT version, COUNT(*) FROM extraction WHERE {where} GROUP BY version", parameters).fetchall())
            self._db.execute(f"DELETE FROM extraction WHERE {where}", parameters)
        return dropped

    def compact(self) -> None:
        """Give freed pages back to the file system (VACUUM, then empty the write-ahead log)."""
        if self._db is not None:
            self._db.execute("VACUUM")
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
