"""kg: knowledge graphs of the machine-learning literature.

Public API (imports are lazy so reading a graph never loads spaCy)::

    import kg
    g = kg.load("out")                    # networkx.DiGraph written by `kg build`
    kg.related(g, "HippoRAG", top=10)     # [RelatedPaper(id, title, score, reasons), …]

Building is `from kg.build import build` (`kg.build` is the module's name, so it cannot
also be a lazy function here).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "load": "kg.graph:load",
    "related": "kg.related:related",
    "read_corpus": "kg.ingest:read_corpus",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'kg' has no attribute {name!r}")
    module, attr = target.split(":")
    return getattr(import_module(module), attr)
