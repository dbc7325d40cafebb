"""`kg eval`: scoring on a tiny hand-made gold file with exact numbers, and its error paths."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kg.cli import main
from kg.errors import ExitCode, GoldFormatError
from kg.training.evaluate import GoldDoc, load_gold, score

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "extract"


def test_load_gold_maps_labels_and_drops_others():
    docs = load_gold(FIXTURES / "gold_tiny.jsonl")
    assert [d.id for d in docs] == ["g1", "g2"]
    assert docs[0].spans == {(7, 11, "METHOD"), (16, 35, "TASK"), (39, 44, "DATASET"), (50, 54, "METRIC")}


def test_score_strict_and_partial_exact_numbers():
    gold = [GoldDoc("d", "x" * 50, frozenset({(0, 10, "METHOD"), (20, 30, "TASK"), (40, 45, "METRIC")}))]
    predicted = [{(0, 10, "METHOD"), (22, 35, "TASK"), (40, 45, "METHOD"), (46, 48, "HARDWARE")}]
    report = score(gold, predicted)
    # strict: only the METHOD span matches exactly; HARDWARE is not scored.
    assert (report.strict["micro"].tp_pred, report.strict["micro"].predicted, report.strict["micro"].gold) == (1, 3, 3)
    assert report.strict["micro"].f1 == pytest.approx(1 / 3)
    # partial: the TASK overlaps too; the METRIC gold is predicted with the wrong type.
    assert report.partial["micro"].precision == pytest.approx(2 / 3)
    assert report.partial["micro"].recall == pytest.approx(2 / 3)
    assert report.partial["TASK"].f1 == 1.0
    assert report.partial["METRIC"].recall == 0.0
    assert report.partial["METHOD"].precision == 0.5


def test_kg_eval_json_on_tiny_gold(capsys):
    assert main(["eval", str(FIXTURES / "gold_tiny.jsonl"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["documents"] == 2
    assert set(out["strict"]) == {"METHOD", "DATASET", "METRIC", "TASK", "HARDWARE", "TERM", "micro"}
    # BERT, machine translation, WMT14, BLEU and "convolutional neural network" are found
    # exactly; "detects objects" (a verb phrase) is not.
    assert out["strict"]["micro"]["gold"] == 6
    assert out["strict"]["micro"]["correct_gold"] == 5
    assert out["strict"]["TASK"]["recall"] == 0.5
    assert out["strict"]["METHOD"]["recall"] == 1.0


def test_kg_eval_text_table(capsys):
    assert main(["eval", str(FIXTURES / "gold_tiny.jsonl"), "--map", "scirex"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("gold_tiny.jsonl: 2 documents")
    assert lines[1].split()[:4] == ["type", "strict", "P", "R"]
    assert [line.split()[0] for line in lines[2:-1]] == ["DATASET", "METHOD", "METRIC", "TASK", "micro", "HARDWARE", "TERM"]
    assert lines[-1] == "(micro: over DATASET, METHOD, METRIC and TASK; HARDWARE and TERM are scored apart)"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("gold_bad_json.jsonl", "gold_bad_json.jsonl:2: not valid JSON"),
        ("gold_bad_text.jsonl", "gold_bad_text.jsonl:3: entity text 'xy' does not match text[0:2]"),
    ],
)
def test_malformed_gold_names_file_and_line(capsys, name, message):
    with pytest.raises(GoldFormatError, match=message.split(": ", 1)[1].replace("[", r"\[").replace("]", r"\]")):
        load_gold(FIXTURES / name)
    assert main(["eval", str(FIXTURES / name)]) == ExitCode.GOLD_FORMAT == 15
    err = capsys.readouterr().err
    assert err.startswith("Error: ") and message in err and len(err.strip().splitlines()) == 1


def test_missing_gold_file(capsys, tmp_path):
    assert main(["eval", str(tmp_path / "nope.jsonl")]) == ExitCode.FILE_NOT_FOUND
    assert "nope.jsonl: no such gold file" in capsys.readouterr().err


def test_real_gold_file_loads(shared):
    docs = load_gold(shared("eval/scierc_dev.jsonl"))  # skips when ../shared/eval is not here
    assert len(docs) == 50
