"""What a build records about the pipeline it ran, found without loading it.

A rebuild whose papers all come from the extraction cache never needs spaCy, so the
description `kg.extract.pipeline.pipeline_info` takes from a loaded pipeline is read here from the
installed model's ``meta.json`` and kg's component list instead (tested equal).
A fully cached build therefore never warns that the model or the recognizer is missing; it
does not need them, and a missing one changes `pipeline_version`, so its papers would not have
come from the cache. It lives outside `kg.extract.pipeline` because that module's source is hashed into the extraction
cache key (`kg.extract.pipeline.pipeline_version`), and describing the pipeline changes no extraction.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

from kg.extract.components import COMPONENTS, RECOGNIZER
from kg.extract.pipeline import EXCLUDED, MODEL, pipeline_version, recognizer_meta, recognizer_path
from kg.model import DEFAULT_RECOGNIZER


def _model_meta(model: str) -> dict[str, Any] | None:
    """The installed statistical model's meta.json, without importing it (its package imports spaCy)."""
    spec = importlib.util.find_spec(model)
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        try:
            meta: dict[str, Any] = json.loads((Path(location) / "meta.json").read_text(encoding="utf-8"))
            return meta
        except (OSError, ValueError):
            continue
    return None


def describe_pipeline(model: str = MODEL, recognizer: str | None = DEFAULT_RECOGNIZER) -> dict[str, Any]:
    """`kg.extract.pipeline.pipeline_info` of `load_pipeline(model, recognizer)`, without spaCy."""
    path = recognizer_path(recognizer)
    kg_components = [name for name in COMPONENTS if name != RECOGNIZER or path is not None]
    meta = _model_meta(model)
    if meta is None:  # load_pipeline's blank fallback
        lang = "en"
        return {
            "name": f"kg+blank_{lang}",
            "version": pipeline_version(model, recognizer),
            "model": None,
            "model_version": None,
            "components": ["sentencizer", *kg_components],
            "recognizer": recognizer_meta(path),
        }
    disabled = set(meta.get("disabled", ())) | set(EXCLUDED)
    statistical = [name for name in meta.get("pipeline", ()) if name not in disabled]
    lang, name = meta.get("lang", "en"), meta.get("name", "")
    return {
        "name": f"kg+{lang}_{name}",
        "version": pipeline_version(model, recognizer),
        "model": f"{lang}_{name}",
        "model_version": meta.get("version"),
        "components": [*statistical, *kg_components],
        "recognizer": recognizer_meta(path),
    }
