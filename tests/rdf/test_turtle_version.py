"""Turtle fragments are reused across builds by a key that holds a declared `TURTLE_VERSION`, not
the RDF code's bytes: this golden Turtle of the hand-made sample graph guards it. When the Turtle
for the same graph changes, the test fails until `TURTLE_VERSION` (kg's rdf triples module) is
bumped and the golden file is written anew:

    KG_UPDATE_GOLDEN=1 python -m pytest tests/extract/test_extraction_version.py tests/rdf/test_turtle_version.py

A new pyoxigraph or Unicode version changes the key by itself; the golden file records both."""

from __future__ import annotations

import io
import json
import os
import unicodedata
from importlib import metadata
from pathlib import Path

import pytest

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "golden" / "turtle.json"
UPDATE = "KG_UPDATE_GOLDEN=1 python -m pytest tests/extract/test_extraction_version.py tests/rdf/test_turtle_version.py"


def current(graph) -> dict:
    from kg.rdf.triples import TURTLE_VERSION
    from kg.rdf.writers import serialize

    out = io.BytesIO()
    serialize(graph, out, format="ttl")
    return {
        "turtle_version": TURTLE_VERSION,
        "serializer": f"pyoxigraph {metadata.version('pyoxigraph')} unicode {unicodedata.unidata_version}",
        "turtle": out.getvalue().decode("utf-8"),
    }


def test_turtle_changes_only_with_its_version(sample_graph) -> None:
    now = current(sample_graph())
    if os.environ.get("KG_UPDATE_GOLDEN") == "1":
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(json.dumps(now, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    if (now["turtle_version"], now["serializer"]) != (golden["turtle_version"], golden["serializer"]):
        pytest.fail(f"the fragment key changed: write the golden file anew with `{UPDATE}`")
    assert now["turtle"] == golden["turtle"], (
        f"Turtle output changed under the same fragment key: bump TURTLE_VERSION, then run `{UPDATE}`"
    )
    assert now["turtle"].count(" a ") > 10  # the golden graph holds papers, concepts and annotations
