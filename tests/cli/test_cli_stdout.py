"""Standard output that loses nothing (issue 36, item 1): a short write to a nearly full disk is
written again until every byte is out or the disk says why not (exit 18); `kg sparql … >
/full/disk/q.csv` exited 0 with the first 1,048,576 of 2,390,189 bytes."""

from __future__ import annotations

import errno
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kg.cli import main
from kg.cli.stdout import CheckedWriter, checked_stdout
from kg.errors import ExitCode

EVERY_ROW = "SELECT * WHERE { ?s ?p ?o }"
ORDERED = "SELECT ?s ?p ?o WHERE { ?s ?p ?o } ORDER BY ?s ?p ?o"  # the same bytes run to run, to compare
FULL = "Error: cannot write the output: No space left on device\n"


class ShortWrites(io.RawIOBase):
    """A raw stream that takes at most `most` bytes per write (as write(2) does on a nearly full
    disk), and after `room` bytes in all raises ENOSPC (None: room for everything)."""

    def __init__(self, most: int, room: int | None = None) -> None:
        super().__init__()
        self.most, self.room = most, room
        self.data = bytearray()
        self.calls = 0

    def writable(self) -> bool:
        return True

    def write(self, b) -> int:
        self.calls += 1
        left = len(b) if self.room is None else self.room - len(self.data)
        if left <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        taken = bytes(b[: min(self.most, left, len(b))])
        self.data += taken
        return len(taken)


def test_the_writer_writes_the_rest_after_every_short_write() -> None:
    sink = ShortWrites(most=1000)
    writer = CheckedWriter(sink.write)
    data = bytes(range(256)) * 40
    assert writer.write(data) == len(data)
    assert bytes(sink.data) == data and sink.calls == 11


def test_the_writer_raises_what_the_disk_says_after_a_short_write() -> None:
    sink = ShortWrites(most=1 << 20, room=1000)
    with pytest.raises(OSError) as raised:
        CheckedWriter(sink.write).write(b"x" * 5000)
    assert raised.value.errno == errno.ENOSPC and len(sink.data) == 1000


def test_a_sink_that_takes_nothing_is_an_error_not_a_loop() -> None:
    with pytest.raises(OSError) as raised:
        CheckedWriter(lambda chunk: 0).write(b"abc")
    assert raised.value.errno == errno.EIO


def test_an_abandoned_writer_drops_what_is_left() -> None:
    sink = ShortWrites(most=10)
    writer = CheckedWriter(sink.write)
    writer.abandon()
    assert writer.write(b"x" * 100) == 100 and not sink.data


def test_checked_stdout_keeps_the_streams_settings_and_puts_it_back(monkeypatch) -> None:
    sink = ShortWrites(most=7)
    original = io.TextIOWrapper(sink, encoding="latin-1", errors="replace", line_buffering=True)
    monkeypatch.setattr(sys, "stdout", original)
    with checked_stdout() as writer:
        assert writer is not None and sys.stdout is not original
        assert (sys.stdout.encoding, sys.stdout.errors, sys.stdout.line_buffering) == ("latin-1", "replace", True)
        print("café ☃")
    assert sys.stdout is original
    assert bytes(sink.data) == "café ?\n".encode("latin-1")


@pytest.fixture
def out(seeds_out, tmp_path) -> Path:
    return Path(shutil.copytree(seeds_out, tmp_path / "out", symlinks=True))


def expected(args: list[str]) -> bytes:
    done = subprocess.run([sys.executable, "-m", "kg", *args], capture_output=True, timeout=300, check=True)
    assert len(done.stdout) > 4096
    return done.stdout


COMMANDS = [
    ["sparql", "--format", "csv", ORDERED, "--backend", "rdflib"],
    ["sparql", "--format", "json", ORDERED, "--backend", "oxigraph"],
    ["sparql", "--format", "table", ORDERED, "--backend", "oxigraph"],
    ["related", "--json", "HippoRAG"],
    ["export", "-f", "nt", "-o", "-"],
]


@pytest.mark.parametrize("args", COMMANDS)
def test_every_command_writes_every_byte_through_short_writes(out, monkeypatch, args: list[str]) -> None:
    """In process: stdout over a raw stream that takes 1,000 bytes a write (today: the rest was lost)."""
    args = [*args, "--graph", str(out)]
    whole = expected(args)
    sink = ShortWrites(most=1000)
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(sink, encoding="utf-8", newline="\n"))
    assert main(args) == 0
    assert bytes(sink.data) == whole


@pytest.mark.parametrize("args", COMMANDS)
def test_a_disk_that_fills_up_mid_write_is_exit_18(out, monkeypatch, capsys, args: list[str]) -> None:
    sink = ShortWrites(most=1 << 20, room=3000)
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(sink, encoding="utf-8", newline="\n"))
    assert main([*args, "--graph", str(out)]) == ExitCode.OUTPUT_ERROR
    assert capsys.readouterr().err == FULL


