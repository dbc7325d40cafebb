"""Extraction cache: per-paper results keyed by (abstract content, pipeline version).

One SQLite file (by default ``out/cache/extract.sqlite``; ``--cache DIR`` shares one).
Each row stores its payload with a SHA-256 checksum. A row is used only if its checksum holds,
its JSON decodes and the value passes validation (by default: the shape of an extraction,
`valid_extraction`); any other row is reported as a miss (and later overwritten), never trusted.
A cache *file* that SQLite cannot use (not a database, truncated, a table of the wrong shape)
is moved aside (``extract.sqlite.damaged-<time>``) with a `CacheSetAside` warning and a new one
is started: a cache only saves time, so losing it must not stop a build.
SQLite gives atomic, crash-safe commits and lets several builds share one cache.
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
from collections.abc import Callable, Container, Iterable, Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

from kg.errors import CacheError, CacheSetAside
from kg.model import ENTITY_TYPES, ROLES, Definition, LocalMention
from kg.text.clean import clean_text
from kg.text.vocab import Vocabulary, normalize_key

CACHE_FILE = "extract.sqlite"
_COLUMNS = ["key", "checksum", "payload"]
_SCHEMA = """
CREATE TABLE IF NOT EXISTS extraction (
    key TEXT PRIMARY KEY,   -- sha256(pipeline version + NUL + text)
    checksum TEXT NOT NULL, -- sha256 of payload
    payload TEXT NOT NULL   -- JSON
)
"""
# SQLite result codes that mean the file (or its schema) is damaged, not busy or unwritable.
_DAMAGED = {"SQLITE_CORRUPT", "SQLITE_NOTADB", "SQLITE_FORMAT", "SQLITE_ERROR", "SQLITE_SCHEMA", "SQLITE_MISMATCH"}
_COMPANIONS = ("-wal", "-shm", "-journal")  # SQLite's side files, moved with the database


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
    "str": lambda v: type(v) is str,
    "str | None": lambda v: v is None or type(v) is str,
    "EntityType": lambda v: v in ENTITY_TYPES,
    "Role": lambda v: v in ROLES,
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


def valid_extraction(value: Any) -> bool:
    """True if `value` is a cached `PaperExtraction` (its `to_dict()` without ``paper_id``):
    exactly ``mentions`` and ``definitions``, lists of complete, well-typed records, each
    mention a non-empty span at a non-negative offset."""
    if not isinstance(value, dict) or value.keys() != {"mentions", "definitions"}:
        return False
    mentions, definitions = value["mentions"], value["definitions"]
    if not isinstance(mentions, list) or not isinstance(definitions, list):
        return False
    return all(_MENTION_OK(m) and 0 <= m["start"] < m["end"] for m in mentions) and all(map(_DEFINITION_OK, definitions))


def fits_text(value: dict[str, Any], text: str, *, sources: Container[str], vocabulary: Vocabulary) -> bool:
    """True if a valid cached extraction (`valid_extraction`) can describe `text`, the abstract
    its key was made from. A forged row with a recomputed checksum passes the checksum, not this:

    * every mention lies inside the text and equals its slice, within its sentence, at most once
      per span, from a known source, with a score in [0, 1];
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
        if (start, end) in spans or m["source"] not in sources or not 0.0 <= m["score"] <= 1.0 or not m["key"]:
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
    return True


# -- the store --------------------------------------------------------------------------------


def _damaged(error: sqlite3.DatabaseError) -> bool:
    name = getattr(error, "sqlite_errorname", None)
    return name in _DAMAGED if name is not None else not isinstance(error, sqlite3.OperationalError)


class _WrongShape(sqlite3.DatabaseError):
    """The file is a database, but its extraction table is not the one kg writes."""

    sqlite_errorname = "SQLITE_SCHEMA"


