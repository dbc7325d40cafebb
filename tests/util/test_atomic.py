import os
import stat

import pytest

from kg.util.atomic import atomic_open, write_text


def test_written_file_gets_normal_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        write_text(tmp_path / "a.txt", "hello")
    finally:
        os.umask(old)
    assert (tmp_path / "a.txt").read_text() == "hello"
    assert stat.S_IMODE((tmp_path / "a.txt").stat().st_mode) == 0o644


def test_crash_mid_write_keeps_the_previous_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "graph.json"
    write_text(target, "previous")
    with pytest.raises(RuntimeError):
        with atomic_open(target) as handle:
            handle.write("half of the new")
            raise RuntimeError("crash")
    assert target.read_text() == "previous"
    assert [p.name for p in tmp_path.iterdir()] == ["graph.json"]


def test_device_targets_are_written_in_place_not_replaced(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        write_text(fifo, "through the pipe")
        assert os.read(reader, 100) == b"through the pipe"
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(fifo.stat().st_mode)  # still a pipe, not a regular file
    write_text("/dev/null", "discarded")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
