"""Where outputs and caches may live (issue 36, items 2 and 8, and its hostile review): one rule
(`kg.util.places`). An OUT/.kg that is a link was written through and the entries of the folder
it named were deleted; -o into the cache folder, --cache inside a published generation and
-o out/graph.oxigraph were accepted; then bind mounts (another real path and name for the same
folder) led around the rule, a .kg swapped for a link after the checks was removed through, and
`kg export -o` replaced a cache's database or the store's lock. Bind mounts need root: skipped elsewhere."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
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


# -- the hostile review of issue 36: bind mounts, a .kg swapped after the checks, the files of a
# cache folder and the store's lock, a cache inside a first build's store ----------------------


def test_places_are_known_by_the_marks_kg_leaves_whatever_their_name(built, tmp_path) -> None:
    """A bind mount of out/.kg or of the store has another name and real path: what it holds
    says what it is (the `current` link, a generation's fragment index, the store's stamp)."""
    from kg.util.places import CACHE, FRAGMENTS, STORE_STAMP

    state = tmp_path / "state-copy"
    state.mkdir()
    (state / "current").symlink_to("gen-0123")
    generation = tmp_path / "generation-copy"
    generation.mkdir()
    for name in ("graph.json", FRAGMENTS):
        (generation / name).write_bytes((built / ".kg" / "current" / name).read_bytes())
    store = tmp_path / "store-copy"
    store.mkdir()
    (store / STORE_STAMP).write_text("{}", encoding="utf-8")
    cache = tmp_path / "cache-copy"
    cache.mkdir()
    (cache / "extract.sqlite").write_bytes(b"")
    assert kg_place(state / "x") == kg_place(generation) == BUILDS and kg_place(store / "x" / "y") == STORE
    assert kg_place(cache / "x") is None and kg_place(cache / "x", caches=True) == CACHE
    assert kg_place(built) is None and kg_place(tmp_path) is None  # an output folder itself, and what holds it, are the user's


def test_the_names_places_knows_are_the_ones_kg_writes() -> None:
    from kg.extract.cache import CACHE_FILE as EXTRACT_CACHE
    from kg.rdf.fragments import index_path
    from kg.rdf.store import LOCK_FILE, STAMP_FILE
    from kg.related_work.embed import CACHE_FILE as EMBED_CACHE
    from kg.util.places import CACHE_FILES, FRAGMENTS, STORE_LOCK, STORE_STAMP

    assert index_path("x/graph.ttl").name == FRAGMENTS and (STAMP_FILE, LOCK_FILE) == (STORE_STAMP, STORE_LOCK)
    assert set(CACHE_FILES) == {EXTRACT_CACHE, EMBED_CACHE}


@pytest.fixture
def bind(tmp_path) -> Iterator[Callable[[Path, Path], Path]]:
    """`mount --bind SOURCE TARGET` (root only; skipped elsewhere), undone after the test."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("needs root to bind-mount")
    mounted: list[Path] = []

    def mount(source: Path, target: Path) -> Path:
        target.mkdir(parents=True, exist_ok=True)
        if subprocess.run(["mount", "--bind", str(source), str(target)], capture_output=True).returncode != 0:
            pytest.skip("bind mounts are not allowed here")
        mounted.append(target)
        return target

    yield mount
    for target in reversed(mounted):
        subprocess.run(["umount", str(target)], check=False)


def test_o_a_bind_mount_of_the_cache_folder_is_refused(tmp_path, corpus, bind, capsys) -> None:
    """The rule compared real paths and names: `-o` the bind of the cache folder built among
    extract.sqlite (exit 0)."""
    cache = tmp_path / "cache"
    cache.mkdir()
    alias = bind(cache, tmp_path / "alias")
    code = main(["build", str(corpus), "-o", str(alias), "--cache", str(cache), "--model", "none", "-q"])
    assert code == ExitCode.OUTPUT_ERROR, capsys.readouterr().err
    assert capsys.readouterr().err == f"Error: cannot write {alias}: it is kg's cache folder {cache} (as asked); build into another folder\n"
    assert not (cache / "graph.json").exists()


def test_same_and_within_see_a_bind_mount(tmp_path, bind) -> None:
    from kg.util.places import same

    cache = tmp_path / "cache"
    (cache / "sub").mkdir(parents=True)
    alias = bind(cache, tmp_path / "alias")
    assert same(alias, cache) and not same(alias, tmp_path) and same(tmp_path / "new", tmp_path / "new")
    assert within(alias / "sub" / "x", cache) and within(alias, cache / ".") and not within(tmp_path, cache)


def test_a_bind_mount_of_a_builds_state_or_store_is_still_kgs(built, tmp_path, corpus, bind, capsys) -> None:
    """A cache under a bind of out/.kg was accepted; `kg export -o BIND/x.nt` with BIND a bind of
    the store wrote into the store."""
    before = tree(built)
    state, store = bind(built / ".kg", tmp_path / "bk"), bind(built / "graph.oxigraph", tmp_path / "bs")
    assert main(["build", str(corpus), "-o", str(tmp_path / "other"), "--cache", str(state / "c"), "--model", "none", "-q"]) == ExitCode.CACHE_ERROR
    assert f"is inside {BUILDS}" in capsys.readouterr().err
    assert main(["export", "--graph", str(built), "-o", str(store / "x.nt"), "-f", "nt"]) == ExitCode.OUTPUT_ERROR
    assert f"it is inside {STORE}" in capsys.readouterr().err
    assert main(["html", "--graph", str(built), "-o", str(state / "current" / "x.html")]) == ExitCode.OUTPUT_ERROR
    assert f"it is inside {BUILDS}" in capsys.readouterr().err
    assert tree(built) == before and not (tmp_path / "other").exists()


