"""Hostile gold files and outputs for `kg train` and `kg eval`: each problem is one ``Error:`` line
naming file:line and its exit code, as corpus ingestion reports it, never a traceback.

Every case fails before any model is loaded or trained, so these tests take no training time."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kg.cli import main
from kg.errors import ExitCode, OutputError
from kg.ingest.records import MAX_ABSTRACT_CHARS, MAX_WORD_CHARS
from kg.training.evaluate import load_gold

GOOD = {"id": "g1", "text": "We use BERT for machine translation .", "entities": [{"start": 7, "end": 11, "label": "Method", "text": "BERT"}]}
TEXT = "We use BERT for machine translation ."


def gold_file(tmp_path: Path, second_line: bytes | dict, name: str = "gold.jsonl") -> Path:
    """A gold file whose first line is good and whose second is `second_line` (raw bytes or a record)."""
    path = tmp_path / name
    line = second_line if isinstance(second_line, bytes) else json.dumps(second_line).encode()
    path.write_bytes(json.dumps(GOOD).encode() + b"\n" + line + b"\n")
    return path


def record(**entity: object) -> dict:
    return {"id": "g2", "text": TEXT, "entities": [{"start": 7, "end": 11, "label": "Method", **entity}]}


COMMANDS = ["eval", "train", "train --dev"]


def run(command: str, gold: Path, tmp_path: Path, capsys) -> tuple[int, str]:
    """Run `command` on `gold`; returns the exit code and stderr, which must be one Error: line."""
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps(GOOD) + "\n")
    argv = {
        "eval": ["eval", str(gold)],
        "train": ["train", str(gold), "--hold-out", f"{gold}=50", "-o", str(tmp_path / "model"), "--max-steps", "1", "-q"],
        "train --dev": ["train", str(good), "--dev", str(gold), "-o", str(tmp_path / "model"), "--max-steps", "1", "-q"],
    }[command]
    code = main(argv)
    captured = capsys.readouterr()
    err = captured.err
    assert err.startswith("Error: ") and err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err + captured.out
    assert not (tmp_path / "model").exists()
    return code, err.removeprefix("Error: ").removesuffix("\n")


@pytest.mark.parametrize("command", COMMANDS)
def test_a_byte_that_is_not_utf8_names_line_and_offset(command, tmp_path, capsys):
    gold = gold_file(tmp_path, b'{"id": "g2", "text": "caf\xe9", "entities": []}')
    offset = len(json.dumps(GOOD)) + 1 + len('{"id": "g2", "text": "caf')
    code, message = run(command, gold, tmp_path, capsys)
    assert code == ExitCode.DECODE_ERROR == 5
    assert message == f"{gold}:2: not valid UTF-8: byte 0xe9 at byte offset {offset}; save the file as UTF-8"


LONE = "holds a lone surrogate \\ud800, which is not a character (a JSON \\u escape of a surrogate must pair a high one with a low one)"


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize(
    ("line", "field"),
    [
        (b'{"id": "g2", "text": "a \\ud800 b", "entities": []}', "field 'text'"),
        (b'{"id": "g\\ud800", "text": "a b", "entities": []}', "field 'id'"),
        (b'{"id": "g2", "text": "a b", "entities": [{"start": 0, "end": 1, "label": "Method\\ud800"}]}', "field 'entities'"),
        (b'{"id": "g2", "text": "a b", "entities": [], "\\ud800": 1}', "a field name"),
    ],
)
def test_a_lone_surrogate_in_any_string(command, line, field, tmp_path, capsys):
    gold = gold_file(tmp_path, line)
    code, message = run(command, gold, tmp_path, capsys)
    assert code == ExitCode.DECODE_ERROR
    assert message == f"{gold}:2: {field} {LONE}"


@pytest.mark.parametrize("command", COMMANDS)
def test_a_text_over_the_ingestion_limit(command, tmp_path, capsys):
    gold = gold_file(tmp_path, {"id": "g2", "text": "x" * 2_000_000, "entities": []})
    code, message = run(command, gold, tmp_path, capsys)
    assert code == ExitCode.RECORD_TOO_LARGE == 21
    assert message == f"{gold}:2: field 'text' has 2,000,000 characters, over the limit of {MAX_ABSTRACT_CHARS:,}"


@pytest.mark.parametrize("command", ["eval", "train"])
def test_a_text_at_the_limit_is_read_but_a_word_over_its_limit_is_not(command, tmp_path, capsys):
    assert len(load_gold(gold_file(tmp_path, {"id": "g2", "text": "ab " * (MAX_ABSTRACT_CHARS // 3), "entities": []}))) == 2
    gold = gold_file(tmp_path, {"id": "g2", "text": "a " + "x" * (MAX_WORD_CHARS + 1), "entities": []})
    code, message = run(command, gold, tmp_path, capsys)
    assert code == ExitCode.RECORD_TOO_LARGE
    assert message == f"{gold}:2: field 'text' has a word of {MAX_WORD_CHARS + 1:,} characters (no space), over the limit of {MAX_WORD_CHARS:,}"


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("key", ["start", "end"])
@pytest.mark.parametrize(
    ("value", "kind"),
    [("9", 'a string ("9")'), (13.5, "a decimal number (13.5)"), (7.0, "a decimal number (7.0)"), (True, "a boolean (true)"), (None, "null"), ([7], "an array")],
)
def test_offsets_of_the_wrong_json_type_are_errors_not_coerced(command, key, value, kind, tmp_path, capsys):
    gold = gold_file(tmp_path, record(**{key: value}))
    code, message = run(command, gold, tmp_path, capsys)
    assert code == ExitCode.GOLD_FORMAT == 15
    assert message == f'{gold}:2: entity 1: "{key}" must be an integer, not {kind}'


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize(("value", "kind"), [(3, "an integer (3)"), (None, "null"), (["Method"], "an array"), ({"name": "Method"}, "an object")])
def test_a_label_that_is_not_a_string(command, value, kind, tmp_path, capsys):
    gold = gold_file(tmp_path, record(label=value))
    code, message = run(command, gold, tmp_path, capsys)
    assert code == ExitCode.GOLD_FORMAT
    assert message == f'{gold}:2: entity 1: "label" must be a string, not {kind}'


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize(
    ("entity", "reason"),
    [
        ({"start": -1, "end": 4}, f"entity 1: offsets -1..4 outside the text (length {len(TEXT)})"),
        ({"start": 7, "end": 99}, f"entity 1: offsets 7..99 outside the text (length {len(TEXT)})"),
        ({"start": 11, "end": 7}, "entity 1: start 11 is not before end 7"),
        ({"start": 7, "end": 7}, "entity 1: start 7 is not before end 7"),
        ({"start": 10**30, "end": 1}, "entity 1: start 1000000000… (31 digits) is not before end 1"),
        ({"text": 4}, 'entity 1: "text" must be a string, not an integer (4)'),
    ],
)
def test_offsets_out_of_range_or_not_in_order(command, entity, reason, tmp_path, capsys):
    gold = gold_file(tmp_path, record(**entity))
    code, message = run(command, gold, tmp_path, capsys)
    assert code == ExitCode.GOLD_FORMAT
    assert message == f"{gold}:2: {reason}"


@pytest.mark.parametrize("command", ["eval", "train"])
@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b'{"id": 7, "text": "a b", "entities": []}', '"id" must be a string, not an integer (7)'),
        (b'{"id": "g2", "text": "a b", "entities": ["Method"]}', 'entity 1: expected an object with "start", "end" and "label", not a string ("Method")'),
        (b'{"id": "g2", "text": "a b", "entities": [{"start": 0, "end": 1}]}', 'entity 1: no "label"'),
        (b"[" * 100_000 + b"]" * 100_000, "not usable JSON: values nested too deeply"),
        (b'{"id": "g2", "text": "a b", "entities": [{"start": ' + b"9" * 5000 + b', "end": 1, "label": "Method"}]}', "not usable JSON: a number with too many digits"),
        (b'["not", "an", "object"]', "expected a JSON object, found an array"),
        (b'{"id": "g2", "text": "a b", "entities": [{"start": NaN, "end": 1, "label": "Method"}]}', "not valid JSON: NaN is not a JSON value"),
        (b'{"id": "g2", "text": "a b", "entities": [{"start": 0, "end": 1e400, "label": "Method"}]}', "not usable JSON: the number 1e400 is too large"),
        (b'{"id": "g2", "text": "a b"', "not valid JSON: Expecting ',' delimiter at column 27"),
    ],
)
def test_other_malformed_lines(command, line, reason, tmp_path, capsys):
    gold = gold_file(tmp_path, line)
    code, message = run(command, gold, tmp_path, capsys)
    assert code == ExitCode.GOLD_FORMAT
    assert message == f"{gold}:2: {reason}"


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("text", ["", " \n\t "])
def test_a_document_with_empty_text(command, text, tmp_path, capsys):
    """Issue 36, item 3: `kg train` on `{"id":"a","text":"","entities":[]}` died in spaCy (E923)."""
    gold = gold_file(tmp_path, {"id": "a", "text": text, "entities": []})
    code, message = run(command, gold, tmp_path, capsys)
    assert (code, message) == (ExitCode.GOLD_FORMAT, f'{gold}:2: "text" is empty')


def test_the_reported_empty_text_alone_is_one_line_not_a_traceback(tmp_path, capsys):
    gold = tmp_path / "gold.jsonl"
    gold.write_text('{"id":"a","text":"","entities":[]}\n', encoding="utf-8")
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps(GOOD) + "\n", encoding="utf-8")
    code = main(["train", str(gold), "--dev", str(good), "-o", str(tmp_path / "model"), "--max-steps", "1", "-q"])
    assert (code, capsys.readouterr().err) == (ExitCode.GOLD_FORMAT, f'Error: {gold}:1: "text" is empty\n')
    assert not (tmp_path / "model").exists()


@pytest.mark.parametrize("content", ["", "\n\n  \n"])
def test_kg_eval_on_a_gold_file_without_documents(content, tmp_path, capsys):
    """Issue 36, item 12: exit 0 with a table of zeros (kg train gave exit 15 on the same file)."""
    gold = tmp_path / "gold.jsonl"
    gold.write_text(content, encoding="utf-8")
    code = main(["eval", str(gold)])
    captured = capsys.readouterr()
    assert (code, captured.err, captured.out) == (ExitCode.GOLD_FORMAT, f"Error: {gold}: no gold documents\n", "")
    assert main(["train", str(gold), "--dev", str(gold), "-o", str(tmp_path / "model"), "-q"]) == ExitCode.GOLD_FORMAT
    assert capsys.readouterr().err == f"Error: {gold}: no training documents\n"


@pytest.mark.parametrize("command", ["eval", "train"])
def test_a_binary_file_is_not_a_gold_file(command, tmp_path, capsys):
    gold = tmp_path / "paper.jsonl"
    gold.write_bytes(b"%PDF-1.4\n\xff\xfe\x00")
    code, message = run(command, gold, tmp_path, capsys)
    assert code == ExitCode.UNSUPPORTED_FORMAT
    assert message == f"{gold}: this is a PDF, not a gold file (JSON Lines)"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
@pytest.mark.parametrize("command", ["eval", "train"])
def test_a_gold_file_that_cannot_be_read(command, tmp_path, capsys):
    gold = gold_file(tmp_path, GOOD)
    gold.chmod(0)
    try:
        code, message = run(command, gold, tmp_path, capsys)
    finally:
        gold.chmod(0o644)
    assert code == ExitCode.INPUT_UNREADABLE
    assert message == f"{gold}: cannot read it (permission denied)"


def test_good_lines_still_load(tmp_path):
    docs = load_gold(gold_file(tmp_path, {"id": "g2", "text": TEXT, "entities": [{"start": 16, "end": 35, "label": "Task"}]}))
    assert [(d.id, sorted(d.spans)) for d in docs] == [("g1", [(7, 11, "METHOD")]), ("g2", [(16, 35, "TASK")])]


# -- the model folder (-o) --------------------------------------------------------------------


def train_into(out: Path, tmp_path: Path, capsys) -> tuple[int, str]:
    gold = gold_file(tmp_path, GOOD, name="train.jsonl")
    code = main(["train", str(gold), "--dev", str(gold), "-o", str(out), "--max-steps", "1", "-q"])
    captured = capsys.readouterr()
    assert captured.err.startswith("Error: ") and captured.err.count("\n") == 1 and captured.err.endswith("\n"), captured.err
    assert "Traceback" not in captured.err + captured.out
    return code, captured.err.removeprefix("Error: ").removesuffix("\n")


def test_an_output_under_a_regular_file(tmp_path, capsys):
    (tmp_path / "FILE").write_text("not a folder")
    code, message = train_into(tmp_path / "FILE" / "m", tmp_path, capsys)
    assert code == ExitCode.OUTPUT_ERROR == 18
    assert message == f"cannot write {tmp_path / 'FILE' / 'm'}: {tmp_path / 'FILE'} is not a folder"
    assert (tmp_path / "FILE").read_text() == "not a folder"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes in any folder")
def test_an_output_in_a_folder_that_cannot_be_written(tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        code, message = train_into(locked / "m", tmp_path, capsys)
    finally:
        locked.chmod(0o700)
    assert code == ExitCode.OUTPUT_PERMISSION == 22
    assert message == f"cannot write {locked / 'm'}: permission denied (in {locked})"


def test_an_output_that_cannot_be_written_for_lack_of_permission(tmp_path, capsys, monkeypatch):
    """As the test above, for root too: the operating system is made to refuse the write."""
    import kg.util.atomic

    real_access = os.access
    monkeypatch.setattr(kg.util.atomic.os, "access", lambda path, mode, **kwargs: not mode & os.W_OK and real_access(path, mode, **kwargs))
    code, message = train_into(tmp_path / "m", tmp_path, capsys)
    assert code == ExitCode.OUTPUT_PERMISSION
    assert message == f"cannot write {tmp_path / 'm'}: permission denied (in {tmp_path})"


def test_a_refused_write_while_training_is_an_output_error(tmp_path, capsys, monkeypatch):
    """What the checks before reading could not tell (a race, a quota) fails as one line too."""
    import kg.training.train

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(kg.training.train.tempfile, "TemporaryDirectory", refuse)
    code, message = train_into(tmp_path / "m", tmp_path, capsys)
    assert code == ExitCode.OUTPUT_PERMISSION
    assert message == f"cannot write {tmp_path / 'm'}: Permission denied"


def test_train_checks_its_output_before_reading_gold(tmp_path):
    from kg.training.train import check_output

    (tmp_path / "FILE").write_text("x")
    with pytest.raises(OutputError, match="is not a folder$") as raised:
        check_output(tmp_path / "FILE" / "m")
    assert raised.value.exit_code == ExitCode.OUTPUT_ERROR
    check_output(tmp_path / "new" / "m")  # creates nothing
    assert not (tmp_path / "new").exists()
