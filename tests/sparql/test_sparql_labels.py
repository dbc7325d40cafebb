"""Label parameters (`kg.sparql.labels`): a bound label matches through kg:key whatever its
case, plural or hyphens, and altLabels count; a label that names nothing is reported with
close labels (exit 25). Both backends, on the hand-made sample graph."""

from __future__ import annotations

import pytest

from kg.cli import main
from kg.errors import ExitCode
from kg.sparql import engine as sparql
from kg.sparql.labels import apply_label_bindings, key_variables

BACKENDS = ("rdflib", "oxigraph")
MUSIQUE = [("MuSiQue", "p1", "HippoRAG: memory", "1"), ("MuSiQue", "p2", 'A study of <b>BERT</b> & "friends"', "1")]
BY_KEY = "SELECT ?c WHERE { ?c kg:key ?label }"  # ?label is a key variable, not projected


def test_key_variables_are_found_outside_comments_and_strings() -> None:
    text = '# kg:key ?no\nSELECT * WHERE { ?c kg:key ?a ; <https://w3id.org/kg-ml/ontology#key> $b . FILTER(?x != "kg:key ?nope") }'
    assert key_variables(text) == {"a", "b"}
    assert key_variables(sparql.example_queries()["papers_using_dataset"]) == {"datasetKey"}
    assert key_variables(sparql.example_queries()["methods_per_task"]) == {"taskKey"}
    assert key_variables(sparql.example_queries()["hardware_per_paper"]) == set()


def test_an_unprojected_key_variable_is_written_into_the_text() -> None:
    text = 'SELECT ?c WHERE { ?c kg:key ?label . # ?label stays in this comment\n FILTER(?labels != "?label") }'
    out, bindings, labels = apply_label_bindings(text, {"label": 'Large "Language" Models'})
    assert out == 'SELECT ?c WHERE { ?c kg:key "large \\"language\\" model" . # ?label stays in this comment\n FILTER(?labels != "?label") }'
    assert bindings == {}
    assert [(b.name, b.variable, b.key) for b in labels] == [("label", "label", 'large "language" model')]


def test_a_projected_key_variable_is_bound_normalised_and_other_bindings_pass() -> None:
    text = "SELECT ?c ?label WHERE { ?c kg:key ?label ; dcterms:identifier ?id }"
    out, bindings, _ = apply_label_bindings(text, {"label": "LLMs", "id": "Method/X", "other": "<https://e/x>"})
    assert out == text
    assert bindings == {"label": "llm", "id": "Method/X", "other": "<https://e/x>"}  # only labels are normalised


def test_name_reaches_name_key_and_iris_are_never_labels() -> None:
    text = sparql.example_queries()["papers_using_dataset"]
    out, bindings, labels = apply_label_bindings(text, {"dataset": "MuSiQue"})
    assert 'kg:key "musique"' in out and "?datasetKey" not in out.split("PREFIX")[-1].split("\n", 1)[1]
    assert bindings == {} and labels[0].variable == "datasetKey"
    _, bindings, labels = apply_label_bindings(text, {"dataset": "<https://e/x>"})
    assert bindings == {"dataset": "<https://e/x>"} and labels == ()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("label", ["MuSiQue", "musique", "MUSIQUE", "MuSiQues", " musique. "])
def test_papers_using_dataset_forgives_case_and_plural(sparql_backends, backend: str, label: str, plain_rows) -> None:
    result = sparql_backends[backend].query(sparql.example_queries()["papers_using_dataset"], {"dataset": label})
    assert plain_rows(result) == MUSIQUE
    assert result.unmatched == ()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("label", ["question answering", "Question-Answering", "question answerings"])
def test_methods_per_task_forgives_case_hyphens_and_plural(sparql_backends, backend: str, label: str, plain_rows) -> None:
    result = sparql_backends[backend].query(sparql.example_queries()["methods_per_task"], {"task": label})
    assert plain_rows(result) == [("question answering", "HippoRAG", "1")]