def test_an_input_folder_bound_as_the_output_folder_is_refused(tmp_path, corpus, bind, capsys) -> None:
    alias = bind(corpus, tmp_path / "alias")
    assert main(["build", str(corpus), "-o", str(alias), "--model", "none", "-q"]) == ExitCode.OUTPUT_ERROR
    assert capsys.readouterr().err.startswith(f"Error: cannot write {alias}: it is the input folder {corpus}")


@pytest.fixture
def swap_after_check(monkeypatch, victim) -> Callable[..., list[int]]:
    """Make ``OUT/.kg`` a link to the victim right after the next call of `step` in
    kg.generations (default: the check that it is no link; the race of the review: the checks
    were on paths, the removals through them)."""
    import kg.generations as generations

    def arm(out: Path, step: str = "refuse_linked_state") -> list[int]:
        real_step, swaps = getattr(generations, step), []

        def step_then_swap(*args):
            found = real_step(*args)
            if not swaps:
                os.rename(out / ".kg", out / "moved")
                (out / ".kg").symlink_to(victim)
                swaps.append(1)
            return found

        monkeypatch.setattr(generations, step, step_then_swap)
        return swaps

    return arm


def test_a_dot_kg_swapped_for_a_link_after_the_check_loses_the_victim_nothing_in_clean_stale(tmp_path, victim, swap_after_check) -> None:
    out = tmp_path / "out"
    (out / ".kg" / "build-999-dead").mkdir(parents=True)
    before = tree(victim)
    swaps = swap_after_check(out)
    with contextlib.suppress(OutputError):  # refused, or done in the folder that was checked
        clean_stale(out, ["graph.json"])
    assert swaps and tree(victim) == before


def test_a_dot_kg_swapped_for_a_link_before_publishing_loses_the_victim_nothing(tmp_path, victim, swap_after_check) -> None:
    out = tmp_path / "out"
    with Generation(out) as first:
        (first.folder / "graph.json").write_text("{}", encoding="utf-8")
        first.publish()
    before = tree(victim)
    with contextlib.suppress(OutputError), Generation(out) as second:
        (second.folder / "graph.json").write_text('{"a": 1}', encoding="utf-8")
        swaps = swap_after_check(out, "content_id")  # after publish's own checks
        second.publish()  # removes older generations: only in the folder it made its build in
    assert swaps and tree(victim) == before
    assert not any(name.startswith("build-") for name in os.listdir(out / "moved"))


def test_a_dot_kg_swapped_for_a_link_while_held_is_never_touched(tmp_path, victim) -> None:
    from kg.util.places import hold

    out = tmp_path / "out"
    (out / ".kg" / "build-999-dead").mkdir(parents=True)
    before = tree(victim)
    with hold(out) as (folder, state):
        assert state is not None
        os.rename(out / ".kg", out / "moved")
        (out / ".kg").symlink_to(victim)
        state.remove("build-999-dead")
        state.symlink_over("gen-x", "current")
    assert tree(victim) == before and sorted(os.listdir(out / "moved")) == ["current"]
    with pytest.raises(OutputError, match=r"\.kg is a symbolic link"), hold(out):
        pass


@pytest.mark.parametrize("target", ["cache file", "cache folder in use", "store lock", ".kg lock"])
def test_kg_export_replaces_no_file_of_a_cache_folder_or_a_store(built, tmp_path, monkeypatch, capsys, target: str) -> None:
    """`kg export -o CACHE/extract.sqlite` replaced the cache database and `-o out/graph.oxigraph.lock`
    the store's lock (exit 0)."""
    cache = tmp_path / "cache"
    build([str(tmp_path / "in")], tmp_path / "first", BuildOptions(recognizer=None, cache_dir=cache))
    monkeypatch.setenv("KG_CACHE_DIR", str(cache))
    path = {
        "cache file": cache / "extract.sqlite",
        "cache folder in use": cache / "sub" / "x.ttl",
        "store lock": built / "graph.oxigraph.lock",
        ".kg lock": built / ".kg" / "lock",
    }[target]
    before = tree(cache), tree(built)
    assert main(["export", "--graph", str(built), "-o", str(path)]) == ExitCode.OUTPUT_ERROR
    err = capsys.readouterr().err
    assert err.startswith(f"Error: cannot write {path}: it is ") and err.count("\n") == 1
    assert (tree(cache), tree(built)) == before and not (cache / "sub").exists()


@pytest.mark.parametrize("inside", ["graph.oxigraph", ".kg/c"])
def test_a_cache_folder_inside_a_first_builds_store_or_state_is_refused(tmp_path, corpus, capsys, inside: str) -> None:
    """A first build into a fresh folder accepted `--cache fresh/graph.oxigraph` (then set the
    cache aside as graph.oxigraph.user-…): the folder was not an output folder yet."""
    fresh = tmp_path / "fresh"
    assert main(["build", str(corpus), "-o", str(fresh), "--cache", str(fresh / inside), "--model", "none", "-q"]) == ExitCode.CACHE_ERROR
    place = STORE if inside == "graph.oxigraph" else BUILDS
    assert capsys.readouterr().err.startswith(f"Error: cache folder {fresh / inside} (from --cache) is inside {place}; choose another")
    assert not fresh.exists()
