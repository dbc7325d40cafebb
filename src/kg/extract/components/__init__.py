"""kg's spaCy components, one module each, registered with ``@Language.factory``.

Importing this package imports no component (and so no spaCy): `kg.extract.pipeline.load_pipeline`
imports them, which registers their factories, then adds them in this order: vocabulary
ruler, acronym definitions, coined names, head-typed phrases, the trained recognizer (when
one is installed or given), the merger that types and keys entities, then roles.
"""

from __future__ import annotations

COMPONENTS: tuple[str, ...] = (
    "kg_vocab_ruler",
    "kg_abbreviations",
    "kg_coinages",
    "kg_typed_phrases",
    "kg_recognizer",
    "kg_entities",
    "kg_roles",
)
RECOGNIZER = "kg_recognizer"  # added only when a model folder is there


def register() -> None:
    """Import every component module, which registers its factory with spaCy."""
    from kg.extract.components import abbreviations, coinages, entities, recognizer, roles, typed_phrases, vocab_ruler  # noqa: F401
