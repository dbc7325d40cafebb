"""Damaged outputs get one line, or repair (issue 23): a truncated graph.json, a dangling
.kg/current, and a SPARQL store whose files are damaged (rebuilt from the build's files)."""

from __future__ import annotations

import os
import random
import shutil
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from kg.cli import main
from kg.errors import ExitCode
from kg.rdf.store import STORE_DIR

COUNT = "SELECT (COUNT(*) AS ?n) WHERE { ?p a fabio:ResearchPaper }"


@pytest.fixture
def out(seeds_out, tmp_path) -> Path:
    """A copy of the seeds build with its generations and links as kg writes them."""
    return Path(shutil.copytree(seeds_out, tmp_path / "out", symlinks=True))


def generation_file(out: Path, name: str) -> Path:
    return Path(os.path.realpath(out / name))


@pytest.mark.parametrize("command", [
    ["sparql", COUNT, "--backend", "rdflib"],
    ["html", "-o", "{tmp}/page.html"],
    ["export", "-o", "{tmp}/graph.nt", "--format", "nt"],
])
@pytest.mark.parametrize("damage", ["truncated", "not-json", "wrong-shape", "binary"])
def test_a_damaged_graph_json_is_one_line_naming_it(out, tmp_path, capsys, command: list[str], damage: str) -> None:
    """A truncated graph.json gave JSONDecodeError tracebacks in kg sparql, kg html and kg export."""
    graph = generation_file(out, "graph.json")
    data = graph.read_bytes()
    graph.chmod(0o644)
    graph.write_bytes({"truncated": data[: len(data) // 2], "not-json": b"{" + b"x" * 300, "wrong-shape": data[:300].split(b'"content_id"')[0] + b'"format":"kg-graph","nodes":7}',
                       "binary": b"\xff\xfe\x00" * 100}[damage])
    code = main([part.replace("{tmp}", str(tmp_path)) for part in command] + ["--graph", str(out)])
    assert code == ExitCode.GRAPH_NOT_FOUND
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("Error: ") and "graph.json is damaged (" in err and err.endswith(f"; rebuild it: `kg build INPUT… -o {out}`\n")


def test_kg_html_of_a_damaged_graph_file(out, tmp_path, capsys) -> None:
    broken = tmp_path / "graph.json"
    broken.write_bytes(generation_file(out, "graph.json").read_bytes()[:1000])
    assert main(["html", "--graph", str(broken), "-o", str(tmp_path / "page.html")]) == ExitCode.GRAPH_NOT_FOUND
    assert capsys.readouterr().err.startswith(f"Error: {broken} is damaged (not valid JSON at line 1, column ")
    assert not (tmp_path / "page.html").exists()


def test_a_dangling_current_names_the_output_folder(out, capsys) -> None:
    """The hint named the missing generation folder as the one to build into."""
    shutil.rmtree(os.path.realpath(out / ".kg" / "current"))
    assert main(["sparql", COUNT, "--graph", str(out), "--backend", "rdflib"]) == ExitCode.GRAPH_NOT_FOUND
    err = capsys.readouterr().err
    assert err.startswith(f"Error: no graph at {out / 'graph.json'}: its current build ") and err.endswith(f" is missing; run `kg build INPUT… -o {out}` first\n")


def _scramble(store: Path, where: str) -> None:
    rng = random.Random(3)
    for table in sorted(store.glob("*.sst")):
        data = bytearray(table.read_bytes())
        for _ in range(64):
            i = rng.randrange(len(data) - 64, len(data)) if where == "footer" else rng.randrange(len(data))
            data[i] ^= 0xA5
        table.write_bytes(bytes(data))


def test_a_store_that_fails_to_open_is_rebuilt(out, capsys) -> None:
    """Random bytes in the store's .sst files (stamp intact) failed every kg sparql --backend
    oxigraph with a `Corruption` traceback; the store was never rebuilt."""
    assert main(["sparql", COUNT, "--graph", str(out), "--backend", "oxigraph"]) in (None, 0)
    expected = capsys.readouterr().out
    _scramble(out / STORE_DIR, "footer")
    assert main(["sparql", COUNT, "--graph", str(out), "--backend", "oxigraph"]) in (None, 0)
    captured = capsys.readouterr()
    assert captured.out == expected and captured.err == ""


class _CorruptOnce:
    """A store whose first query fails as RocksDB reports a damaged block."""

    def __init__(self, store) -> None:
        self.store, self.failed = store, False

    def query(self, *args, **kwargs):
        raise RuntimeError("Corruption: block checksum mismatch: stored = 1, computed = 2 in graph.oxigraph/000010.sst")


def test_a_store_that_fails_its_first_query_is_rebuilt_and_asked_again(out, capsys, monkeypatch) -> None:
    import kg.rdf.store as store_module
    import kg.sparql.engine as engine

    assert main(["sparql", COUNT, "--graph", str(out), "--backend", "oxigraph"]) in (None, 0)
    expected = capsys.readouterr().out
    real_open = engine.open_store
    monkeypatch.setattr(engine, "open_store", lambda *a, **k: _CorruptOnce(real_open(*a, **k)))
    repaired = []
    real_repair = store_module.repair_store
    monkeypatch.setattr(engine, "repair_store", lambda *a, **k: repaired.append(1) or real_repair(*a, **k))
    assert main(["sparql", COUNT, "--graph", str(out), "--backend", "oxigraph"]) in (None, 0)
    assert capsys.readouterr().out == expected and repaired == [1]


def test_a_store_that_cannot_be_repaired_is_one_line(out, capsys, monkeypatch) -> None:
    import kg.sparql.engine as engine
    from kg.errors import OutputError

    real_open = engine.open_store
    monkeypatch.setattr(engine, "open_store", lambda *a, **k: _CorruptOnce(real_open(*a, **k)))

    def cannot(*args, **kwargs):
        raise OutputError(f"cannot write {out / STORE_DIR}: no space left on device")

    monkeypatch.setattr(engine, "repair_store", cannot)
    assert main(["sparql", COUNT, "--graph", str(out), "--backend", "oxigraph"]) == ExitCode.QUERY_FAILED
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("Error: the SPARQL store is damaged (Corruption: block checksum mismatch") and ", and rebuilding it failed: cannot write" in err


def test_kg_serve_repairs_a_damaged_store(out) -> None:
    from kg.sparql.serve import endpoint_url, make_server, serve_in_thread

    server = make_server(out, port=0, workers=1)
    thread = serve_in_thread(server)
    url = endpoint_url(server) + "?" + urllib.parse.urlencode({"query": COUNT})
    try:
        with urllib.request.urlopen(url, timeout=20) as response:
            before = response.read()
        _scramble(out / STORE_DIR, "all")
        os.utime(out / "graph.json")  # nothing else changes: the same generation, its store damaged
        for pid in server.pool.pids():  # a fresh worker opens the damaged files
            os.kill(pid, 9)
        deadline = 30
        import time

        started = time.monotonic()
        while True:
            try:
                with urllib.request.urlopen(url, timeout=20) as response:
                    assert response.read() == before
                    break
            except urllib.error.HTTPError as error:
                assert error.code in (500, 503) and time.monotonic() - started < deadline, error.read()
                time.sleep(0.2)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_a_serve_worker_repairs_a_store_that_fails_a_query(out, monkeypatch) -> None:
    import kg.sparql.serve as serve

    state = serve.open_worker_store(str(out), serve.DEFAULT_BASE)
    good = state.current()
    calls = []

    class Damaged:
        def query(self, *args, **kwargs):
            raise RuntimeError("Corruption: block checksum mismatch in 000010.sst")

    state._store = Damaged()
    monkeypatch.setattr(serve, "repair_store", lambda *a, **k: calls.append(a))
    media, body = serve.answer(state, (COUNT, "text/csv"))
    assert calls and media == "text/csv" and body.splitlines()[1] == b"38"
    del good
