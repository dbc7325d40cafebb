"""Where outputs and caches may live (issue 36, items 2 and 8): one rule on real paths
(`kg.util.places`). An OUT/.kg that is a link was written through and the entries of the folder
it named were deleted; -o into the cache folder, --cache inside a published generation and
-o out/graph.oxigraph were accepted."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from kg.builder import BuildOptions, build
from kg.cli import main
from kg.errors import ExitCode, OutputError
from kg.generations import Generation, OutputLock, clean_stale
from kg.util.places import BUILDS, STORE, kg_place, within

PAPERS = [
    {"id": "a1", "title": "Transformers", "abstract": "We propose the Transformer, built on attention, and train it on WMT with GPUs."},
    {"id": "a2", "title": "BERT", "abstract": "We introduce BERT, a bidirectional Transformer encoder evaluated on GLUE."},
]


@pytest.fixture(autouse=True)
def _pinned_time(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")


@pytest.fixture
def corpus(tmp_path) -> Path:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "papers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in PAPERS), encoding="utf-8")
    return folder


def tree(folder: Path) -> dict[str, str]:
    """Every entry under `folder` (links not followed) → its content's digest ("dir", "link")."""
    seen = {}
    for path in sorted(folder.rglob("*")):
        key = str(path.relative_to(folder))
        if path.is_symlink():
            seen[key] = "link:" + os.readlink(path)
        elif path.is_dir():
            seen[key] = "dir"
        else:
            seen[key] = hashlib.sha256(path.read_bytes()).hexdigest()
    return seen


@pytest.fixture
def victim(tmp_path) -> Path:
    """The issue's: a folder holding what kg would take for a killed build's leftovers."""
    folder = tmp_path / "victim" / "k"
    (folder / "build-123-abc").mkdir(parents=True)
    (folder / "build-123-abc" / "notes.txt").write_text("mine\n", encoding="utf-8")
    (folder / "gen-mine").mkdir()
    (folder / "gen-mine" / "data.csv").write_text("1,2\n", encoding="utf-8")
    (folder / ".graph.ttl.123-abcdefgh.tmp").write_text("mine too\n", encoding="utf-8")
    return folder


def test_an_out_dot_kg_that_is_a_link_is_refused_and_nothing_is_written_through_it(tmp_path, corpus, victim, capsys) -> None:
    """The issue's reproduction: `sl/.kg -> ../victim/k`, `kg build seeds -o sl` exited 0."""
    out = tmp_path / "sl"
    out.mkdir()
    (out / ".kg").symlink_to("../victim/k")
    before = tree(tmp_path / "victim")
    code = main(["build", str(corpus), "-o", str(out), "--model", "none", "-q"])
    assert code == ExitCode.OUTPUT_ERROR
    assert capsys.readouterr().err == (
        f"Error: cannot write {out}: {out / '.kg'} is a symbolic link (to ../victim/k); kg keeps the builds of {out} there "
        "and removes old ones, so it must be a folder of its own: remove the link\n"
    )
    assert tree(tmp_path / "victim") == before
    assert sorted(p.name for p in out.iterdir()) == [".kg"]


def test_a_dot_kg_made_a_link_after_the_checks_is_still_never_written_through(tmp_path, victim) -> None:
    """What a build does under its lock checks again: the lock, a new generation, the clean-up."""
    out = tmp_path / "out"
    out.mkdir()
    (out / ".kg").symlink_to(victim)
    before = tree(victim)
    for step in (lambda: OutputLock(out).acquire(), lambda: Generation(out), lambda: clean_stale(out, ["graph.json"])):
        with pytest.raises(OutputError, match=r"\.kg is a symbolic link"):
            step()
    assert tree(victim) == before


def test_a_dot_kg_that_is_a_file_is_refused(tmp_path, corpus, capsys) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / ".kg").write_text("not kg's\n", encoding="utf-8")
    assert main(["build", str(corpus), "-o", str(out), "--model", "none", "-q"]) == ExitCode.OUTPUT_ERROR
    assert capsys.readouterr().err == f"Error: cannot write {out}: {out / '.kg'} is not a folder; kg keeps the builds of {out} there: move it away\n"
    assert (out / ".kg").read_text(encoding="utf-8") == "not kg's\n"


@pytest.fixture
def built(tmp_path, corpus) -> Path:
    out = tmp_path / "out"
    build([str(corpus)], out, BuildOptions(recognizer=None, no_cache=True))
    return out


