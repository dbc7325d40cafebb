"""Output folders that are not safe (issue 23): an -o inside .kg/, an -o inside an input folder,
and a file kg did not write where an output goes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kg.builder import BuildOptions, build
from kg.cli import main
from kg.errors import ExitCode, OutputsSkipped, UserFileSetAside
from kg.generations import KG_DIR, current_generation
from kg.graph import load

PAPERS = [
    {"id": "a1", "title": "Transformers", "abstract": "We propose the Transformer, built on attention, and train it on WMT with GPUs."},
    {"id": "a2", "title": "BERT", "abstract": "We introduce BERT, a bidirectional Transformer encoder evaluated on GLUE."},
]


@pytest.fixture(autouse=True)
def _pinned_time(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")


def write_corpus(folder: Path, records=PAPERS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "papers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return folder


@pytest.mark.parametrize("inside", [".kg/current", ".kg", ".kg/gen-x/sub"])
def test_an_output_folder_inside_dot_kg_is_refused(tmp_path, capsys, inside: str) -> None:
    """`-o out/.kg/current` was accepted and rewired the current generation (5 papers shown instead of 38)."""
    source = write_corpus(tmp_path / "in")
    out = tmp_path / "out"
    build([str(source)], out, BuildOptions(recognizer=None))
    before = current_generation(out)
    code = main(["build", str(source), "-o", str(out / inside), "--model", "none"])
    assert code == ExitCode.OUTPUT_ERROR
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is inside a .kg folder" in err
    assert current_generation(out) == before and len(list(load(out).nodes)) > 0


def test_an_output_folder_inside_an_input_folder_is_not_read_back(tmp_path) -> None:
    """`-o input/out` made the next build read its own outputs ("concepts.jsonl:1: no abstract")."""
    source = write_corpus(tmp_path / "input")
    out = source / "out"
    build([str(source)], out, BuildOptions(recognizer=None))
    with pytest.warns(OutputsSkipped, match=r"input/out/ is a kg output folder; its files are not read as input"):
        summary = build([str(source)], out, BuildOptions(recognizer=None))
    assert summary.papers == 2 and not summary.skipped


def test_building_into_the_input_folder_itself_is_refused(tmp_path, capsys) -> None:
    """Its papers.jsonl would have to make way for the output of the same name."""
    source = write_corpus(tmp_path / "both")
    code = main(["build", str(source), "-o", str(source / "."), "--model", "none"])
    assert code == ExitCode.OUTPUT_ERROR
    assert capsys.readouterr().err == f"Error: cannot write {source}: it is the input folder {source}; build into another folder (e.g. {source / 'out'})\n"
    assert sorted(p.name for p in source.iterdir()) == ["papers.jsonl"]


def test_an_older_build_inside_the_input_folder_is_skipped_with_a_warning(tmp_path, capsys) -> None:
    source = write_corpus(tmp_path / "input")
    build([str(source)], source / "old", BuildOptions(recognizer=None))
    code = main(["build", str(source), "-o", str(tmp_path / "new"), "--model", "none"])
    assert code == 0
    captured = capsys.readouterr()
    assert "Warning: " in captured.err and "input/old/ is a kg output folder; its files are not read as input" in captured.err
    assert sum(1 for _, data in load(tmp_path / "new").nodes(data=True) if data.get("kind") == "paper") == 2


def test_a_file_kg_did_not_write_is_set_aside_not_deleted(tmp_path) -> None:
    """A user's own plain out/graph.html was replaced with no warning."""
    source = write_corpus(tmp_path / "in")
    out = tmp_path / "out"
    build([str(source)], out, BuildOptions(recognizer=None))
    (out / "graph.html").unlink()
    (out / "graph.html").write_text("<p>my own page</p>", encoding="utf-8")
    with pytest.warns(UserFileSetAside, match=r"graph\.html was not written by kg; renamed it graph\.html\.user-"):
        build([str(source)], out, BuildOptions(recognizer=None))
    kept = list(out.glob("graph.html.user-*"))
    assert len(kept) == 1 and kept[0].read_text(encoding="utf-8") == "<p>my own page</p>"
    assert (out / "graph.html").is_symlink() and "my own page" not in (out / "graph.html").read_text(encoding="utf-8")


