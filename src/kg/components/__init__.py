"""kg's spaCy components, one module each, registered with ``@Language.factory``.

Importing this package imports no component (and so no spaCy): `kg.pipeline.load_pipeline`
imports them, which registers their factories, then adds them in this order: vocabulary
ruler, acronym definitions, coined names, head-typed phrases, the merger that types and
keys entities, then roles.
"""

from __future__ import annotations

COMPONENTS: tuple[str, ...] = (
    "kg_vocab_ruler",
    "kg_abbreviations",
    "kg_coinages",
    "kg_typed_phrases",
    "kg_entities",
    "kg_roles",
)