class ExtractionCache:
    """A key → JSON-value store with integrity checks. Use as a context manager.

    `validate` decides whether a decoded value may be used (`valid_extraction` by default;
    ``None`` accepts any JSON value). `corrupt` counts the rows refused since opening;
    `set_aside` lists the damaged files moved away."""

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        validate: Callable[[Any], bool] | None = valid_extraction,
        file_name: str = CACHE_FILE,
    ) -> None:
        self.path = Path(directory) / file_name
        self.corrupt = 0  # rows found damaged since opening
        self.set_aside: list[Path] = []
        self._validate = validate
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise CacheError(f"cannot use cache {self.path}: {error.strerror or error}") from error
        self._db = self._open()

    def __enter__(self) -> ExtractionCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=60)
        try:
            db.execute(_SCHEMA)
            db.commit()
            columns = [row[1] for row in db.execute("PRAGMA table_info(extraction)")]
            if columns != _COLUMNS:
                raise _WrongShape(f"its extraction table has columns {', '.join(columns) or 'none'}")
            db.execute("SELECT key, checksum, payload FROM extraction LIMIT 1").fetchall()
        except BaseException:
            db.close()
            raise
        return db

    def _open(self) -> sqlite3.Connection:
        """Connect; a damaged file is moved aside (with a warning) and a new one started."""
        try:
            return self._connect()
        except sqlite3.DatabaseError as error:
            if not _damaged(error):
                raise CacheError(f"cannot use cache {self.path}: {error}") from error
            self._move_aside(error)
        try:
            return self._connect()
        except sqlite3.DatabaseError as error:
            raise CacheError(f"cannot use cache {self.path}: {error}") from error

    def _move_aside(self, error: BaseException) -> None:
        aside = self.path.with_name(f"{self.path.name}.damaged-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}")
        try:
            for suffix in ("", *_COMPANIONS):
                with contextlib.suppress(FileNotFoundError):  # another build may have moved it first
                    os.replace(f"{self.path}{suffix}", f"{aside}{suffix}")
        except OSError as move_error:
            raise CacheError(f"cache {self.path} is damaged ({error}) and cannot be moved aside: {move_error.strerror}") from move_error
        self.set_aside.append(aside)
        warnings.warn(
            f"cache {self.path} could not be used ({error}); moved it to {aside.name} and started a new one",
            CacheSetAside,
            stacklevel=3,
        )

    def _recover(self, error: sqlite3.DatabaseError) -> None:
        """The file turned out damaged while in use: set it aside and go on with a new one."""
        if not _damaged(error):
            raise CacheError(f"cannot use cache {self.path}: {error}") from error
        self._db.close()
        self._move_aside(error)
        self._db = self._open()

    def get_many(self, keys: Iterable[str]) -> dict[str, Any]:
        """Values for the keys present and intact; damaged rows count in `corrupt`. If the file
        proves damaged while reading, the rows read so far (each checked) are kept."""
        found: dict[str, Any] = {}
        wanted = list(dict.fromkeys(keys))
        asked = set(wanted)
        for offset in range(0, len(wanted), 500):  # stay under SQLite's variable limit
            chunk = wanted[offset : offset + 500]
            marks = ",".join("?" * len(chunk))
            try:
                rows = self._db.execute(f"SELECT key, checksum, payload FROM extraction WHERE key IN ({marks})", chunk).fetchall()
            except sqlite3.DatabaseError as error:
                self._recover(error)
                return found
            for key, checksum, payload in rows:
                value = self._decode(checksum, payload)
                if key not in asked or value is None:
                    self.corrupt += 1
                else:
                    found[key] = value
        return found

    def put_many(self, items: Mapping[str, Any]) -> None:
        rows = []
        for key, value in items.items():
            payload = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
            rows.append((key, _checksum(payload), payload))
        for attempt in (1, 2):
            try:
                with self._db:  # one transaction: all or nothing
                    self._db.executemany("INSERT OR REPLACE INTO extraction VALUES (?, ?, ?)", rows)
                return
            except sqlite3.DatabaseError as error:
                if attempt == 2 or not _damaged(error):
                    raise CacheError(f"cannot write cache {self.path}: {error}") from error
                self._recover(error)

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
