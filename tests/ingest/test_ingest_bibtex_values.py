"""BibTeX field values read as BibTeX reads them (issue 36, item 4): text, numbers and @string
macros joined by `#`. An undefined macro was glued into the abstract (`undefinedmacro # We
propose …`), and so was a loop (`a = b`, `b = a` gave `a # …`); every value of more than one
macro was left as written."""

from __future__ import annotations

import time

import pytest

from kg.cli import main
from kg.errors import ExitCode, MalformedRecord
from kg.ingest import read_corpus

HINT = " (--skip-invalid skips invalid records)"
GOOD = "@article{good, title={Good}, abstract={We train a graph network on citation data.}}\n"


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def read(text: str, **options) -> list[tuple[str, str]]:
    with open("refs.bib", "w", encoding="utf-8") as handle:
        handle.write(text)
    return [(p.title, p.abstract) for p in read_corpus(["refs.bib"], **options).papers]


def refused(text: str) -> str:
    with pytest.raises(MalformedRecord) as raised:
        read(text)
    return raised.value.message


def test_the_reported_undefined_macro_is_a_malformed_record(capsys) -> None:
    with open("refs.bib", "w", encoding="utf-8") as handle:
        handle.write("@article{a, title={T}, abstract=undefinedmacro # {We propose a new method for graphs.}}\n")
    assert main(["build", "refs.bib", "-o", "out", "--quiet", "--model", "none"]) == ExitCode.MALFORMED_RECORD
    assert capsys.readouterr().err == f"Error: refs.bib:1: field 'abstract': undefined @string macro 'undefinedmacro'{HINT}\n"


@pytest.mark.parametrize(("strings", "loop"), [
    ("@string{a = b}\n@string{b = a}\n", "a → b → a"),
    ("@string{a = a}\n", "a → a"),
    ("@string{A = {x} # B}\n@string{b = c}\n@string{c = {y} # a}\n", "A → b → c → A"),
])
def test_macros_in_a_loop_are_a_malformed_record(strings: str, loop: str) -> None:
    text = strings + "@article{x, title={T}, abstract=a # {We propose a new method.}}\n"
    line = strings.count("\n") + 1
    assert refused(text) == f"refs.bib:{line}: field 'abstract': @string macros refer to each other in a loop: {loop}"


def test_the_bad_entry_is_skipped_and_the_rest_read_with_skip_invalid() -> None:
    text = GOOD + "@article{bad, title={T}, abstract=nope # {We propose.}}\n"
    assert read(text, skip_invalid=True) == [("Good", "We train a graph network on citation data.")]


def test_values_joined_by_hash_are_read_whole() -> None:
    """bibtexparser left `p # {propose.}` as written: an abstract of the macro's name and a `#`."""
    text = (
        '@string{we = "We "}\n@STRING{intro = we # {propose}}\n'
        '@article{x, title = "A {BERT} " # 2020, abstract = Intro # " a new " # {method for graphs with M{\\"u}ller}, year = 2020, month = jan}\n'
    )
    assert read(text) == [("A BERT 2020", "We propose a new method for graphs with Müller")]


@pytest.mark.parametrize(("value", "reason"), [
    ("{We propose} {a method}", "expected # between the parts of the value, found '{a method}'"),
    ("{We propose} #", "the value ends with #"),
])
def test_a_value_bibtex_could_not_read_is_a_malformed_record(value: str, reason: str) -> None:
    assert refused(f"@article{{x, title={{T}}, abstract = {value}}}\n") == f"refs.bib:1: field 'abstract': {reason}"


def test_an_undefined_macro_in_a_field_kg_does_not_read_costs_nothing() -> None:
    assert read("@article{x, title={T}, note = nowhere # {x}, abstract={We propose a method.}}\n") == [("T", "We propose a method.")]


def test_macros_that_double_at_each_step_are_refused_while_expanding() -> None:
    """`a1 = a0 # a0`, `a2 = a1 # a1`, …: 2^40 characters would be made before any size check."""
    strings = "@string{a0 = {xxxxxxxxxx}}\n" + "".join(f"@string{{a{i} = a{i - 1} # a{i - 1}}}\n" for i in range(1, 41))
    started = time.monotonic()
    message = refused(strings + "@article{x, title={T}, abstract=a40}\n")
    assert message == "refs.bib:42: field 'abstract': the value expands to more than 1,000,000 characters"
    assert time.monotonic() - started < 5


def test_a_chain_of_macros_too_deep_is_refused() -> None:
    strings = "@string{m0 = {x}}\n" + "".join(f"@string{{m{i} = m{i - 1}}}\n" for i in range(1, 101))
    assert refused(strings + "@article{x, title={T}, abstract=m100}\n") == "refs.bib:102: field 'abstract': @string macros nested more than 64 deep"
