import sqlite3

import pytest

from kg.cache import CACHE_FILE, ExtractionCache, content_key
from kg.errors import CacheError, ExitCode


def test_round_trip_and_miss(tmp_path):
    key = content_key("An abstract.", "v1")
    with ExtractionCache(tmp_path) as cache:
        assert cache.get_many([key]) == {}
        cache.put_many({key: {"mentions": [{"start": 0, "end": 2}]}})
    with ExtractionCache(tmp_path) as cache:  # survives reopening
        assert cache.get_many([key]) == {key: {"mentions": [{"start": 0, "end": 2}]}}
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
        cache.put_many({good: [1], bad: [2], garbled: [3]})
    db = sqlite3.connect(tmp_path / CACHE_FILE)
    with db:
        db.execute("UPDATE extraction SET payload = '[99]' WHERE key = ?", (bad,))
        db.execute("UPDATE extraction SET payload = '[3', checksum = ? WHERE key = ?", ("x", garbled))
    db.close()
    with ExtractionCache(tmp_path) as cache:
        assert cache.get_many([good, bad, garbled]) == {good: [1]}
        assert cache.corrupt == 2
        cache.put_many({bad: [2]})  # recomputed value replaces the damaged row
        assert cache.get_many([bad]) == {bad: [2]}


def test_unreadable_cache_file_is_a_clear_error(tmp_path):
    (tmp_path / CACHE_FILE).write_bytes(b"this is not a sqlite database" * 100)
    with pytest.raises(CacheError) as raised:
        ExtractionCache(tmp_path)
    assert raised.value.exit_code == ExitCode.CACHE_ERROR
    assert str(tmp_path / CACHE_FILE) in raised.value.message
