"""kg: knowledge graphs of the machine-learning literature.

Public API (imports are lazy so reading a graph never loads spaCy)::

    import kg
    g = kg.load("out")                    # networkx.DiGraph written by `kg build`
    kg.related(g, "HippoRAG", top=10)     # [RelatedPaper(id, title, score, reasons), …]
    kg.build(["seeds/"], "out")           # BuildSummary; every stage, as `kg build` runs them
    kg.build(["seeds/"], "out", kg.BuildOptions(workers=1, embed=True))  # `kg build`'s options

These are plain functions (and the build's options record), imported on first use from the modules that define them
(`kg.graph`, `kg.related_work.rank`, `kg.builder`, `kg.ingest`); no module is named like them.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "load": "kg.graph:load",
    "related": "kg.related_work.rank:related",
    "build": "kg.builder:build",
    "BuildOptions": "kg.builder:BuildOptions",
    "read_corpus": "kg.ingest:read_corpus",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'kg' has no attribute {name!r}")
    module, attr = target.split(":")
    return getattr(import_module(module), attr)
