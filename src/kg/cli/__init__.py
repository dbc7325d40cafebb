"""The `kg` command line: a thin layer over the library.

Each subcommand lives in its own module here and is imported only when it runs
(or when help is listed), so `kg related` and `kg sparql` never pay for spaCy.
A `KgError` from the library becomes one ``Error: …`` line on stderr and its exit code;
a `KgWarning` one ``Warning: …`` line (the run goes on).
"""

from __future__ import annotations

import errno
import importlib
import sys
import warnings
from collections.abc import Sequence
from typing import TextIO

import click

from kg.cli.common import error_text
from kg.cli.stdout import ReaderGone, StdoutWriteError, checked_stdout
from kg.errors import ExitCode, KgError, KgWarning, LooksStructured

# name -> "module:attribute" of a click command; modules are imported lazily.
COMMANDS: dict[str, str] = {
    "build": "kg.cli.build:build",
    "cache": "kg.cli.cache:cache",
    "eval": "kg.cli.eval:eval_",
    "export": "kg.cli.export:export",
    "extract": "kg.cli.extract:extract",
    "html": "kg.cli.html:html",
    "leaderboard": "kg.cli.leaderboard:leaderboard",
    "related": "kg.cli.related:related",
    "serve": "kg.cli.serve:serve",
    "sparql": "kg.cli.sparql:sparql",
    "train": "kg.cli.train:train",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = COMMANDS.get(name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        command: click.Command = getattr(importlib.import_module(module_name), attr)
        return command


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="kg", prog_name="kg")
def cli() -> None:
    """kg: knowledge graphs of the machine-learning literature.

    Build a paper–concept graph from abstracts (spaCy), export it as RDF and
    query it with SPARQL, draw it as an offline HTML page, and find related work.
    """


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit status (documented in docs/exit-codes.md)."""
    with warnings.catch_warnings():
        # kg's warnings are part of the command's output: shown as `Warning: …` lines even under
        # `-W error` or PYTHONWARNINGS=error (which made them a traceback).
        warnings.simplefilter("default", KgWarning)
        shown_before = warnings.showwarning

        def show(message: Warning | str, category: type[Warning], filename: str, lineno: int, file: TextIO | None = None, line: str | None = None) -> None:
            if issubclass(category, KgWarning):
                click.echo(f"Warning: {message}{_hint(message)}", err=True)
            else:
                shown_before(message, category, filename, lineno, file, line)

        warnings.showwarning = show
        with checked_stdout():  # every byte a command writes to stdout is written, or the run fails (exit 18)
            return _run(argv)


def _hint(warning: Warning | str) -> str:
    """The flag that deals with a warning, in the terms of the command that gave it."""
    if isinstance(warning, LooksStructured) and warning.format:
        context = click.get_current_context(silent=True)
        flag = "--input-format" if context is not None and context.info_name == "extract" else "--format"  # extract's --format is its output's
        return f" or read it with {flag} {warning.format}"
    return ""


def _run(argv: Sequence[str] | None) -> int:
    try:
        status = cli.main(args=list(argv) if argv is not None else None, prog_name="kg", standalone_mode=False)
        if sys.stdout is not None:  # None: closed before kg started, and nothing was written
            sys.stdout.flush()  # the last of the output: its failure is the run's
    except KgError as error:
        click.echo(f"Error: {error_text(error)}", err=True)
        shown = getattr(error, "excerpt", None)  # a query's syntax error: the line, a caret under the column
        if shown:
            click.echo(f"  {shown[0]}\n  {shown[1]}", err=True)
        return int(error.exit_code)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        return 130
    except click.ClickException as error:
        error.show()
        return error.exit_code
    except click.exceptions.Exit as exit_:
        return exit_.exit_code
    except ReaderGone:
        # e.g. `kg extract … | head`: the reader went away; not an error worth a message.
        return int(ExitCode.OK)
    except BrokenPipeError:  # the same, from a write that did not go through `checked_stdout`
        sys.stderr.close()
        return int(ExitCode.OK)
    except StdoutWriteError as error:  # any write to stdout that failed: a full disk, `>&-`, `1</dev/null`
        click.echo(f"Error: cannot write the output: {error.strerror}", err=True)
        return int(ExitCode.OUTPUT_ERROR)
    except OSError as error:
        if error.errno not in (errno.ENOSPC, errno.EIO, errno.EFBIG, errno.EDQUOT):
            raise
        # e.g. `kg sparql … > /dev/full`: the output could not be written, say so once (what is
        # left unwritten is dropped by `checked_stdout`)
        click.echo(f"Error: cannot write the output: {error.strerror}", err=True)
        return int(ExitCode.OUTPUT_ERROR)
    # A command may return an int status (e.g. `kg eval` below a threshold); None means success.
    return int(status) if isinstance(status, int) else int(ExitCode.OK)
