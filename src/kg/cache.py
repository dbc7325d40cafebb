"""Extraction cache: per-paper results keyed by (abstract content, pipeline version).

One SQLite file (by default ``out/cache/extract.sqlite``; ``--cache DIR`` shares one).
Each row stores its payload with a SHA-256 checksum: a row that fails the check or
does not decode is reported as a miss (and later overwritten), never trusted.
SQLite gives atomic, crash-safe commits and lets several builds share one cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from kg.errors import CacheError

CACHE_FILE = "extract.sqlite"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS extraction (
    key TEXT PRIMARY KEY,   -- sha256(pipeline version + NUL + text)
    checksum TEXT NOT NULL, -- sha256 of payload
    payload TEXT NOT NULL   -- JSON
)
"""


def content_key(text: str, pipeline_version: str) -> str:
    """The cache key of one text under one pipeline version."""
    digest = hashlib.sha256()
    digest.update(pipeline_version.encode("utf-8"))
    digest.update(b"\0")
    digest.update(text.encode("utf-8"))
    return digest.hexdigest()


def _checksum(payload: str) -> str:
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class ExtractionCache:
    """A key → JSON-value store with integrity checks. Use as a context manager."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.path = Path(directory) / CACHE_FILE
        self.corrupt = 0  # rows found damaged since opening
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=60)
            self._db.execute(_SCHEMA)
            self._db.commit()
        except (OSError, sqlite3.DatabaseError) as error:
            raise CacheError(f"cannot use cache {self.path}: {error}") from error

    def __enter__(self) -> ExtractionCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    def get_many(self, keys: Iterable[str]) -> dict[str, Any]:
        """Values for the keys present and intact; damaged rows count in `corrupt`."""
        found: dict[str, Any] = {}
        wanted = list(dict.fromkeys(keys))
        for offset in range(0, len(wanted), 500):  # stay under SQLite's variable limit
            chunk = wanted[offset : offset + 500]
            marks = ",".join("?" * len(chunk))
            try:
                rows = self._db.execute(f"SELECT key, checksum, payload FROM extraction WHERE key IN ({marks})", chunk)
                for key, checksum, payload in rows:
                    value = self._decode(checksum, payload)
                    if value is None:
                        self.corrupt += 1
                    else:
                        found[key] = value
            except sqlite3.DatabaseError as error:
                raise CacheError(f"cache {self.path} is damaged ({error}); delete it to rebuild") from error
        return found

    def put_many(self, items: Mapping[str, Any]) -> None:
        rows = []
        for key, value in items.items():
            payload = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
            rows.append((key, _checksum(payload), payload))
        try:
            with self._db:  # one transaction: all or nothing
                self._db.executemany("INSERT OR REPLACE INTO extraction VALUES (?, ?, ?)", rows)
        except sqlite3.DatabaseError as error:
            raise CacheError(f"cannot write cache {self.path}: {error}") from error

    @staticmethod
    def _decode(checksum: str, payload: Any) -> Any | None:
        if not isinstance(payload, str) or _checksum(payload) != checksum:
            return None
        try:
            return json.loads(payload)
        except ValueError:
            return None
