import os
import sqlite3
import warnings

import pytest

from kg.errors import CacheError, CacheSetAside, ExitCode
from kg.extract.cache import CACHE_FILE, ExtractionCache, _checksum, content_key, valid_extraction

MENTION = {
    "start": 0, "end": 4, "text": "BERT", "label": "METHOD", "key": "bert", "vocab": None, "role": "used",
    "source": "lexicon", "score": 1.0, "sent_start": 0, "sent_end": 20, "confidence": 1.0, "where": "abstract", "model_confidence": None,
}
DEFINITION = {"short": "GAN", "long": "generative adversarial network", "label": "METHOD"}
VALUE = {"mentions": [MENTION], "definitions": [DEFINITION], "claims": []}
EMPTY = {"mentions": [], "definitions": [], "claims": []}


def test_round_trip_and_miss(tmp_path):
    key = content_key("An abstract.", "v1")
    with ExtractionCache(tmp_path) as cache:
        assert cache.get_many([key]) == {}
        cache.put_many({key: VALUE})
    with ExtractionCache(tmp_path) as cache:  # survives reopening
        assert cache.get_many([key]) == {key: VALUE}
        assert cache.corrupt == 0


def test_key_depends_on_text_and_pipeline_version():
    assert content_key("a", "v1") != content_key("a", "v2")
    assert content_key("a", "v1") != content_key("b", "v1")
    assert content_key("a", "v1") == content_key("a", "v1")
    # No ambiguity between the two parts of the key.
    assert content_key("b", "va") != content_key("ab", "v")


def test_tampered_row_is_a_miss_and_counted(tmp_path):
    good, bad, garbled = (content_key(t, "v1") for t in ("good", "bad", "garbled"))
    with ExtractionCache(tmp_path) as cache:
        cache.put_many({good: VALUE, bad: EMPTY, garbled: EMPTY})
    db = sqlite3.connect(tmp_path / CACHE_FILE)
    with db:
        db.execute("UPDATE extraction SET payload = '[99]' WHERE key = ?", (bad,))
        db.execute("UPDATE extraction SET payload = '[3', checksum = ? WHERE key = ?", ("x", garbled))
    db.close()
    with ExtractionCache(tmp_path) as cache:
        assert cache.get_many([good, bad, garbled]) == {good: VALUE}
        assert cache.corrupt == 2
        cache.put_many({bad: EMPTY})  # recomputed value replaces the damaged row
        assert cache.get_many([bad]) == {bad: EMPTY}


FORGED = [
    pytest.param({}, id="empty-object"),
    pytest.param([], id="a-list"),
    pytest.param({"mentions": []}, id="no-definitions"),
    pytest.param({**EMPTY, "extra": 1}, id="extra-field"),
    pytest.param({"mentions": "BERT", "definitions": [], "claims": []}, id="mentions-not-a-list"),
    pytest.param({"mentions": [{**MENTION, "label": "WEAPON"}], "definitions": [], "claims": []}, id="unknown-label"),
    pytest.param({"mentions": [{**MENTION, "role": "stolen"}], "definitions": [], "claims": []}, id="unknown-role"),
    pytest.param({"mentions": [{**MENTION, "start": "0"}], "definitions": [], "claims": []}, id="offset-as-text"),
    pytest.param({"mentions": [{**MENTION, "start": True}], "definitions": [], "claims": []}, id="offset-as-boolean"),
    pytest.param({"mentions": [{**MENTION, "start": 5, "end": 2}], "definitions": [], "claims": []}, id="backwards-span"),
    pytest.param({"mentions": [{**MENTION, "start": -1}], "definitions": [], "claims": []}, id="negative-offset"),
    pytest.param({"mentions": [{k: v for k, v in MENTION.items() if k != "key"}], "definitions": [], "claims": []}, id="mention-missing-field"),
    pytest.param({"mentions": [], "definitions": [{**DEFINITION, "long": None}], "claims": []}, id="definition-wrong-type"),
    pytest.param({"mentions": [None], "definitions": [], "claims": []}, id="mention-null"),
]


@pytest.mark.parametrize("forged", FORGED)
def test_a_row_of_the_wrong_shape_is_recomputed_even_with_a_valid_checksum(tmp_path, forged):
    key = content_key("forged", "v1")
    with ExtractionCache(tmp_path):
        pass
    payload = __import__("json").dumps(forged)
    with sqlite3.connect(tmp_path / CACHE_FILE) as db:
        db.execute("INSERT INTO extraction (key, checksum, payload) VALUES (?, ?, ?)", (key, _checksum(payload), payload))
    db.close()
    assert not valid_extraction(forged)
    with ExtractionCache(tmp_path) as cache:
        assert cache.get_many([key]) == {}
        assert cache.corrupt == 1