@pytest.mark.parametrize("how", ["--cache", "KG_CACHE_DIR", "a link", "inside", "--no-cache"])
def test_an_output_folder_in_the_cache_folder_is_refused(tmp_path, corpus, monkeypatch, capsys, how: str) -> None:
    """`-o` into the cache folder put the outputs beside extract.sqlite."""
    cache = tmp_path / "cache"
    build([str(corpus)], tmp_path / "first", BuildOptions(recognizer=None, cache_dir=cache))  # the cache now holds extract.sqlite
    before = tree(cache)
    args = ["build", str(corpus), "--model", "none", "-q"]
    out: Path = cache
    if how == "--cache":
        args += ["--cache", str(cache)]
    else:
        monkeypatch.setenv("KG_CACHE_DIR", str(cache))
        if how == "a link":
            out = tmp_path / "link"
            out.symlink_to(cache)
        elif how == "inside":
            out = cache / "out"
        elif how == "--no-cache":
            args.append("--no-cache")
    assert main([*args, "-o", str(out)]) == ExitCode.OUTPUT_ERROR
    why = "as asked" if how == "--cache" else "from KG_CACHE_DIR"
    where = "inside kg's cache folder" if how == "inside" else "kg's cache folder"
    assert capsys.readouterr().err == f"Error: cannot write {out}: it is {where} {cache} ({why}); build into another folder\n"
    assert tree(cache) == before


@pytest.mark.parametrize("inside", [".kg/current", ".kg", "graph.oxigraph", "graph.oxigraph/sub"])
@pytest.mark.parametrize("command", ["build", "extract", "cache info"])
def test_a_cache_folder_inside_a_build_or_its_store_is_refused(built, corpus, capsys, inside: str, command: str) -> None:
    """`--cache out/.kg/current` wrote extract.sqlite into the published generation."""
    before = tree(built)
    cache = built / inside
    args = {
        "build": ["build", str(corpus), "-o", str(built.parent / "other"), "--model", "none", "-q"],
        "extract": ["extract", str(corpus), "--model", "none"],
        "cache info": ["cache", "info"],
    }[command]
    assert main([*args, "--cache", str(cache)]) == ExitCode.CACHE_ERROR
    place = STORE if inside.startswith("graph.oxigraph") else BUILDS
    err = capsys.readouterr().err
    assert err.startswith(f"Error: cache folder {cache} (from --cache) is inside {place}; choose another with --cache DIR or KG_CACHE_DIR") and err.count("\n") == 1
    assert tree(built) == before and not (built.parent / "other").exists()


@pytest.mark.parametrize("target", ["graph.oxigraph", "graph.oxigraph/sub", ".kg/current"])
def test_an_output_folder_inside_a_builds_store_or_state_is_refused(built, corpus, capsys, target: str) -> None:
    """`-o out/graph.oxigraph` was accepted; the next build into out/ replaces that folder whole."""
    before = tree(built)
    assert main(["build", str(corpus), "-o", str(built / target), "--model", "none", "-q"]) == ExitCode.OUTPUT_ERROR
    place = STORE if target.startswith("graph.oxigraph") else BUILDS
    assert capsys.readouterr().err == f"Error: cannot write {built / target}: it is inside {place}; name the output folder itself\n"
    assert tree(built) == before


def test_kg_html_and_export_never_write_into_the_store(built, capsys) -> None:
    before = tree(built)
    for command in (["html", "-o"], ["export", "-o"]):
        assert main([command[0], "--graph", str(built), command[1], str(built / "graph.oxigraph" / "x")]) == ExitCode.OUTPUT_ERROR
        assert f"it is inside {STORE}" in capsys.readouterr().err
    assert tree(built) == before


def test_places_are_judged_on_real_paths(built, tmp_path) -> None:
    link = tmp_path / "to-state"
    link.symlink_to(built / ".kg")
    assert kg_place(link) == BUILDS and kg_place(link / "x") == BUILDS
    store_link = tmp_path / "to-store"
    store_link.symlink_to(built / "graph.oxigraph")
    assert kg_place(store_link / "sub") == STORE
    assert kg_place(built) is None and kg_place(tmp_path / "graph.oxigraph") is None  # a folder of that name outside an output folder is anyone's
    assert within(link, built) and within(built / "x" / "..", built) and not within(tmp_path, built)