def one_page_left(folder: Path) -> None:
    """Fill `folder`'s file system but for one page: a bigger write there is short, then ENOSPC."""
    stat = os.statvfs(folder)
    with open(folder / "filler", "wb") as filler:
        filler.write(b"\0" * ((stat.f_bavail - 1) * stat.f_frsize))


def test_the_reported_full_disk_is_exit_18_with_one_line(out, tmpfs) -> None:
    """The issue's reproduction, as written: `kg sparql … > /mnt/1mb/q.csv` on a 1 MB tmpfs."""
    disk = tmpfs(1024)
    with open(disk / "q.csv", "wb") as target:
        done = subprocess.run(
            [sys.executable, "-m", "kg", "sparql", "--graph", str(out), "--format", "csv", EVERY_ROW], stdout=target, stderr=subprocess.PIPE, text=True, timeout=300
        )
    assert (done.returncode, done.stderr) == (ExitCode.OUTPUT_ERROR, FULL)


@pytest.mark.parametrize("args", [*COMMANDS, ["extract", "{seeds}"]])
def test_a_real_short_write_is_exit_18_for_every_command(out, seeds, tmpfs, args: list[str]) -> None:
    disk = tmpfs(256)
    one_page_left(disk)
    args = [a.replace("{seeds}", str(seeds)) for a in args] + ([] if args[0] == "extract" else ["--graph", str(out)])
    with open(disk / "output", "wb") as target:
        done = subprocess.run([sys.executable, "-m", "kg", *args], stdout=target, stderr=subprocess.PIPE, text=True, timeout=300)
    assert (done.returncode, done.stderr) == (ExitCode.OUTPUT_ERROR, FULL)


@pytest.mark.parametrize("args", [["export", "-f", "nt", "-o", "-"], ["sparql", EVERY_ROW]])
def test_a_reader_that_goes_away_ends_the_command_quietly(out, args: list[str]) -> None:
    """`kg export -o - | head -c 10`: exit 1 (click's broken-pipe handler), now 0 and no message."""
    with subprocess.Popen([sys.executable, "-m", "kg", *args, "--graph", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        assert process.stdout is not None and process.stderr is not None
        assert len(process.stdout.read(10)) == 10
        process.stdout.close()
        err = process.stderr.read()
        assert (process.wait(timeout=300), err) == (0, b"")


@pytest.mark.parametrize("args", [["cache", "info"], ["cache", "info", "--json"], ["--help"]])
def test_short_outputs_go_through_the_checked_writer_too(private_cache, monkeypatch, args: list[str]) -> None:
    """`kg cache info` (and click's own output) write through the same writer: 50 bytes a write here."""
    whole = subprocess.run([sys.executable, "-m", "kg", *args], capture_output=True, timeout=120, check=True).stdout
    sink = ShortWrites(most=50)
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(sink, encoding="utf-8", newline="\n"))
    assert main(args) == 0
    assert bytes(sink.data) == whole and sink.calls > 5


# Found by the hostile review of issue 36: a standard output closed (`>&-`: Python's sys.stdout is
# None) was an AttributeError traceback, exit 1, and one open only for reading (`1</dev/null`) an
# OSError [Errno 9] traceback; a whole `kg build` ran and published, then ended in the traceback.
STDOUT = {
    "closed": (">&-", "standard output is closed"),
    "read-only": ("1</dev/null", "standard output is not open for writing"),
}


def run_redirected(args: list[str], redirect: str) -> subprocess.CompletedProcess[str]:
    command = " ".join([sys.executable, "-m", "kg", *args]) + f" {redirect}"
    return subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize(("redirect", "reason"), STDOUT.values(), ids=STDOUT.keys())
@pytest.mark.parametrize("args", [["--version"], ["cache", "info"]], ids=["version", "cache info"])
def test_a_standard_output_that_cannot_be_written_is_no_traceback(private_cache, redirect: str, reason: str, args: list[str]) -> None:
    done = run_redirected(args, redirect)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode in (ExitCode.OK, ExitCode.OUTPUT_ERROR), done.stderr
    assert (done.returncode, done.stderr) == (ExitCode.OUTPUT_ERROR, f"Error: cannot write the output: {reason}\n")


@pytest.mark.parametrize(("redirect", "reason"), [*STDOUT.values(), (">/dev/full", "No space left on device")], ids=[*STDOUT, "full"])
def test_a_build_whose_summary_cannot_be_written_says_it_was_built(seeds, tmp_path, redirect: str, reason: str) -> None:
    out = tmp_path / "out"
    done = run_redirected(["build", str(seeds), "-o", str(out), "--no-cache", "--model", "none"], redirect)
    assert (done.returncode, done.stderr) == (ExitCode.OUTPUT_ERROR, f"Error: built {out}/, but cannot write the summary: {reason}\n")
    assert (out / "graph.json").is_file()


def test_a_quiet_command_with_a_closed_standard_output_writes_nothing_and_succeeds(seeds, tmp_path) -> None:
    done = run_redirected(["build", str(seeds), "-o", str(tmp_path / "out"), "--no-cache", "--model", "none", "-q"], ">&-")
    assert (done.returncode, done.stderr) == (ExitCode.OK, "")
