"""Where the caches live: one folder per user, shared by every build.

By default the platform's user cache folder (`platformdirs`: ``$XDG_CACHE_HOME/kg`` or
``~/.cache/kg`` on Linux, ``~/Library/Caches/kg`` on macOS); ``KG_CACHE_DIR`` overrides it and
``--cache DIR`` overrides both (`resolve_cache_dir` is the one place that decides). An empty
value counts as unset; a relative one is taken from the folder kg runs in, like any path.
A folder that cannot hold the cache is an error (`check_cache_dir`, exit 16), not a build that
quietly runs without it: every later build would be just as slow, and nobody would know why.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from kg.errors import CacheFolderUnusable
from kg.util.places import BUILDS, KG_DIR, STORE, STORE_DIR, kg_place, within

ENV_VAR = "KG_CACHE_DIR"
# What chose the folder: the caller's option (the CLI's --cache), the environment, or the default.
Source = Literal["option", "KG_CACHE_DIR", "default"]


@dataclass(frozen=True)
class CacheLocation:
    """The cache folder and what chose it."""

    path: Path
    source: Source

    @property
    def why(self) -> str:
        return {"option": "as asked", "KG_CACHE_DIR": "from KG_CACHE_DIR", "default": "the user cache folder"}[self.source]


def default_cache_dir() -> Path:
    """The platform's user cache folder for kg (not created here)."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("kg", appauthor=False))


def resolve_cache_dir(option: str | os.PathLike[str] | None = None, *, no_cache: bool = False) -> CacheLocation | None:
    """The cache folder to use: `option` (``--cache``), else ``KG_CACHE_DIR``, else the user
    cache folder; None with `no_cache`. Empty strings count as not given."""
    if no_cache:
        return None
    if option is not None and os.fspath(option) != "":
        return CacheLocation(Path(option), "option")
    from_env = os.environ.get(ENV_VAR, "")
    if from_env:
        return CacheLocation(Path(from_env), "KG_CACHE_DIR")
    return CacheLocation(default_cache_dir(), "default")


def refuse_misplaced(location: CacheLocation, *, out: str | os.PathLike[str] | None = None) -> None:
    """`CacheFolderUnusable` if something other than a folder is where the cache folder goes, or
    the folder is in one of kg's own (`kg.util.places.kg_place`: an output folder's ``.kg``, where
    a cache file would change a published build, or a SPARQL store, which the next build replaces),
    or where the output folder `out` (of a build about to run: maybe its first) keeps them."""
    if location.path.exists() and not location.path.is_dir():
        raise CacheFolderUnusable(location, "is not a folder")
    place = kg_place(location.path)
    if place is None and out is not None:
        place = BUILDS if within(location.path, Path(out) / KG_DIR) else STORE if within(location.path, Path(out) / STORE_DIR) else None
    if place is not None:
        raise CacheFolderUnusable(location, f"is inside {place}")


def check_cache_dir(location: CacheLocation, *, out: str | os.PathLike[str] | None = None) -> None:
    """Make the folder if missing and check a file can be written in it; `CacheFolderUnusable`
    (one line naming the folder and what chose it) if not. Called before a build writes anything
    (into `out`, whose builds and store the cache may not be in either)."""
    path = location.path
    refuse_misplaced(location, out=out)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise CacheFolderUnusable(location, f"cannot be made: {error.strerror or error}") from error
    probe = path / f".kg-probe-{os.getpid()}-{secrets.token_hex(4)}"
    try:  # a real write: permission bits say nothing for root, a read-only mount or a full quota
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        os.unlink(probe)
    except OSError as error:
        raise CacheFolderUnusable(location, f"cannot be written: {error.strerror or error}") from error
