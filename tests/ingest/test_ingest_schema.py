"""schemas/paper.schema.json documents the Paper record exactly, and real records validate."""

from __future__ import annotations

import dataclasses
import json
from importlib import resources
from pathlib import Path

import pytest

from kg.ingest import read_corpus
from kg.model import Paper

jsonschema = pytest.importorskip("jsonschema")

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ingest"


@pytest.fixture(scope="module")
def validator():
    schema = json.loads((resources.files("kg.schemas") / "paper.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_schema_properties_are_the_dataclass_fields(validator):
    names = [f.name for f in dataclasses.fields(Paper)]
    assert list(validator.schema["properties"]) == names
    assert validator.schema["required"] == names  # to_dict() always writes every field


def test_every_read_paper_validates(validator, seeds):
    papers = read_corpus([str(seeds), str(FIXTURES)]).papers
    assert len(papers) == 38 + 14
    for paper in papers:
        record = json.loads(json.dumps(paper.to_dict()))  # as written to papers.jsonl
        assert list(validator.iter_errors(record)) == [], paper.id


def test_papers_from_every_export_format_validate(validator):
    corpus = read_corpus([str(FIXTURES.parent / "formats")], skip_invalid=True)  # RIS, OpenAlex, CSL-JSON
    assert (len(corpus.papers) + corpus.duplicates, len(corpus.skipped)) == (2 + 2 + 2 + 1 + 2 + 2 + 3, 1)
    for paper in corpus.papers:
        record = json.loads(json.dumps(paper.to_dict()))
        assert list(validator.iter_errors(record)) == [], paper.id


def test_schema_rejects_an_id_with_whitespace(validator):
    record = json.loads(json.dumps(Paper(id="a b", title="T", abstract="A.").to_dict()))
    assert [error.path[0] for error in validator.iter_errors(record)] == ["id"]
