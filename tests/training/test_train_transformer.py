"""`kg train --arch transformer`: what it reads (the clean text, gold offsets mapped through it), a clear
error without the train extra, and (torch leg) a trained, exported model kg runs without torch."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from kg.cli import main
from kg.errors import ExitCode
from kg.extract.tagging import bio_tags, load_tokenizer
from kg.text.clean import clean_text
from kg.training.evaluate import GoldDoc
from kg.training.transformer import examples, prepare, shipped_tokenizer, to_clean, typed_f1

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "extract"
GOLD = FIXTURES / "gold_tiny.jsonl"
TAGS = bio_tags()


def test_gold_offsets_map_through_the_clean_text():
    text = "We study prob(cid:173) lems with BERT [Le Cun, Denker and Solla, 1990] and classiﬁcation."
    clean = clean_text(text)
    assert clean.text == "We study problems with BERT and classification."
    assert to_clean(clean, 9, 27) == (9, 17)  # "prob(cid:173) lems" → "problems"
    assert to_clean(clean, 33, 37) == (23, 27)  # BERT
    assert to_clean(clean, 38, 70) is None  # the dropped citation
    assert to_clean(clean, 75, 88) == (32, 46)  # "classiﬁcation": both letters of the ligature
    prepared = prepare(GoldDoc("d", text, frozenset({(33, 37, "METHOD"), (38, 70, "TERM"), (9, 27, "TASK")})))
    assert [(prepared.text[s:e], label) for s, e, label in prepared.spans] == [("problems", "TASK"), ("BERT", "METHOD")]


def test_the_pipeline_reads_markup_masked_and_so_does_training():
    text = r"We propose $\texttt{GD-LS}$, see https://x.org/a"
    start = text.index("GD-LS")
    prepared = prepare(GoldDoc("d", text, frozenset({(start, start + 5, "METHOD")})))
    assert prepared.text == "We propose " + " " * len("$\\texttt{") + "GD-LS" + " " * len("}$") + ", see " + " " * len("https://x.org/a")
    assert [(prepared.text[s:e], label) for s, e, label in prepared.spans] == [("GD-LS", "METHOD")]


def test_nested_gold_is_flattened_longest_first():
    doc = GoldDoc("d", "ImageNet classification is hard.", frozenset({(0, 8, "DATASET"), (0, 23, "TASK")}))
    assert prepare(doc).spans == ((0, 23, "TASK"),)


def test_empty_texts_and_texts_without_entities_make_no_error():
    tokenizer = load_tokenizer(shipped_tokenizer())
    docs = [prepare(GoldDoc("a", "", frozenset())), prepare(GoldDoc("b", "Nothing to see.", frozenset())), prepare(GoldDoc("c", "BERT", frozenset({(0, 4, "METHOD")})))]
    found = examples(docs, tokenizer, window=8, stride=2)
    assert [(ids.tolist(), [TAGS[t] if t >= 0 else None for t in tags]) for ids, tags in found] == [
        ([101, 2498, 2000, 2156, 1012, 102], [None, "O", "O", "O", "O", None]),
        ([101, 14324, 102], [None, "B-METHOD", None]),
    ]


def test_model_selection_reads_typed_f1_over_all_six_types():
    from kg.training.evaluate import score

    gold = [GoldDoc("d", "x" * 40, frozenset({(0, 4, "METHOD"), (10, 14, "TERM"), (20, 24, "HARDWARE")}))]
    report = score(gold, [{(0, 4, "METHOD"), (10, 14, "METHOD"), (30, 34, "TERM")}])
    # typed P: 1 of 3 (the METHOD), typed R: 1 of 3
    assert typed_f1(report) == pytest.approx(1 / 3, abs=1e-4)


def test_without_the_train_extra_one_line_names_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # as if torch were not installed (it is not, in the default leg)
    out = tmp_path / "model"
    assert main(["train", str(GOLD), "--dev", str(GOLD), "--arch", "transformer", "-o", str(out)]) == ExitCode.EXTRA_MISSING == 24
    err = capsys.readouterr().err
    assert err.startswith("Error: training the transformer recognizer needs the train extra (torch") and "pip install 'kg[train]'" in err
    assert len(err.splitlines()) == 1 and not out.exists()


def test_epochs_belong_to_the_transformer(tmp_path, capsys):
    assert main(["train", str(GOLD), "--dev", str(GOLD), "--epochs", "2", "-o", str(tmp_path / "m")]) == ExitCode.USAGE
    assert "--epochs is an option of --arch transformer" in capsys.readouterr().err


# -- the torch leg: a real (short) training ----------------------------------------------------------------


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("transformer")
    gold = folder / "gold.jsonl"
    lines = GOLD.read_text(encoding="utf-8").splitlines()
    # a document without entities trains as all-outside (one with empty text is refused for both archs, exit 15:
    # tests/training/test_gold_input.py)
    extra = [json.dumps({"id": "none", "text": "Nothing to see here.", "entities": []})]
    gold.write_text("\n".join([*lines, *extra]) + "\n", encoding="utf-8")
    args = ["train", str(gold), "--dev", str(GOLD), "--arch", "transformer", "--epochs", "2", "-q"]
    assert main([*args, "-o", str(folder / "a")]) == 0
    assert main([*args, "-o", str(folder / "b")]) == 0
    return folder / "a", folder / "b"


@pytest.mark.torch
def test_training_writes_an_int8_model_its_tokenizer_meta_and_card(trained):
    model, _ = trained
    assert sorted(p.name for p in model.iterdir()) == ["meta.json", "model-card.md", "model-int8.onnx", "tokenizer.json"]
    assert (model / "tokenizer.json").read_bytes() == shipped_tokenizer().read_bytes()
    meta = json.loads((model / "meta.json").read_text())
    assert (meta["arch"], meta["window"], meta["stride"], meta["tags"]) == ("transformer", 256, 64, list(TAGS))
    training = meta["kg_training"]
    assert (training["train_documents"], training["dev_documents"], training["epochs_run"], training["options"]["seed"]) == (3, 2, 2, 0)  # the tiny gold (2) and the document without entities
    assert training["windows"] == 3  # one a document with text; the empty one makes none
    assert set(training["dev"]) == set(training["dev_torch_fp32"]) == {"strict", "partial", "typed_f1"}
    assert [h["epoch"] for h in training["history"]] == [1, 2] and 1 <= training["best_epoch"] <= 2
    card = (model / "model-card.md").read_text()
    assert "| gold.jsonl | train | 3 | 0 |" in card and "| micro |" in card and "int8 on ONNX Runtime" in card


@pytest.mark.torch
def test_the_same_data_and_options_give_the_same_model(trained):
    first, second = trained
    assert (first / "model-int8.onnx").read_bytes() == (second / "model-int8.onnx").read_bytes()


@pytest.mark.torch
def test_kg_runs_the_trained_model(trained, tmp_path, capsys):
    model, _ = trained
    text = tmp_path / "a.txt"
    text.write_text("We use BERT for machine translation on WMT14 with BLEU.", encoding="utf-8")
    assert main(["extract", str(text), "--model", str(model)]) == 0
    [line] = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert all(0.0 <= m["score"] <= 1.0 for m in line["entities"])
