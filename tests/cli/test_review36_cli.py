"""What the hostile review of issue 36 found in the CLI (failing tests; src unchanged).

* A standard output that is closed (``>&-``) or open only for reading (``1</dev/null``) is a
  traceback, exit 1: `kg.cli._run` flushes ``sys.stdout``, which is None when fd 1 was closed
  (before the fix: exit 0, nothing to write to), and EBADF is not one of the errors reported as
  exit 18. A whole `kg build` runs and publishes, then ends in the traceback.
* ``--graph`` naming a folder with a dot in its name (``out.v2``, ``graphs/2024.01``) still
  suggests building into its parent: the fix reads a name with an extension as a file.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kg.cli import main
from kg.errors import ExitCode

STDOUT = {"closed": ">&-", "read-only": "1</dev/null"}


@pytest.mark.parametrize("redirect", STDOUT.values(), ids=STDOUT.keys())
@pytest.mark.parametrize("args", [["--version"], ["cache", "info"]], ids=["version", "cache info"])
def test_a_standard_output_that_cannot_be_written_is_no_traceback(redirect: str, args: list[str]) -> None:
    command = " ".join([sys.executable, "-m", "kg", *args]) + f" {redirect}"
    done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode in (ExitCode.OK, ExitCode.OUTPUT_ERROR), done.stderr


@pytest.mark.parametrize("name", ["out.v2", "graphs/2024.01"])
def test_a_dotted_graph_folder_not_built_yet_is_named_in_the_build_suggested(tmp_path: Path, capsys, name: str) -> None:
    missing = tmp_path / name
    assert main(["sparql", "ASK {}", "--graph", str(missing)]) == ExitCode.GRAPH_NOT_FOUND
    assert f"run `kg build INPUT… -o {missing}` first" in capsys.readouterr().err
