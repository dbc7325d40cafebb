"""What a cache file holds (`kg.extract.cache.ExtractionCache`): one table, made or migrated here.

A file whose schema is not kg's is damaged for the cache: moved aside and started anew, which
costs only time. That covers a table of other columns, and anything else in the file: a
trigger (one planted to ``RAISE`` on every insert made every build fail with exit 16), a view,
another table or index. SQLite's ``trusted_schema`` is off as well, so what a file's schema
holds runs no function with side effects.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Iterator

COLUMNS = ["key", "checksum", "payload", "version", "stamp"]
OLD_COLUMNS = COLUMNS[:3]  # kg before rows carried their version: migrated in place
SCHEMA = """
CREATE TABLE IF NOT EXISTS extraction (
    key TEXT PRIMARY KEY,   -- sha256(pipeline version + NUL + text)
    checksum TEXT NOT NULL, -- sha256 of payload
    payload TEXT NOT NULL,  -- JSON
    version TEXT,           -- the pipeline or model version that made it; NULL: not known (a row from before kg recorded it)
    stamp INTEGER           -- unix seconds the row was last written, or used (refreshed at most every TOUCH_SECONDS)
)
"""
OWN_OBJECTS = {("table", "extraction"), ("index", "sqlite_autoindex_extraction_1")}  # all a cache file of kg's holds


class WrongShape(sqlite3.DatabaseError):
    """The file is a database, but not as kg makes it: its extraction table has other columns,
    or it holds something else (a trigger, a view, another table or index)."""

    sqlite_errorname = "SQLITE_SCHEMA"


def prepare(db: sqlite3.Connection) -> None:
    """Make kg's table in a new file, migrate an older one; `WrongShape` for a file that holds
    anything but kg's table."""
    db.execute("PRAGMA trusted_schema=OFF")
    db.execute(SCHEMA)
    columns = _columns(db)
    if columns == OLD_COLUMNS:
        _migrate(db)
    elif columns != COLUMNS:
        raise WrongShape(f"its extraction table has columns {', '.join(columns) or 'none'}")
    for kind, name in db.execute("SELECT type, name FROM sqlite_master ORDER BY type, name"):
        if (kind, name) not in OWN_OBJECTS:
            raise WrongShape(f"it holds a {kind} {name!r}, which kg does not make")


@contextlib.contextmanager
def writing(db: sqlite3.Connection) -> Iterator[None]:
    """One short write transaction. BEGIN IMMEDIATE takes the write lock at once, waiting for
    another process's write up to the busy timeout, instead of failing halfway when a read
    inside a deferred transaction would have to turn into a write."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _columns(db: sqlite3.Connection) -> list[str]:
    return [row[1] for row in db.execute("PRAGMA table_info(extraction)")]


def _migrate(db: sqlite3.Connection) -> None:
    """Give a cache from before versions were recorded its version and stamp columns. Its rows'
    version is not known (NULL until a build reads one under its key); their stamp is the
    migration's time, a column default, so no row is rewritten."""
    with writing(db):
        if _columns(db) == OLD_COLUMNS:  # another process may have migrated it meanwhile
            db.execute("ALTER TABLE extraction ADD COLUMN version TEXT")
            db.execute(f"ALTER TABLE extraction ADD COLUMN stamp INTEGER DEFAULT {int(time.time())}")  # an int: nothing to escape
