"""Options shared by several commands (--graph, --base, --types) parse and read the same everywhere."""

from __future__ import annotations

import importlib

import click
import pytest

from kg.cli import COMMANDS
from kg.model import ENTITY_TYPES, parse_types
from kg.rdf.terms import DEFAULT_BASE


def options_named(name: str) -> dict[str, click.Option]:
    """Command name → its option `name`, for every command that has one."""
    found = {}
    for command, target in COMMANDS.items():
        module, attribute = target.split(":")
        for param in getattr(importlib.import_module(module), attribute).params:
            if isinstance(param, click.Option) and name in param.opts:
                found[command] = param
    return found


@pytest.mark.parametrize(("name", "commands", "default"), [
    ("--graph", {"export", "html", "leaderboard", "related", "serve", "sparql"}, "out"),
    ("--base", {"export", "serve", "sparql"}, DEFAULT_BASE),
])
def test_shared_options_are_identical(name: str, commands: set[str], default: str) -> None:
    options = options_named(name)
    assert set(options) == commands
    assert {(o.help, o.default, type(o.type), o.metavar) for o in options.values()} == {(options[min(commands)].help, default, type(options[min(commands)].type), options[min(commands)].metavar)}


def test_types_option_reads_the_same_in_every_command() -> None:
    options = options_named("--types")
    assert set(options) == {"html", "related"}
    tails = {o.help.split(": ", 1)[1] for o in options.values()}
    assert tails == {f"{', '.join(ENTITY_TYPES)} (comma-separated or repeated, any case)."}
    assert {(o.metavar, o.multiple) for o in options.values()} == {("TYPE,…", True)}


def test_parse_types() -> None:
    assert parse_types(None) is None
    assert parse_types("method, Task ,") == ("METHOD", "TASK")
    assert parse_types(["dataset", "METRIC,dataset"]) == ("DATASET", "METRIC")
    assert parse_types([]) == () == parse_types(" , ")
    with pytest.raises(ValueError, match=r"^unknown concept type 'TOOL'; choose from METHOD, DATASET, HARDWARE, METRIC, TASK, TERM$"):
        parse_types("task,tool")


@pytest.mark.parametrize(("command", "name", "literal"), [
    ("export", "--format", "kg.rdf.terms:ExportFormat"),
    ("sparql", "--backend", "kg.sparql.engine:Backend"),
])
def test_a_choice_passed_on_as_a_literal_offers_exactly_its_values(command: str, name: str, literal: str) -> None:
    from typing import get_args

    module, attribute = literal.split(":")
    values = get_args(getattr(importlib.import_module(module), attribute))
    option = options_named(name)[command]
    assert isinstance(option.type, click.Choice)
    assert tuple(option.type.choices) == values  # so `chosen` never refuses what click accepted


def test_chosen_gives_the_choice_itself_and_refuses_any_other_value() -> None:
    from kg.cli.common import chosen

    choices = ("ttl", "nt")
    assert chosen("nt", choices) is choices[1]
    with pytest.raises(click.BadParameter, match="'NT' is not one of ttl, nt"):
        chosen("NT", choices)