def test_a_fresh_folder_with_a_users_files_keeps_them(tmp_path) -> None:
    """No kg graph.json there: the files are the user's, not an older kg's to migrate."""
    source = write_corpus(tmp_path / "in")
    out = tmp_path / "out"
    out.mkdir()
    (out / "papers.jsonl").write_text("my notes\n", encoding="utf-8")
    with pytest.warns(UserFileSetAside):
        build([str(source)], out, BuildOptions(recognizer=None))
    assert [p.read_text(encoding="utf-8") for p in out.glob("papers.jsonl.user-*")] == ["my notes\n"]
    assert (out / KG_DIR).is_dir()


@pytest.mark.parametrize("command", [["html", "-o", "{out}/.kg/current/graph.html"], ["export", "-o", "{out}/.kg/current/graph.ttl"]])
def test_kg_html_and_export_never_write_into_a_build(tmp_path, capsys, command: list[str]) -> None:
    """`kg html -o out/.kg/current/graph.html` rewrote the published build's own page."""
    source = write_corpus(tmp_path / "in")
    out = tmp_path / "out"
    build([str(source)], out, BuildOptions(recognizer=None))
    before = {p.name: p.read_bytes() for p in (out / ".kg" / "current").iterdir()}
    code = main([command[0], "--graph", str(out), command[1], command[2].replace("{out}", str(out))])
    assert code == ExitCode.OUTPUT_ERROR
    assert "is inside a .kg folder, where kg keeps an output folder's builds" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in (out / ".kg" / "current").iterdir()} == before


def test_a_file_or_folder_where_the_store_goes_is_set_aside(tmp_path) -> None:
    """A plain file out/graph.oxigraph was moved to a hidden .graph.oxigraph.<pid>.old; a build
    made into out/graph.oxigraph was deleted by the next build into out/."""
    from kg.rdf.store import STORE_DIR

    source = write_corpus(tmp_path / "in")
    out = tmp_path / "out"
    out.mkdir()
    (out / STORE_DIR).write_text("my notes\n", encoding="utf-8")
    with pytest.warns(UserFileSetAside, match="graph.oxigraph was not written by kg"):
        build([str(source)], out, BuildOptions(recognizer=None))
    assert [p.read_text(encoding="utf-8") for p in out.glob(f"{STORE_DIR}.user-*")] == ["my notes\n"]
    nested = tmp_path / "w1"
    build([str(source)], nested / STORE_DIR, BuildOptions(recognizer=None))
    with pytest.warns(UserFileSetAside):
        build([str(source)], nested, BuildOptions(recognizer=None))
    kept = list(nested.glob(f"{STORE_DIR}.user-*"))
    assert len(kept) == 1 and (kept[0] / "graph.json").exists()