def test_validation_can_be_turned_off_for_other_values(tmp_path):
    key = content_key("x", "v1")
    with ExtractionCache(tmp_path, validate=None) as cache:
        cache.put_many({key: [1, 2]})
        assert cache.get_many([key]) == {key: [1, 2]}


def _random_bytes(path):
    path.write_bytes(os.urandom(8192))


def _not_a_database(path):
    path.write_bytes(b"this is not a sqlite database" * 100)


def _truncated(path):
    with ExtractionCache(path.parent) as cache:
        cache.put_many({content_key(f"abstract {i}", "v1"): VALUE for i in range(2000)})
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])


def _header_only(path):
    with ExtractionCache(path.parent) as cache:
        cache.put_many({content_key(f"abstract {i}", "v1"): VALUE for i in range(2000)})
    path.write_bytes(path.read_bytes()[:100])


def _wrong_table(path):
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE extraction (key TEXT, value BLOB)")
    db.close()


def _dropped_table(path):
    with ExtractionCache(path.parent) as cache:
        cache.put_many({content_key("a", "v1"): VALUE})
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE extraction")
    db.close()


def _view_instead(path):
    with sqlite3.connect(path) as db:
        db.execute("CREATE VIEW extraction AS SELECT 1 AS key, 2 AS checksum, 3 AS payload")
    db.close()


DAMAGE = [
    pytest.param(_random_bytes, True, id="random-bytes"),
    pytest.param(_not_a_database, True, id="not-a-database"),
    pytest.param(_truncated, True, id="truncated"),
    pytest.param(_header_only, True, id="header-only"),
    pytest.param(_wrong_table, True, id="table-of-the-wrong-shape"),
    pytest.param(_view_instead, True, id="a-view-for-the-table"),
    pytest.param(_dropped_table, False, id="dropped-table"),  # recreated in place: nothing to set aside
]


@pytest.mark.parametrize(("damage", "moved"), DAMAGE)
def test_a_damaged_cache_file_is_set_aside_with_a_warning_and_rebuilt(tmp_path, damage, moved):
    path = tmp_path / CACHE_FILE
    damage(path)
    keys = [content_key(f"abstract {i}", "v1") for i in range(2000)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with ExtractionCache(tmp_path) as cache:
            found = cache.get_many(keys)  # a truncation may show only now
            assert all(value == VALUE for value in found.values())  # whatever survived was checked
            cache.put_many({key: EMPTY for key in keys[:10]})
            assert cache.get_many(keys[:10]) == {key: EMPTY for key in keys[:10]}
    aside = sorted(p.name for p in tmp_path.iterdir() if ".damaged-" in p.name)
    messages = [str(w.message) for w in caught if issubclass(w.category, CacheSetAside)]
    if moved:
        assert len(aside) == 1 and aside[0].startswith(f"{CACHE_FILE}.damaged-")
        assert len(messages) == 1 and messages[0].startswith(f"cache {path} could not be used (")
        assert messages[0].endswith(f"moved it to {aside[0]} and started a new one")
    else:
        assert aside == [] and messages == []
    with ExtractionCache(tmp_path) as cache:  # the new file is sound
        assert cache.get_many(keys[:10]) == {key: EMPTY for key in keys[:10]}


def test_a_damaged_cache_does_not_stop_a_build(tmp_path, monkeypatch, capsys):
    from kg.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.jsonl").write_text('{"id": "a", "abstract": "We train a convolutional network on ImageNet."}\n', encoding="utf-8")
    (tmp_path / "cache").mkdir()
    _random_bytes(tmp_path / "cache" / CACHE_FILE)
    assert main(["build", "c.jsonl", "-o", "out", "--quiet", "--model", "none", "--cache", "cache"]) == 0
    err = capsys.readouterr().err
    assert f"Warning: cache {os.path.join('cache', CACHE_FILE)} could not be used (file is not a database)" in err
    assert "Traceback" not in err
    assert (tmp_path / "out" / "graph.ttl").is_file()


def test_a_cache_folder_that_cannot_be_made_is_a_clear_error(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(CacheError) as raised:
        ExtractionCache(tmp_path / "file" / "cache")
    assert raised.value.exit_code == ExitCode.CACHE_ERROR
    assert str(tmp_path / "file" / "cache" / CACHE_FILE) in raised.value.message
