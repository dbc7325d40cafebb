"""Where kg may write: one rule for output folders, cache folders and output files.

kg keeps three kinds of folder of its own, and what it writes there it also replaces or removes:

* an output folder's builds, ``OUT/.kg/`` (`kg.generations`): older generations are removed;
* the SPARQL store beside them, ``OUT/graph.oxigraph/`` (`kg.rdf.store`): swapped whole by
  the next build, the old one removed;
* the cache folder (`kg.extract.cache_location`): ``extract.sqlite`` and the like, shared by
  every build, whose files and the ones it sets aside ``kg cache`` manages.

So an output folder (``kg build -o``, ``kg train -o``) and an output file (``kg html -o``,
``kg export -o``) may be in none of the first two, a build's output folder may not be the cache
folder or inside it, and a cache folder may not be in a build's state or store (`kg_place`,
`refuse_cache_as_output`). An output folder's ``.kg`` must be a folder of its own, never a link
(`refuse_linked_state`): kg removes entries there, and through a link it would remove another
folder's. Every check reads real paths, links resolved, as well as the path given, so a
symbolic link, ``KG_CACHE_DIR`` or a relative path cannot lead around it.
"""

from __future__ import annotations

import os
from pathlib import Path

from kg.errors import OutputError

KG_DIR = ".kg"  # an output folder's builds (`kg.generations`)
STORE_DIR = "graph.oxigraph"  # an output folder's SPARQL store (`kg.rdf.store`)
BUILDS = "a .kg folder, where kg keeps an output folder's builds"
STORE = "a SPARQL store folder, which the next build replaces whole"


def real(path: str | os.PathLike[str]) -> Path:
    """`path` with every link resolved (the part that exists; the rest as given), absolute."""
    return Path(os.path.realpath(path))


def _an_output_folder(folder: Path) -> bool:
    return (folder / KG_DIR).is_dir() or (folder / "graph.json").exists() or (folder / f"{STORE_DIR}.lock").exists()


def kg_place(path: str | os.PathLike[str]) -> str | None:
    """What of kg's own `path` is in (`BUILDS` or `STORE`), judged on the path as given and on
    its real path; None where kg may write."""
    given = Path(os.path.abspath(path))
    for candidate in dict.fromkeys((given, real(path))):
        for folder in (candidate, *candidate.parents):
            if folder.name == KG_DIR:
                return BUILDS
            if folder.name == STORE_DIR and _an_output_folder(folder.parent):
                return STORE
    return None


def within(path: str | os.PathLike[str], folder: str | os.PathLike[str]) -> bool:
    """Whether the real `path` is the real `folder` or inside it."""
    inner, outer = real(path), real(folder)
    return inner == outer or outer in inner.parents


def refuse_cache_as_output(out: str | os.PathLike[str], cache: str | os.PathLike[str], why: str) -> None:
    """`OutputError` if the output folder `out` is the cache folder `cache` (chosen as `why`
    says) or inside it: a build's outputs would sit among the cache every build shares."""
    if within(out, cache):
        where = "kg's cache folder" if real(out) == real(cache) else "inside kg's cache folder"
        raise OutputError(f"cannot write {out}: it is {where} {cache} ({why}); build into another folder")


def refuse_linked_state(out: str | os.PathLike[str]) -> Path:
    """``OUT/.kg``, after an `OutputError` if it is a symbolic link or not a folder: kg removes
    old generations and what killed builds left there, and must remove only its own."""
    state = Path(out) / KG_DIR
    if state.is_symlink():
        raise OutputError(
            f"cannot write {out}: {state} is a symbolic link (to {os.readlink(state)}); kg keeps the builds of {out} there "
            "and removes old ones, so it must be a folder of its own: remove the link"
        )
    if state.exists() and not state.is_dir():
        raise OutputError(f"cannot write {out}: {state} is not a folder; kg keeps the builds of {out} there: move it away")
    return state
