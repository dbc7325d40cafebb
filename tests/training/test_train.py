"""`kg train` and `--model`: a recognizer trained on a tiny gold file, used by build, extract
and eval; bad gold and folders that are no model get one clear line and their exit code."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kg.cli import main
from kg.errors import ExitCode
from kg.extract.pipeline import pipeline_version

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "extract"
GOLD = FIXTURES / "gold_tiny.jsonl"
SEEDS = Path(__file__).resolve().parents[2] / "seeds"


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("train") / "model"
    assert main(["train", str(GOLD), "--dev", str(GOLD), "-o", str(out), "--max-steps", "30", "-q"]) == 0
    return out


def test_train_writes_a_model_with_its_card(model):
    meta = json.loads((model / "meta.json").read_text())
    assert "ner" in meta["pipeline"] and set(meta["labels"]["ner"]) == {"METHOD", "TASK", "DATASET", "METRIC"}
    training = meta["kg_training"]
    assert (training["seed"], training["steps"], training["max_steps"], training["train_documents"], training["dev_documents"]) == (0, 30, 30, 2, 2)
    assert [s["role"] for s in training["sources"]] == ["train", "dev"]
    card = (model / "model-card.md").read_text()
    assert "| gold_tiny.jsonl | train | 2 | 0 |" in card and "| micro |" in card
    assert not any(p.name.startswith(".") for p in model.parent.iterdir())  # no staging folder left behind


def test_the_same_data_and_seed_give_the_same_weights(model, tmp_path):
    again = tmp_path / "again"
    assert main(["train", str(GOLD), "--dev", str(GOLD), "-o", str(again), "--max-steps", "30", "-q"]) == 0
    assert (again / "ner" / "model").read_bytes() == (model / "ner" / "model").read_bytes()


def test_summary_names_steps_documents_and_scores(tmp_path, capsys):
    assert main(["train", str(GOLD), "--dev", str(GOLD), "-o", str(tmp_path / "m"), "--max-steps", "5"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"Trained {tmp_path / 'm'}/ in ") and "(5 steps, " in lines[0]
    assert lines[1].split() == ["train", "documents", "2"] and lines[2].split() == ["dev", "documents", "2"]
    assert lines[3].startswith("  dev micro F1     strict ")


def test_a_given_model_is_used_and_keys_the_cache(model, tmp_path, capsys):
    assert pipeline_version(recognizer=str(model)) != pipeline_version(recognizer=None)
    assert main(["eval", str(GOLD), "--model", str(model), "--json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    assert scores["strict"]["micro"]["correct_gold"] >= 4  # it learnt its own training spans
    assert main(["extract", str(SEEDS), "--model", str(model)]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 38
    out = tmp_path / "out"
    assert main(["build", str(SEEDS), "-o", str(out), "--model", str(model), "-q"]) == 0
    graph = json.loads((out / "graph.json").read_text())
    assert str(model) not in json.dumps(graph["meta"])  # provenance names the model, not a local path
    assert graph["meta"]["pipeline"]["version"] == pipeline_version(recognizer=str(model))
    assert graph["meta"]["pipeline"]["recognizer"]["name"] == "kg_recognizer"


@pytest.mark.parametrize("command", [["eval", str(GOLD)], ["extract", str(SEEDS)], ["build", str(SEEDS), "-q"]])
def test_a_folder_that_is_not_a_model_is_one_clear_error(command, tmp_path, capsys):
    (tmp_path / "notes").mkdir()
    if command[0] == "build":
        command = [*command, "-o", str(tmp_path / "out")]
    assert main([*command, "--model", str(tmp_path / "notes")]) == ExitCode.MODEL_ERROR == 19
    err = capsys.readouterr().err
    assert err == f"Error: {tmp_path / 'notes'}: not a model folder (no readable meta.json, which kg's trainer writes)\n"
    assert not (tmp_path / "out").exists()  # nothing written before the model was checked
    assert main([*command, "--model", str(tmp_path / "missing")]) == ExitCode.MODEL_ERROR
    assert capsys.readouterr().err == f"Error: {tmp_path / 'missing'}: no such model folder\n"


def test_bad_gold_names_file_and_line(tmp_path, capsys):
    bad = FIXTURES / "gold_bad_json.jsonl"
    assert main(["train", str(bad), "-o", str(tmp_path / "m")]) == ExitCode.GOLD_FORMAT
    err = capsys.readouterr().err
    assert err.startswith(f"Error: {bad}:2: not valid JSON") and len(err.splitlines()) == 1
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("value", ["gold.jsonl", "gold.jsonl=0", "gold.jsonl=100", "=20"])
def test_hold_out_needs_file_and_percent(value, tmp_path, capsys):
    assert main(["train", str(GOLD), "--hold-out", value, "-o", str(tmp_path / "m")]) == ExitCode.USAGE
    assert "expected FILE=PERCENT with a percent from 1 to 99" in capsys.readouterr().err


def test_hold_out_of_a_file_that_is_not_an_input(tmp_path, capsys):
    assert main(["train", str(GOLD), "--hold-out", "other.jsonl=20", "-o", str(tmp_path / "m")]) == ExitCode.FILE_NOT_FOUND
    assert capsys.readouterr().err == "Error: other.jsonl: held-out share given for a file that is not a gold input\n"


def test_held_out_split_is_stable_and_disjoint():
    from kg.training.evaluate import load_gold
    from kg.training.train import gather

    data = gather([str(GOLD)], hold_out={str(GOLD): 50})
    again = gather([str(GOLD)], hold_out={str(GOLD): 50})
    assert data == again
    assert {d.id for d in data.train} | {d.id for d in data.dev} == {d.id for d in load_gold(GOLD)}
    assert not {d.id for d in data.train} & {d.id for d in data.dev}


def test_an_output_that_is_a_file_is_one_clear_error(tmp_path, capsys):
    from kg.errors import OutputError
    from kg.training.train import gather, train

    target = tmp_path / "model"
    target.write_text("not a folder")
    assert main(["train", str(GOLD), "--dev", str(GOLD), "-o", str(target), "--max-steps", "2", "-q"]) == ExitCode.USAGE
    assert "is a file" in capsys.readouterr().err
    with pytest.raises(OutputError, match="exists and is not a folder$"):
        train(gather([str(GOLD)], dev=[str(GOLD)]), target, max_steps=2)
    assert target.read_text() == "not a folder"


# -- where the model may go: `kg train -o` replaces only a model it wrote (hostile review of issue 36:
# it removed whatever folder it was given, `shutil.rmtree`: `-o .` emptied the folder kg ran in,
# `-o OUT` of a build deleted the build, `-o` the cache folder deleted extract.sqlite) ----------


def train_into(out: str, gold: Path = GOLD) -> int | None:
    return main(["train", str(gold), "--dev", str(gold), "-o", out, "--max-steps", "2", "-q"])


def test_train_into_the_working_folder_deletes_nothing_of_the_users(tmp_path, monkeypatch, capsys) -> None:
    work = tmp_path / "work"
    work.mkdir()
    gold = Path(shutil.copy(GOLD, work / "gold.jsonl"))
    (work / "thesis.tex").write_text("months of work\n", encoding="utf-8")
    monkeypatch.chdir(work)
    assert train_into(".", gold) == ExitCode.OUTPUT_ERROR
    assert {"gold.jsonl", "thesis.tex"} <= {p.name for p in work.iterdir()}
    assert (work / "thesis.tex").read_text(encoding="utf-8") == "months of work\n"
    assert capsys.readouterr().err == (
        "Error: cannot write .: it holds files and is no model kg train wrote (no meta.json of one), so they would be lost; "
        "name a new or empty folder, or a model folder kg train wrote\n"
    )


def test_train_into_an_empty_working_folder_writes_the_model_there(tmp_path, monkeypatch) -> None:
    work = tmp_path / "model"
    work.mkdir()
    monkeypatch.chdir(work)
    assert train_into(".") == 0
    assert (work / "meta.json").is_file() and (work / "ner").is_dir() and Path.cwd() == work  # the same folder, not a new one
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]  # nothing left beside it


def test_train_into_a_build_output_folder_leaves_the_build(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    source = tmp_path / "papers.jsonl"
    source.write_text(json.dumps({"id": "a1", "title": "T", "abstract": "We propose the Transformer and train it on WMT."}) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    assert main(["build", str(source), "-o", str(out), "--no-cache"]) in (0, None)
    (out / "notes.txt").write_text("mine\n", encoding="utf-8")
    assert train_into(str(out)) == ExitCode.OUTPUT_ERROR
    assert (out / "graph.json").is_file() and (out / "notes.txt").is_file()
    assert capsys.readouterr().err.startswith(f"Error: cannot write {out}: it is the output folder of a kg build; name a new")
    for inside in (".kg", ".kg/current", "graph.oxigraph"):
        assert train_into(str(out / inside)) == ExitCode.OUTPUT_ERROR
        assert "it is inside a " in capsys.readouterr().err
    assert (out / "graph.json").is_file() and (out / "graph.oxigraph" / "kg-stamp.json").is_file()


@pytest.mark.parametrize("how", ["the cache folder", "inside it", "another cache folder"])
def test_train_into_a_cache_folder_is_refused_as_build_is(tmp_path, monkeypatch, capsys, how: str) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "extract.sqlite").write_bytes(b"")
    monkeypatch.setenv("KG_CACHE_DIR", str(cache) if how != "another cache folder" else str(tmp_path / "now"))
    target = cache / "model" if how == "inside it" else cache
    assert train_into(str(target)) == ExitCode.OUTPUT_ERROR
    assert (cache / "extract.sqlite").exists() and not (cache / "model").exists()
    err = capsys.readouterr().err
    assert err.startswith(f"Error: cannot write {target}: it is ") and "cache folder" in err


def test_train_into_a_folder_that_is_no_model_is_refused_before_training(tmp_path, capsys) -> None:
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "thesis.tex").write_text("x", encoding="utf-8")
    (folder / "meta.json").write_text(json.dumps({"name": "core_web_sm", "pipeline": ["ner"]}), encoding="utf-8")  # spaCy's, not kg's
    assert train_into(str(folder)) == ExitCode.OUTPUT_ERROR
    assert (folder / "thesis.tex").is_file() and sorted(p.name for p in folder.iterdir()) == ["meta.json", "thesis.tex"]
    assert "no model kg train wrote" in capsys.readouterr().err


def test_a_model_kg_wrote_is_replaced_and_what_else_is_there_stays(model, tmp_path) -> None:
    again = tmp_path / "model"
    shutil.copytree(model, again)
    (again / "notes.txt").write_text("how I trained it\n", encoding="utf-8")
    (again / "ner" / "model").write_bytes(b"old weights")
    assert train_into(str(again)) == 0
    meta = json.loads((again / "meta.json").read_text(encoding="utf-8"))
    assert meta["kg_training"]["max_steps"] == 2 and (again / "ner" / "model").read_bytes() != b"old weights"
    assert (again / "notes.txt").read_text(encoding="utf-8") == "how I trained it\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]  # no staging or old folder left
