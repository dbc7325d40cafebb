"""kg's spaCy components, one module each, registered with ``@Language.factory``.

Order in the pipeline (see `kg.pipeline`): vocabulary ruler, acronym definitions, coined
names, head-typed phrases, the merger that types and keys entities, then roles.
"""

from __future__ import annotations

from kg.components import abbreviations, coinages, entities, roles, typed_phrases, vocab_ruler  # noqa: F401 - registers factories

COMPONENTS: tuple[str, ...] = (
    "kg_vocab_ruler",
    "kg_abbreviations",
    "kg_coinages",
    "kg_typed_phrases",
    "kg_entities",
    "kg_roles",
)