@pytest.mark.parametrize("spaced", [False, True])
def test_an_older_kgs_output_folder_inside_the_input_folder_is_skipped_with_a_warning(tmp_path, capsys, spaced: bool) -> None:
    """Issue 36, item 11: `in/old/` holding an older kg's plain papers.jsonl, graph.json,
    entities.jsonl and concepts.jsonl failed with `in/old/concepts.jsonl:1: no abstract` (exit 6)."""
    import shutil

    source = write_corpus(tmp_path / "input")
    build([str(source)], tmp_path / "built", BuildOptions(recognizer=None))
    old = source / "old"
    old.mkdir()
    for name in ("papers.jsonl", "graph.json", "entities.jsonl", "concepts.jsonl"):
        shutil.copyfile(tmp_path / "built" / name, old / name)  # plain files, as kg wrote them before generations
    if spaced:  # the oldest graph.json had spaces after its separators
        graph = json.loads((old / "graph.json").read_text(encoding="utf-8"))
        (old / "graph.json").write_text(json.dumps(graph), encoding="utf-8")
    code = main(["build", str(source), "-o", str(tmp_path / "new"), "--model", "none"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "Warning: " in captured.err and "input/old/ is a kg output folder; its files are not read as input" in captured.err
    assert sum(1 for _, data in load(tmp_path / "new").nodes(data=True) if data.get("kind") == "paper") == 2


def test_a_folder_with_a_graph_json_that_is_not_kgs_is_read(tmp_path) -> None:
    source = write_corpus(tmp_path / "input")
    data = source / "data"
    data.mkdir()
    (data / "graph.json").write_text(json.dumps([{"id": "g1", "title": "Graphs", "abstract": "We study graph neural networks on molecules."}]), encoding="utf-8")
    summary = build([str(source)], tmp_path / "out", BuildOptions(recognizer=None))
    assert summary.papers == 3


def test_kg_warnings_are_lines_whatever_the_warning_filters(tmp_path) -> None:
    """With PYTHONWARNINGS=error (or pytest -W error) a kg warning became a traceback, exit 1."""
    import os
    import subprocess
    import sys

    source = write_corpus(tmp_path / "input")
    build([str(source)], source / "old", BuildOptions(recognizer=None))
    env = {**os.environ, "PYTHONWARNINGS": "error"}
    done = subprocess.run([sys.executable, "-m", "kg", "build", str(source), "-o", str(tmp_path / "new"), "--model", "none", "-q"], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("Warning: ") and "input/old/ is a kg output folder; its files are not read as input" in done.stderr


# Found by the hostile review of issue 36 (item 16): an output folder named as input was read
# (its store's kg-stamp.json as a paper, an older kg's concepts.jsonl: exit 8); a graph.json of
# kg's at the root of an input folder was read as a record (exit 8); a subfolder holding the
# user's papers and a stray graph.json of kg's was skipped whole.
def old_style_copy(built: Path, folder: Path, names=("papers.jsonl", "graph.json", "entities.jsonl", "concepts.jsonl")) -> Path:
    import shutil

    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copyfile(built / name, folder / name)  # plain files, as kg wrote them before generations
    return folder


@pytest.mark.parametrize(("named", "why"), [
    ("built", "a kg output folder (it holds .kg/current, the link to its build), not a folder of papers"),
    ("built/graph.oxigraph", "a SPARQL store folder, which the next build replaces whole, not a folder of papers"),
    ("built/.kg", "a .kg folder, where kg keeps an output folder's builds, not a folder of papers"),
    ("old", "a kg output folder (it holds a graph.json kg built, and only kg's outputs), not a folder of papers"),
])
def test_a_kg_folder_named_as_input_is_refused(tmp_path, capsys, named: str, why: str) -> None:
    source = write_corpus(tmp_path / "input")
    build([str(source)], tmp_path / "built", BuildOptions(recognizer=None))
    old_style_copy(tmp_path / "built", tmp_path / "old")
    capsys.readouterr()
    code = main(["build", str(tmp_path / named), "-o", str(tmp_path / "new"), "--model", "none"])
    assert (code, capsys.readouterr().err) == (ExitCode.UNSUPPORTED_FORMAT, f"Error: {tmp_path / named}: {why}; name the files or folder your papers are in\n")
    assert not (tmp_path / "new").exists()


def test_a_graph_json_of_kgs_among_the_users_papers_is_skipped_alone(tmp_path, capsys) -> None:
    source = write_corpus(tmp_path / "input")
    build([str(source)], tmp_path / "built", BuildOptions(recognizer=None))
    more = [{"id": "b1", "title": "GNNs", "abstract": "We study graph neural networks on molecules and proteins."}]
    write_corpus(source / "sub", more)
    (source / "sub" / "papers.jsonl").rename(source / "sub" / "mine.jsonl")
    old_style_copy(tmp_path / "built", source, ("graph.json",))  # a stray copy at the root
    old_style_copy(tmp_path / "built", source / "sub", ("graph.json",))  # and beside the papers of a subfolder
    capsys.readouterr()
    code = main(["build", str(source), "-o", str(tmp_path / "new"), "--model", "none", "-q"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "input/graph.json is a graph kg built; not read as input" in err
    assert "input/sub/graph.json is a graph kg built; not read as input" in err
    assert "is a kg output folder" not in err
    assert sorted(n for n, data in load(tmp_path / "new").nodes(data=True) if data.get("kind") == "paper")[-1].endswith("b1")
    assert sum(1 for _, data in load(tmp_path / "new").nodes(data=True) if data.get("kind") == "paper") == 3


def test_a_store_copied_into_an_input_folder_is_skipped_with_a_warning(tmp_path, capsys) -> None:
    import shutil

    source = write_corpus(tmp_path / "input")
    build([str(source)], tmp_path / "built", BuildOptions(recognizer=None))
    shutil.copytree(tmp_path / "built" / "graph.oxigraph", source / "store")
    capsys.readouterr()
    code = main(["build", str(source), "-o", str(tmp_path / "new"), "--model", "none", "-q"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "input/store/ is a SPARQL store kg wrote; its files are not read as input" in err
