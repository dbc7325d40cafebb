"""`kg cache info | prune | clear`: the extraction and embedding caches every build shares."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import click

from kg.cli.common import F
from kg.errors import ConfirmationNeeded

if TYPE_CHECKING:
    from kg.extract.cache_files import CacheReport
    from kg.extract.cache_location import CacheLocation

MAX_DAYS = 100_000  # about 270 years: larger would overflow SQLite's integers
SOURCE_SHOWN = {"option": "--cache", "KG_CACHE_DIR": "KG_CACHE_DIR", "default": "default"}  # what chose the folder, in CLI terms
CACHE_HELP = "Cache folder (default: $KG_CACHE_DIR, else the user cache folder, e.g. ~/.cache/kg)."


def cache_folder_option(command: F) -> F:
    return click.option("--cache", "cache_dir", type=click.Path(), default=None, help=CACHE_HELP)(command)  # a file: exit 16, as for builds


@click.group()
def cache() -> None:
    """Show, prune or clear the extraction and embedding caches that every build shares.

    The cache folder is --cache DIR if given, else $KG_CACHE_DIR, else the platform's user
    cache folder ($XDG_CACHE_HOME/kg or ~/.cache/kg on Linux). `kg build` and `kg extract`
    read and fill it; several builds may use it at the same time.
    """


def _location(cache_dir: str | None) -> CacheLocation:
    from kg.errors import CacheFolderUnusable
    from kg.extract.cache_location import refuse_misplaced, resolve_cache_dir

    location = resolve_cache_dir(cache_dir)
    assert location is not None  # only no_cache gives None
    try:
        refuse_misplaced(location)
    except CacheFolderUnusable as error:
        error.offer_no_cache = False  # these commands have no --no-cache to offer
        raise
    return location


def human_size(size: int) -> str:
    if size < 1_000:
        return f"{size:,} bytes"
    if size < 1_000_000:
        return f"{size / 1e3:.1f} kB"
    return f"{size / 1e6:,.1f} MB"


@cache.command()
@cache_folder_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
def info(cache_dir: str | None, as_json: bool) -> None:
    """Where the cache is and why, its size, and its entries per file and version.

    Versions this kg writes are marked current (extraction with the shipped recognizer, with
    rules alone, and every embedder's model); `kg cache prune` drops the others.
    """
    from kg.builder import current_cache_versions
    from kg.extract.cache_files import cache_report

    current = current_cache_versions()
    report = cache_report(_location(cache_dir), current)
    click.echo(json.dumps(report_dict(report, current), indent=2, ensure_ascii=False) if as_json else render_report(report, current))


def report_dict(report: CacheReport, current: dict[str, dict[str, str]]) -> dict[str, Any]:
    return {
        "folder": str(report.location.path.absolute()),
        "source": SOURCE_SHOWN[report.location.source],
        "size": report.size,
        "files": [
            {
                "name": f.name, "path": str(f.path.absolute()), "exists": f.exists, "size": f.size, "entries": f.entries, "problem": f.problem,
                "versions": [{"version": v, "entries": n, "current": v in current[f.name]} for v, n in _ordered(f.by_version)],
                "current": [{"version": v, "what": what} for v, what in current[f.name].items()],
            }
            for f in report.files
        ],
        "set_aside": [str(p.absolute()) for p in report.set_aside],
    }


def _ordered(by_version: dict[str | None, int]) -> list[tuple[str | None, int]]:
    """Most entries first; unknown versions last."""
    return sorted(by_version.items(), key=lambda item: (item[0] is None, -item[1], item[0] or ""))


def render_report(report: CacheReport, current: dict[str, dict[str, str]]) -> str:
    location = report.location
    why = {"option": "from --cache", "KG_CACHE_DIR": "from KG_CACHE_DIR; --cache DIR overrides it", "default": "the user cache folder; --cache DIR or KG_CACHE_DIR chooses another"}[location.source]
    lines = [f"Cache folder  {location.path.absolute()}  ({why})", f"Size on disk  {human_size(report.size)}"]
    for f in report.files:
        if not f.exists:
            lines.append(f"{f.name}  none yet")
        elif f.problem is not None:
            then = "the next build moves it aside" if f.damaged else "a build stops on it too"
            lines.append(f"{f.name}  {human_size(f.size)}, cannot be read ({f.problem}): {then}")
        else:
            lines.append(f"{f.name}  {f.entries:,} entries, {human_size(f.size)}")
        for version, count in _ordered(f.by_version):
            what = current[f.name].get(version) if version is not None else None
            if what:
                status = f"current: {what}"
            elif version is None:
                status = "from before kg recorded versions: kept by prune, recorded when a build uses it"
            else:
                status = "not current: prune drops it"
            lines.append(f"  {count:>9,}  {version or 'unknown'}  ({status})")
        unused = [f"{v}  (current: {what})" for v, what in current[f.name].items() if v not in f.by_version]
        lines.extend(f"  {0:>9}  {line}" for line in unused)
    if report.set_aside:
        lines.append(f"Set aside     {len(report.set_aside):,} damaged files (kg cache clear removes them): " + ", ".join(p.name for p in report.set_aside))
    return "\n".join(lines)


@cache.command()
@cache_folder_option
@click.option("--older-than", "older_than", type=click.IntRange(min=0, max=MAX_DAYS), default=None, metavar="DAYS",
              help="Also drop the entries not written or used in DAYS days (a read refreshes an entry's date at most once a day).")
@click.option("--recognizer", "recognizers", multiple=True, metavar="MODEL/",
              help="Keep the entries of this `kg train` recognizer too (repeatable); without it they are dropped as not current.")
def prune(cache_dir: str | None, older_than: int | None, recognizers: tuple[str, ...]) -> None:
    """Drop cache entries of versions this kg no longer writes, then compact the files.

    Current are extraction with the shipped recognizer and with rules alone, and the
    embedding model. Entries made with a custom --recognizer are dropped unless it is passed
    here: `kg cache prune --recognizer MODEL/` keeps that one's too. Entries whose version
    was not recorded (from before kg recorded versions) are kept, except by --older-than.
    """
    from kg.builder import current_cache_versions
    from kg.extract.cache_files import prune_cache

    location = _location(cache_dir)
    result = prune_cache(location, current_cache_versions(recognizers), older_than_days=older_than)
    lines = [f"Pruned {location.path}"]
    for name, dropped in result.dropped.items():
        total = sum(dropped.values())
        lines.append(f"  {name}  dropped {total:,} entries")
        lines.extend(f"    {count:>9,}  {version or 'unknown'}" for version, count in _ordered(dropped))
    if not result.dropped:
        lines.append("  no cache files there")
    lines.append(f"Reclaimed {human_size(result.freed)}")
    click.echo("\n".join(lines))


def stdin_is_terminal() -> bool:
    return sys.stdin is not None and sys.stdin.isatty()


@cache.command()
@cache_folder_option
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation (needed without a terminal).")
def clear(cache_dir: str | None, yes: bool) -> None:
    """Remove the cache files (extraction, embeddings, damaged files set aside).

    Asks first unless --yes; without a terminal to ask on and without --yes it removes
    nothing and exits with status 26. The next build extracts every paper again.
    """
    from kg.builder import current_cache_versions
    from kg.extract.cache_files import cache_report, clear_cache

    location = _location(cache_dir)
    names = list(current_cache_versions())
    report = cache_report(location, dict.fromkeys(names, ()))
    if not any(f.exists for f in report.files) and not report.set_aside:
        click.echo(f"Nothing to remove in {location.path}")
        return
    if not yes:
        question = f"Remove the cache in {location.path.absolute()} ({human_size(report.size)}; the next build extracts every paper again)?"
        if not stdin_is_terminal():
            raise ConfirmationNeeded(f"not removing the cache in {location.path}: no terminal to confirm on; pass --yes")
        if not click.confirm(question, default=False):
            click.echo("Nothing removed.")
            return
    removed, freed = clear_cache(location, names)
    click.echo(f"Removed {len(removed):,} files from {location.path} ({human_size(freed)})")
