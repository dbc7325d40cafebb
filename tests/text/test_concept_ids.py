"""Concept ids name their type: `concept_type` reads back what `concept_id` was given."""

from __future__ import annotations

import pytest

from kg.model import ENTITY_TYPES, EntityType
from kg.text.vocab import concept_id, concept_type


@pytest.mark.parametrize("type_", ENTITY_TYPES)
def test_concept_type_reads_the_type_concept_id_was_made_under(type_: EntityType) -> None:
    assert concept_type(concept_id(type_, "large language model")) == type_


@pytest.mark.parametrize("cid", ["model/bert", "bert", "", "methods/bert"])
def test_concept_type_refuses_an_id_of_no_type(cid: str) -> None:
    with pytest.raises(ValueError, match="not a concept id"):
        concept_type(cid)