@pytest.mark.parametrize("backend", BACKENDS)
def test_alt_labels_match_too(sparql_backends, backend: str, plain_rows) -> None:
    engine = sparql_backends[backend]
    rag = "https://w3id.org/kg-ml/resource/concept/method%2Frag"
    assert plain_rows(engine.query(BY_KEY, {"label": "rag"})) == [(rag,)]  # the altLabel RAG
    assert plain_rows(engine.query(BY_KEY, {"label": "Retrieval Augmented Generation"})) == [(rag,)]
    bert = "https://w3id.org/kg-ml/resource/concept/method%2Fbert"
    assert plain_rows(engine.query(BY_KEY, {"label": "bidirectional encoder representations from transformers"})) == [(bert,)]


def test_both_backends_report_the_same_unmatched_labels(sparql_backends) -> None:
    text = sparql.example_queries()["papers_using_dataset"]
    for label in ("musiqu", "ImageNet", "MuSiQue"):
        by_rdflib, by_oxigraph = (sparql_backends[b].query(text, {"dataset": label}) for b in BACKENDS)
        assert by_rdflib == by_oxigraph and by_rdflib.unmatched == by_oxigraph.unmatched, label


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_label_that_names_nothing_is_reported_with_close_labels(sparql_backends, backend: str) -> None:
    result = sparql_backends[backend].query(sparql.example_queries()["papers_using_dataset"], {"dataset": "musiqu"})
    assert result.rows == ()
    [missing] = result.unmatched
    assert (missing.name, missing.value, missing.key, missing.suggestions) == ("dataset", "musiqu", "musiqu", ("MuSiQue (Dataset)",))
    far = sparql_backends[backend].query(sparql.example_queries()["papers_using_dataset"], {"dataset": "ImageNet"})
    assert [(m.key, m.suggestions) for m in far.unmatched] == [("imagenet", ())]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_label_of_another_type_is_not_unmatched(sparql_backends, backend: str) -> None:
    """BERT names a concept (a method): no dataset has it, so no rows, but nothing to report."""
    result = sparql_backends[backend].query(sparql.example_queries()["papers_using_dataset"], {"dataset": "BERT"})
    assert result.rows == () and result.unmatched == ()


@pytest.mark.parametrize("backend", BACKENDS)
def test_quotes_and_backslashes_in_a_label_are_a_literal_not_syntax(sparql_backends, backend: str) -> None:
    result = sparql_backends[backend].query(BY_KEY, {"label": 'a"b\\c } UNION { ?c ?p ?o'})
    assert result.rows == ()


def test_cli_reports_an_unmatched_label_and_exits_23(sample_dir, capsys) -> None:
    code = main(["sparql", "@papers_using_dataset", "--graph", str(sample_dir), "--bind", "dataset=musiqe", "--format", "csv"])
    assert code == ExitCode.LABEL_NOT_FOUND == 25
    out, err = capsys.readouterr()
    assert out == "dataset,paperId,title,mentions\r\n"
    assert err == "Error: no concept has the label 'musiqe' (--bind dataset, key 'musiqe'); close labels: MuSiQue (Dataset)\n"
    assert main(["sparql", "@papers_using_dataset", "--graph", str(sample_dir), "--bind", "dataset=IMAGENET"]) == 25
    assert capsys.readouterr().err == "Error: no concept has the label 'IMAGENET' (--bind dataset, key 'imagenet'); no label is close\n"


def test_cli_forgiving_match_exits_0(sample_dir, capsys) -> None:
    assert main(["sparql", "@papers_using_dataset", "--graph", str(sample_dir), "--bind", "dataset=musiques", "--format", "csv", "--backend", "oxigraph"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[1:] == [",".join(row) for row in [("MuSiQue", "p1", "HippoRAG: memory", "1"), ("MuSiQue", "p2", '"A study of <b>BERT</b> & ""friends"""', "1")]]
    assert err == ""
