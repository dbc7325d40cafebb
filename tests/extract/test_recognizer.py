"""kg_recognizer with a transformer model folder: int8-style ONNX on ONNX Runtime, no torch.

The model is tests/fixtures/recognizer/tiny.onnx (31 KB, made by make_tiny.py there): the shipped
model's interface, tagging a few MiniLM tokens by themselves with probability 0.9 ("bert" METHOD,
"machine translation" TASK, "glue" DATASET, "cpu" HARDWARE, "accuracy" METRIC); its meta.json reads
in windows of 8 tokens sharing 2, so every sentence here takes several windows."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kg.cli import main
from kg.errors import ExitCode, ExtraMissing, ModelError
from kg.extract.papers import extract_text
from kg.extract.pipeline import check_recognizer, load_pipeline, pipeline_version, recognizer_meta

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "recognizer"
TOKENIZER = Path(__file__).resolve().parents[2] / "src" / "kg" / "models" / "minilm" / "tokenizer.json"
TEXT = "We use BERT for machine translation on GLUE with a CPU and report accuracy."
TAGGED = 0.9 + 0.1 / 12  # B and I of the token's type


def make_model(folder: Path, **meta: object) -> Path:
    folder.mkdir(parents=True)
    shutil.copyfile(FIXTURE / "tiny.onnx", folder / "tiny.onnx")
    shutil.copyfile(TOKENIZER, folder / "tokenizer.json")
    data = {**json.loads((FIXTURE / "meta.json").read_text()), **meta}
    (folder / "meta.json").write_text(json.dumps(data), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    return make_model(tmp_path_factory.mktemp("recognizer") / "tiny")


@pytest.fixture(scope="module")
def tiny_nlp(tiny):
    return load_pipeline(recognizer=str(tiny))


def test_its_spans_land_on_the_docs_tokens_with_their_confidence(tiny_nlp):
    doc = tiny_nlp(TEXT)
    found = [(s.text, s.label_, s._.kg_confidence) for s in doc.spans["kg_model"]]
    assert found == [
        ("BERT", "METHOD", pytest.approx(TAGGED, abs=1e-4)),
        ("machine translation", "TASK", pytest.approx(TAGGED, abs=1e-4)),
        ("GLUE", "DATASET", pytest.approx(TAGGED, abs=1e-4)),
        ("CPU", "HARDWARE", pytest.approx(TAGGED, abs=1e-4)),
        ("accuracy", "METRIC", pytest.approx(TAGGED, abs=1e-4)),
    ]


def test_every_mention_carries_the_recognizers_confidence_in_its_type(tiny_nlp):
    mentions = {m.text: m for m in extract_text(TEXT, nlp=tiny_nlp).mentions}
    assert mentions["BERT"].model_confidence == pytest.approx(TAGGED, abs=1e-4)  # found by the vocabulary, believed by the model
    # "report accuracy": "report" is O (0.1 / 12 for METRIC), "accuracy" METRIC
    assert mentions["report accuracy"].model_confidence == pytest.approx((2 * 0.1 / 12 + TAGGED) / 2, abs=1e-4)


def test_offsets_map_through_the_clean_text(tiny_nlp):
    text = "We train BERT [Devlin, Chang and Lee, 2019] on GLUE (cid:173) data."
    mentions = {m.text: m for m in extract_text(text, nlp=tiny_nlp).mentions}
    assert text[mentions["GLUE"].start : mentions["GLUE"].end] == "GLUE" and mentions["GLUE"].model_confidence == pytest.approx(TAGGED, abs=1e-4)


def test_a_doc_gets_the_same_spans_alone_or_in_a_batch(tiny_nlp):
    def spans(doc):
        return [(s.start_char, s.end_char, s.label_, s._.kg_confidence) for s in doc.spans["kg_model"]]

    texts = [TEXT, "", "CPU", "Nothing here.", TEXT.upper(), "BERT " * 40]
    alone = [spans(tiny_nlp(t)) for t in texts]
    batched = [spans(doc) for doc in tiny_nlp.pipe(texts, batch_size=4)]
    assert alone == batched
    assert alone[1] == [] and alone[3] == [] and len(alone[5]) == 40  # every BERT, across windows


def test_the_session_runs_on_one_thread(tiny_nlp):
    recognizer = tiny_nlp.get_pipe("kg_recognizer")
    options = recognizer.tagger.session.get_session_options()
    assert (options.intra_op_num_threads, options.inter_op_num_threads) == (1, 1)


def test_it_is_accepted_and_described_like_a_cnn_model(tiny):
    assert check_recognizer(str(tiny)) == str(tiny)
    assert recognizer_meta(str(tiny)) == {"name": "kg_recognizer", "version": "test", "arch": "transformer", "labels": ["METHOD", "TASK", "METRIC", "DATASET", "HARDWARE", "TERM"]}


def test_its_files_key_the_extraction_cache(tiny, tmp_path):
    other = make_model(tmp_path / "other", stride=3)
    assert len({pipeline_version(recognizer=str(tiny)), pipeline_version(recognizer=str(other)), pipeline_version(recognizer=None)}) == 3


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"window": None}, "not a transformer recognizer (its meta.json lacks labels, window or stride)"),
        ({"stride": 6}, "not a transformer recognizer (its meta.json lacks labels, window or stride)"),
        ({"labels": {"ner": []}}, "not a transformer recognizer (its meta.json lacks labels, window or stride)"),
        ({"model": "missing.onnx"}, "transformer recognizer without its model file (missing.onnx)"),
        ({"tokenizer": "../tokenizer.json"}, "transformer recognizer without its tokenizer file (../tokenizer.json)"),
    ],
)
def test_a_damaged_transformer_folder_is_one_clear_error(change, message, tmp_path):
    folder = make_model(tmp_path / "model", **change)
    with pytest.raises(ModelError) as raised:
        check_recognizer(str(folder))
    assert str(raised.value) == f"{folder}: {message}"


def test_without_onnx_runtime_the_extra_is_named(tiny, monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # as if not installed
    with pytest.raises(ExtraMissing, match=r"runs on onnxruntime, which is not installed: pip install 'kg\[embed\]'"):
        check_recognizer(str(tiny))


def test_kg_extract_takes_it_with_model(tiny, tmp_path, capsys):
    (tmp_path / "a.txt").write_text(TEXT, encoding="utf-8")
    assert main(["extract", str(tmp_path / "a.txt"), "--model", str(tiny)]) == ExitCode.OK
    [line] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {"BERT", "machine translation", "GLUE", "CPU"} <= {m["text"] for m in line["entities"]}


def test_inference_needs_no_torch(tiny, tmp_path):
    """torch and transformers blocked (importing them fails, as where they are not installed):
    spaCy's thinc tries torch and goes on without it, and so must the recognizer."""
    for module in ("torch", "transformers", "sentence_transformers"):
        (tmp_path / module).mkdir()
        (tmp_path / module / "__init__.py").write_text(f"raise ImportError('{module} is blocked in this test')\n", encoding="utf-8")
    code = (
        "from kg.extract.pipeline import load_pipeline; "
        f"doc = load_pipeline(recognizer={str(tiny)!r})({TEXT!r}); "
        "print([s.text for s in doc.spans['kg_model']])"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(tmp_path), os.environ.get("PYTHONPATH")) if p)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['BERT', 'machine translation', 'GLUE', 'CPU', 'accuracy']"
