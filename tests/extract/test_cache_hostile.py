"""What a hostile review found in the shared cache: a row that is not UTF-8, a cache on a full
disk. Either must cost at most the time the cache saves, never the build."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from types import SimpleNamespace

import pytest

from kg.builder import BuildOptions, build
from kg.cli import main
from kg.extract.cache import CACHE_FILE


@pytest.fixture
def kg(capsys, monkeypatch):
    """`kg(*args, cache=FOLDER)`: the CLI in this process with KG_CACHE_DIR=FOLDER (spaCy is
    loaded once, not per command); its exit status, stdout and stderr."""

    def run(*args: str, cache: Path) -> SimpleNamespace:
        monkeypatch.setenv("KG_CACHE_DIR", str(cache))
        capsys.readouterr()
        status = main(list(args))
        out, err = capsys.readouterr()
        return SimpleNamespace(returncode=status or 0, stdout=out, stderr=err)

    return run


@pytest.fixture(scope="module")
def filled_cache(seeds, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("filled") / "cache"
    build([str(seeds)], folder.parent / "out", BuildOptions(cache_dir=folder))
    return folder


@pytest.mark.parametrize("row", ["first", "last"])
def test_a_row_that_is_not_utf8_is_a_miss_not_an_error(kg, filled_cache, seeds, tmp_path, row):
    cache = Path(shutil.copytree(filled_cache, tmp_path / "cache"))
    db = sqlite3.connect(cache / CACHE_FILE)
    pick = "min" if row == "first" else "max"
    with db:
        db.execute(f"UPDATE extraction SET payload = CAST(x'7bff7d' AS TEXT) WHERE rowid = (SELECT {pick}(rowid) FROM extraction)")
    db.close()
    done = kg("build", str(seeds), "-o", str(tmp_path / "out"), cache=cache)
    assert done.returncode == 0, done.stderr
    assert "  extraction         1  papers run through spaCy, 37 from the cache" in done.stdout
    assert "  warning            1  cache rows were damaged or did not fit their paper: computed again" in done.stdout
    info = kg("cache", "info", cache=cache)
    assert info.returncode == 0 and "Traceback" not in info.stderr, info.stderr
    assert kg("cache", "prune", cache=cache).returncode == 0


def test_a_full_disk_under_the_cache_warns_and_the_build_goes_on(kg, tmpfs, seeds, tmp_path):
    cache = tmpfs(200) / "cache"  # 200 kB: the seeds' extractions do not fit
    done = kg("build", str(seeds), "-o", str(tmp_path / "out"), "--embed", cache=cache)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "cannot take more" in done.stderr and "going on without writing to it this time" in done.stderr
    assert (tmp_path / "out" / "graph.json").is_file() and (tmp_path / "out" / "embeddings.npy").is_file()


def test_a_folder_where_the_cache_file_goes_is_moved_aside(kg, seeds, tmp_path):
    cache = tmp_path / "cache"
    (cache / CACHE_FILE).mkdir(parents=True)
    (cache / CACHE_FILE / "keep.txt").write_text("mine")
    done = kg("build", str(seeds), "-o", str(tmp_path / "out"), "-q", cache=cache)
    assert done.returncode == 0, done.stderr
    assert "moved it to extract.sqlite.damaged-" in done.stderr
    aside = [p for p in cache.iterdir() if p.name.startswith(f"{CACHE_FILE}.damaged-")]
    assert len(aside) == 1 and (aside[0] / "keep.txt").read_text() == "mine"  # nothing of it lost
    assert (cache / CACHE_FILE).is_file()


# -- what else a cache file may hold (issue 36) ---------------------------------------------------

PLANTED = {
    "a trigger that refuses every insert": "CREATE TRIGGER t BEFORE INSERT ON extraction BEGIN SELECT RAISE(ABORT, 'no'); END",
    "a trigger that deletes what is written": "CREATE TRIGGER wipe AFTER INSERT ON extraction BEGIN DELETE FROM extraction; END",
    "an index": "CREATE INDEX by_stamp ON extraction(stamp)",
    "a view": "CREATE VIEW v AS SELECT key FROM extraction",
    "another table": "CREATE TABLE notes (text TEXT)",
}


@pytest.mark.parametrize("sql", PLANTED.values(), ids=PLANTED.keys())
def test_a_schema_object_kg_does_not_make_costs_only_time(kg, filled_cache, seeds, tmp_path, sql: str) -> None:
    """A planted `BEFORE INSERT` trigger gave exit 16 `cannot write cache …`."""
    cache = Path(shutil.copytree(filled_cache, tmp_path / "cache"))
    db = sqlite3.connect(cache / CACHE_FILE)
    with db:
        db.execute(sql)
        db.execute("DELETE FROM extraction WHERE rowid = (SELECT min(rowid) FROM extraction)")  # one paper to compute and write
    db.close()
    done = kg("build", str(seeds), "-o", str(tmp_path / "out"), "-q", cache=cache)
    assert done.returncode == 0, done.stderr
    kind, name = sql.split()[1:3]
    assert f"could not be used (it holds a {kind.lower()} '{name}', which kg does not make); moved it to" in done.stderr
    assert len(list(cache.glob(f"{CACHE_FILE}.damaged-*"))) == 1
    again = kg("build", str(seeds), "-o", str(tmp_path / "out"), cache=cache)  # the new file took every paper
    assert again.returncode == 0 and "38 from the cache" in again.stdout, again.stdout + again.stderr


def test_a_trigger_planted_while_the_cache_is_open_sets_it_aside_at_the_write(tmp_path) -> None:
    import warnings

    from kg.errors import CacheSetAside
    from kg.extract.cache import ExtractionCache

    with ExtractionCache(tmp_path, validate=None) as cache:
        cache.put_many({"a": {"x": 1}})
        db = sqlite3.connect(tmp_path / CACHE_FILE)
        with db:
            db.execute("CREATE TRIGGER t BEFORE INSERT ON extraction BEGIN SELECT RAISE(ABORT, 'no'); END")
        db.close()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            cache.put_many({"b": {"x": 2}})  # exit 16 before: `cannot write cache …: no`
        assert [w.category for w in caught] == [CacheSetAside]
        assert cache.get_many(["b"]) == {"b": {"x": 2}}
