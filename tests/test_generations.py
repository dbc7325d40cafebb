"""A build is a transaction (`kg.generations`): the layout of out/, the switch, the lock, readers
that resolve one generation, the cleaning of what killed builds leave, and the migration of an
older kg's plain files. Builds here run in-process on tiny corpora with the rules alone
(`recognizer=None`); tests/test_build_kill.py kills real `kg build` processes."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kg.builder import OUTPUT_FILES, BuildOptions, build
from kg.cli import main
from kg.errors import ExitCode, OutputError, UserFileSetAside
from kg.extract.cache import CACHE_FILE
from kg.generations import KG_DIR, Generation, OutputLock, current_generation, resolve
from kg.graph import content_id

CORPUS_A = [
    {"id": "a1", "title": "Transformers", "abstract": "We propose the Transformer, built on attention, and train it on WMT with GPUs."},
    {"id": "a2", "title": "BERT", "abstract": "We introduce BERT, a bidirectional Transformer encoder evaluated on GLUE."},
]
CORPUS_B = [*CORPUS_A, {"id": "b1", "title": "ResNet", "abstract": "We train ResNet on ImageNet and report top-1 accuracy."}]


@pytest.fixture(autouse=True)
def _pinned_time(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")


def corpus(tmp_path: Path, name: str, records: list[dict]) -> str:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return str(path)


def visible(out: Path) -> dict[str, str | None]:
    """What a reader of out/NAME sees: SHA-256 of each output file, None where there is none."""
    seen: dict[str, str | None] = {}
    for name in OUTPUT_FILES:
        try:
            seen[name] = hashlib.sha256((out / name).read_bytes()).hexdigest()
        except (FileNotFoundError, IsADirectoryError):
            seen[name] = None
    return seen


def kg_entries(out: Path) -> list[str]:
    return sorted(os.listdir(out / KG_DIR))


@pytest.fixture
def corpora(tmp_path):
    return corpus(tmp_path, "a.jsonl", CORPUS_A), corpus(tmp_path, "b.jsonl", CORPUS_B)


def test_layout_stable_links_one_pointer_named_by_content(tmp_path, corpora, private_cache):
    out = tmp_path / "out"
    build([corpora[0]], out, BuildOptions(recognizer=None))
    for name in OUTPUT_FILES:
        assert os.readlink(out / name) == f".kg/current/{name}", name
    generation = current_generation(out)
    assert generation == f"gen-{content_id(out)[:16]}"  # graph.json names its generation
    assert kg_entries(out) == sorted(["current", generation, "lock"])
    # every output, plus graph.ttl's fragment index (a dot file: never linked)
    assert sorted(os.listdir(out / KG_DIR / generation)) == sorted([*OUTPUT_FILES, ".graph.ttl.fragments"])
    assert not (out / ".graph.ttl.fragments").exists()
    # the extraction cache is the user's (KG_CACHE_DIR here), in neither the folder nor a generation
    assert (private_cache / CACHE_FILE).is_file() and not (out / "cache").exists() and not (out / KG_DIR / generation / "cache").exists()


def test_a_rebuild_switches_and_keeps_only_the_previous_generation(tmp_path, corpora):
    a, b = corpora
    out, ref_a, ref_b = tmp_path / "out", tmp_path / "ref-a", tmp_path / "ref-b"
    build([a], ref_a, BuildOptions(recognizer=None))
    build([b], ref_b, BuildOptions(recognizer=None))
    build([a], out, BuildOptions(recognizer=None))
    first = current_generation(out)
    build([b], out, BuildOptions(recognizer=None))
    second = current_generation(out)
    assert visible(out) == visible(ref_b) and second != first
    assert kg_entries(out) == sorted(["current", first, second, "lock"])  # the replaced one stays
    build([a], out, BuildOptions(recognizer=None))
    assert visible(out) == visible(ref_a)
    assert kg_entries(out) == sorted(["current", current_generation(out), second, "lock"])  # first removed
    # The content is that of a build into a fresh folder: only the folder layout differs.
    assert visible(out) == visible(ref_a) != visible(ref_b)


def test_every_step_of_a_build_shows_readers_one_whole_build(tmp_path, corpora, monkeypatch):
    """After every rename the build makes (each file, the folder, each link, the pointer),
    out/ shows all of the previous build or all of the new one."""
    a, b = corpora
    out, ref_b = tmp_path / "out", tmp_path / "ref-b"
    build([b], ref_b, BuildOptions(recognizer=None))
    build([a], out, BuildOptions(recognizer=None))
    old, new = visible(out), visible(ref_b)
    seen, real_replace = [], os.replace

    def replace_and_look(src, dst, **kwargs):
        real_replace(src, dst, **kwargs)
        seen.append(visible(out))

    monkeypatch.setattr(os, "replace", replace_and_look)
    build([b], out, BuildOptions(recognizer=None))
    assert len(seen) > len(OUTPUT_FILES)  # every file's atomic write, then the switch
    assert all(state in (old, new) for state in seen)
    # One switch: the old build until it, the new one from it on (the store written after the
    # switch renames too, outside the output names).
    switch = seen.index(new)
    assert all(state == old for state in seen[:switch]) and all(state == new for state in seen[switch:])


def test_an_older_kg_output_folder_is_migrated_without_a_mixed_moment(tmp_path, corpora, monkeypatch):
    a, b = corpora
    legacy, ref_b = tmp_path / "legacy", tmp_path / "ref-b"
    build([a], tmp_path / "ref-a", BuildOptions(recognizer=None))
    build([b], ref_b, BuildOptions(recognizer=None))
    legacy.mkdir()
    for name in OUTPUT_FILES:  # what an older kg left: plain files, no .kg
        (legacy / name).write_bytes((tmp_path / "ref-a" / name).read_bytes())
    old, new = visible(legacy), visible(ref_b)
    seen, real_replace = [], os.replace

    def replace_and_look(src, dst, **kwargs):
        real_replace(src, dst, **kwargs)
        seen.append(visible(legacy))

    monkeypatch.setattr(os, "replace", replace_and_look)
    build([b], legacy, BuildOptions(recognizer=None))
    assert all(state in (old, new) for state in seen) and seen[-1] == new
    assert all(os.readlink(legacy / name) == f".kg/current/{name}" for name in OUTPUT_FILES)
    adopted = [n for n in kg_entries(legacy) if n.startswith("gen-") and n != current_generation(legacy)]
    assert adopted == [f"gen-{content_id(tmp_path / 'ref-a')[:16]}"]  # the old files, kept one build


def test_readers_read_every_file_from_the_generation_they_resolved(tmp_path, corpora, monkeypatch):
    """`kg related` reads graph.json's stamp and related.idx: if the pointer moves between the
    two reads, both still come from one generation (so the index is used, not found stale)."""
    import kg.related_work.rank as rel

    a, b = corpora
    out = tmp_path / "out"
    build([a], out, BuildOptions(recognizer=None))
    build([b], out, BuildOptions(recognizer=None))  # two generations on disk: current (b) and previous (a)
    current = current_generation(out)
    previous = next(n for n in kg_entries(out) if n.startswith("gen-") and n != current)
    real_load = rel.RelatedIndex.load

    def load_after_a_switch(path):
        os.replace(out / KG_DIR / "current", out / KG_DIR / "moved")  # another build switched
        os.symlink(previous, out / KG_DIR / "current")
        return real_load(path)

    monkeypatch.setattr(rel.RelatedIndex, "load", load_after_a_switch)
    index, source = rel.open_index(out)
    assert source == "index"  # related.idx matched the graph.json read before the switch
    assert "b1" in index.paper_ids  # …of generation b, the one current when the read began


def test_a_generation_folder_named_directly_keeps_its_caches_in_the_output_folder(tmp_path, corpora):
    out = tmp_path / "out"
    build([corpora[0]], out, BuildOptions(recognizer=None))
    generation = out / KG_DIR / current_generation(out)
    assert resolve(generation) == resolve(out) == resolve(out / "graph.json") == resolve(out / KG_DIR / "current")
    assert resolve(out).root == out and resolve(out).graph == generation / "graph.json"
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "graph.json").write_bytes((out / "graph.json").read_bytes())
    assert resolve(plain).folder == plain  # a graph.json saved by hand is read where it is


def test_sparql_store_cache_lives_outside_generations(tmp_path, corpora):
    from kg.rdf.store import STORE_DIR, open_store

    out = tmp_path / "out"
    build([corpora[0]], out, BuildOptions(recognizer=None))
    open_store(out)
    assert (out / STORE_DIR).is_dir()
    assert not any(STORE_DIR in n for n in os.listdir(out / KG_DIR / current_generation(out)))
    stamp = json.loads((out / STORE_DIR / "kg-stamp.json").read_text(encoding="utf-8"))
    assert stamp["content_id"] == content_id(out)


def test_a_second_build_fails_at_once_while_the_folder_is_locked(tmp_path, corpora, capsys):
    out = tmp_path / "out"
    build([corpora[0]], out, BuildOptions(recognizer=None))
    before = visible(out)
    with OutputLock(out):  # as a running build holds it
        status = main(["build", corpora[1], "-o", str(out), "--quiet", "--model", "none"])
    err = capsys.readouterr().err
    assert status == ExitCode.OUTPUT_LOCKED == 23
    assert err == (
        f"Error: {out}/ is being built by another kg build (which holds {out}/.kg/lock); "
        "wait for it to finish, or build into another folder (-o DIR)\n"
    )
    assert visible(out) == before and kg_entries(out) == sorted(["current", current_generation(out), "lock"])
    assert main(["build", corpora[1], "-o", str(out), "--quiet", "--model", "none"]) == 0  # released


def test_the_next_build_removes_what_killed_builds_left(tmp_path, corpora):
    a, b = corpora
    out = tmp_path / "out"
    build([a], out, BuildOptions(recognizer=None))
    state = out / KG_DIR
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    dead_pid = int(dead.stdout)  # a process that has ended
    stale = [
        state / "build-4242-0a1b2c3d",  # a build killed while writing
        state / "gen-0123456789abcdef",  # killed between the rename and the switch
        state / f"link-{dead_pid}-deadbeef.tmp",  # killed between making a link and renaming it
        out / ".graph.ttl.k3j2h1g0.tmp",  # an older kg killed during the Turtle write
        out / f".graph.html.{dead_pid}-abcdefgh.tmp",  # `kg html` killed while writing
        out / f".kg-probe.{dead_pid}-abcdefgh.tmp",
    ]
    for path in stale[:2]:
        path.mkdir()
        (path / "graph.json").write_text("{}", encoding="utf-8")
    os.symlink("gen-nowhere", stale[2])
    for path in stale[3:]:
        path.write_text("partial", encoding="utf-8")
    live = out / f".graph.html.{os.getpid()}-abcdefgh.tmp"  # a write in progress (this process)
    live.write_text("partial", encoding="utf-8")
    unrelated = out / ".notes.abcdefgh.tmp"  # not a name kg writes, no pid: not ours to remove
    unrelated.write_text("mine", encoding="utf-8")
    previous = current_generation(out)
    build([b], out, BuildOptions(recognizer=None))
    assert [p for p in stale if os.path.lexists(p)] == []
    assert live.exists() and unrelated.exists()
    assert kg_entries(out) == sorted(["current", current_generation(out), previous, "lock"])


def test_kg_html_over_the_link_writes_a_page_and_the_next_build_links_it_again(tmp_path, corpora, capsys):
    a, b = corpora
    out = tmp_path / "out"
    build([a], out, BuildOptions(recognizer=None))
    generation_page = (out / KG_DIR / current_generation(out) / "graph.html").read_bytes()
    assert main(["html", "--graph", str(out), "--min-papers", "2"]) == 0
    assert not (out / "graph.html").is_symlink()  # a page of its own; the generation is untouched
    assert (out / KG_DIR / current_generation(out) / "graph.html").read_bytes() == generation_page
    with pytest.warns(UserFileSetAside, match=r"graph\.html was not written by kg; renamed it graph\.html\.user-"):
        build([b], out, BuildOptions(recognizer=None))  # the page of its own is kept under another name
    assert os.readlink(out / "graph.html") == ".kg/current/graph.html"
    assert [p.name.startswith("graph.html.user-") for p in out.glob("graph.html.*")] == [True]


def test_a_folder_where_an_output_link_goes_is_one_error_and_changes_nothing(tmp_path, corpora, capsys):
    out = tmp_path / "out"
    build([corpora[0]], out, BuildOptions(recognizer=None))
    before = visible(out)
    (out / "graph.ttl").unlink()
    (out / "graph.ttl").mkdir()  # someone's folder where the Turtle link was
    assert main(["build", corpora[1], "-o", str(out), "--quiet", "--model", "none"]) == ExitCode.OUTPUT_ERROR
    assert capsys.readouterr().err == f"Error: cannot write {out}/graph.ttl: it is a folder\n"
    with pytest.raises(OutputError, match="graph.ttl: it is a folder"):  # also when found at the switch
        with Generation(out) as generation:
            (generation.folder / "graph.ttl").write_text("x", encoding="utf-8")
            generation.publish()
    assert {k: v for k, v in visible(out).items() if k != "graph.ttl"} == {k: v for k, v in before.items() if k != "graph.ttl"}
    assert kg_entries(out) == sorted(["current", current_generation(out), "lock"])  # no folder left behind


def test_clean_stale_removes_store_folders_of_killed_builds_only(tmp_path) -> None:
    """A build killed while making or swapping the SPARQL store leaves `.graph.oxigraph.<pid>.tmp`
    (or `.old`): removed once that process is gone, kept while it runs."""
    import os

    from kg.generations import clean_stale

    (tmp_path / ".kg").mkdir()
    dead = tmp_path / ".graph.oxigraph.999999999.tmp"
    swapped = tmp_path / ".graph.oxigraph.999999999.old"
    running = tmp_path / f".graph.oxigraph.{os.getpid()}.tmp"
    for folder in (dead, swapped, running):
        folder.mkdir()
        (folder / "000001.sst").write_bytes(b"x")
    removed = clean_stale(tmp_path, ["graph.json"])
    assert sorted(removed) == sorted([dead, swapped])
    assert running.is_dir() and not dead.exists() and not swapped.exists()
