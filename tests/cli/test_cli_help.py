"""Every registered subcommand has help, reachable through `kg --help` and `kg CMD --help`.

Iterates `kg.cli.COMMANDS`, so a command added later is covered without touching this file.
"""

from __future__ import annotations

import importlib
import subprocess
import sys

import click
import pytest

from kg.cli import COMMANDS, main


def command(name: str) -> click.Command:
    module, attribute = COMMANDS[name].split(":")
    return getattr(importlib.import_module(module), attribute)


def test_top_level_help_lists_every_command(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Usage: kg [OPTIONS] COMMAND [ARGS]...")
    listed = out.split("Commands:")[1]
    for name in COMMANDS:
        assert f"\n  {name} " in listed


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_has_help(capsys, name):
    cmd = command(name)
    assert cmd.help and cmd.help.strip(), f"kg {name} has no help text"
    for param in cmd.params:
        if isinstance(param, click.Option):
            assert param.help and param.help.strip(), f"kg {name} {param.opts[0]} has no help text"
    assert main([name, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Usage: kg {name} ")
    opening = " ".join(cmd.help.split()[:5])  # click re-wraps (and hyphen-breaks) longer text
    assert opening in " ".join(out.split())


def test_unknown_command_is_a_usage_error(capsys):
    assert main(["no-such-command"]) == 2
    assert "No such command 'no-such-command'" in capsys.readouterr().err


def test_python_dash_m_kg_runs_the_cli():
    result = subprocess.run([sys.executable, "-m", "kg", "--help"], capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.startswith("Usage: kg [OPTIONS] COMMAND [ARGS]...")


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == "kg, version 0.1.0\n"
