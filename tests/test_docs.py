"""The examples of the README and of every page of the documentation site are real: every
```console block is run and its output compared.

The rules (stated in docs/development.md, "The examples are tested"):

* a line starting with ``$ `` is a command, run by bash in a fresh copy of the repository with
  this interpreter's bin/ (the venv's ``kg``) first on PATH; blocks run in order — README.md
  first, then the pages of mkdocs.yml's nav in nav order — in the same folder, so later ones use
  the ``out/`` the README's ``kg build`` made;
* the lines after it, up to the next ``$ ``, are its output: stdout and stderr together;
* trailing whitespace and trailing blank lines are ignored; a duration (a number followed by
  `` s``) matches any number; a decimal number after ``≈`` matches itself or one unit up or down
  in its last digit; a line holding only ``…`` matches any run of lines, none included;
* ``<!-- not run: REASON -->`` just above a block skips it (the test is reported as skipped
  with that reason); ``<!-- needs: PATH -->`` runs it only where PATH (relative to the
  repository, e.g. ``../shared/eval``) exists.

Also: no shell example hides in another kind of block, every page of docs/ is in the nav and
every nav entry is a page, the set-up commands at the top of the README stay what `.ci/run` and
the first example run, every repository path a page names exists, and every API reference of the
site names an importable object.
"""

from __future__ import annotations

import difflib
import importlib
import os
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
MKDOCS = ROOT / "mkdocs.yml"
FENCE = re.compile(r"^```(\S*)\s*$")
DIRECTIVE = re.compile(r"^<!--\s*(not run|needs):\s*(.*?)\s*-->$")
DURATION = re.compile(r"\b\d+(?:\.\d+)? s\b")
NEAR = re.compile(r"≈(\d+\.\d+)")  # ≈0.716: 0.715, 0.716 or 0.717
ANY_LINES = "…"
NAV_PAGE = re.compile(r"^\s*-\s+(?:[^:]+:\s+)?(\S+\.md)\s*$")
API_REFERENCE = re.compile(r"^:::\s+(kg(?:\.\w+)*)\s*$", re.MULTILINE)
# Not copied into the scratch copy of the repository: what .gitignore leaves out of a clone
# (environments, caches, build output, the built site; out/ keeps only its committed .gitkeep), and .git.
IGNORED_ANYWHERE = shutil.ignore_patterns(".git", ".venv", ".venv-*", "__pycache__", "*.egg-info", ".pytest_cache", ".hypothesis")
IGNORED_IN = {ROOT: {"build", "dist", "site"}, ROOT / "bench": {"results"}}


def not_copied(folder: str, names: list[str]) -> set[str]:
    if Path(folder) == ROOT / "out":
        return {name for name in names if name not in (".gitkeep", "README.md")}
    return IGNORED_ANYWHERE(folder, names) | (IGNORED_IN.get(Path(folder), set()) & set(names))


@dataclass
class Example:
    line: int  # page line of the `$ ` command
    command: str
    output: list[str]


@dataclass
class Block:
    page: str  # "README.md", "docs/related.md"
    line: int  # page line of the opening fence
    lang: str
    body: list[str]
    directive: tuple[str, str] | None = None  # ("not run", reason) or ("needs", path)
    examples: list[Example] = field(default_factory=list)

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def nav_pages(mkdocs_yml: str) -> list[str]:
    """The pages of the site's `nav:`, in order (paths relative to docs/); sections have no page."""
    lines = mkdocs_yml.splitlines()
    start = lines.index("nav:") + 1
    pages = []
    for line in lines[start:]:
        if line.strip() and not line.startswith((" ", "-")):
            break  # the next top-level key
        match = NAV_PAGE.match(line)
        if match:
            pages.append(match.group(1))
    return pages


def parse_blocks(text: str, page: str = "README.md") -> list[Block]:
    """Every fenced block, with the `<!-- … -->` directive on the last non-blank line above it."""
    blocks: list[Block] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        match = FENCE.match(lines[index])
        if not match:
            index += 1
            continue
        end = next((j for j in range(index + 1, len(lines)) if lines[j].rstrip() == "```"), None)
        assert end is not None, f"{page}:{index + 1}: unclosed ``` block"
        above = next((lines[j].strip() for j in range(index - 1, -1, -1) if lines[j].strip()), "")
        directive = DIRECTIVE.match(above)
        blocks.append(Block(page, index + 1, match.group(1), lines[index + 1 : end], directive.groups() if directive else None))
        index = end + 1
    for block in blocks:
        if block.lang == "console":
            block.examples = parse_examples(block)
    return blocks


def parse_examples(block: Block) -> list[Example]:
    examples: list[Example] = []
    for offset, line in enumerate(block.body, start=block.line + 1):
        if line.startswith("$ "):
            examples.append(Example(offset, line[2:], []))
        else:
            assert examples, f"{block.page}:{offset}: output before any `$ ` command in a console block"
            examples[-1].output.append(line)
    assert examples, f"{block.where}: a console block without a `$ ` command"
    return examples


def _trimmed(lines: list[str]) -> list[str]:
    lines = [line.rstrip() for line in lines]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def expected_pattern(shown: list[str]) -> re.Pattern[str]:
    """The shown output as a regex over the real output's lines (each followed by a newline)."""
    parts = []
    for line in _trimmed(shown):
        if line.strip() == ANY_LINES:
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            pieces = DURATION.split(line)
            parts.append(r"\d+(?:\.\d+)? s".join(_near(piece) for piece in pieces) + r"\n")
    return re.compile("".join(parts))


def _near(text: str) -> str:
    """`text` as a regex, each ``≈NUMBER`` matching that number one unit up or down in its last digit."""
    pieces = NEAR.split(text)  # text, number, text, …
    out = []
    for i, piece in enumerate(pieces):
        if i % 2 == 0:
            out.append(re.escape(piece))
            continue
        places = len(piece.split(".")[1]) if "." in piece else 0
        unit = round(float(piece) * 10**places)
        out.append("(?:" + "|".join(re.escape(f"{n / 10**places:.{places}f}") for n in (unit - 1, unit, unit + 1) if n >= 0) + ")")
    return "".join(out)


def output_matches(shown: list[str], real: str) -> bool:
    lines = _trimmed(real.splitlines())
    return expected_pattern(shown).fullmatch("".join(line + "\n" for line in lines)) is not None


NAV = nav_pages(MKDOCS.read_text(encoding="utf-8"))
PAGES = [README] + [DOCS / page for page in NAV]  # the order the examples run in
BLOCKS = {page: parse_blocks(page.read_text(encoding="utf-8"), str(page.relative_to(ROOT))) for page in PAGES}
README_BLOCKS = BLOCKS[README]
CONSOLE = [block for blocks in BLOCKS.values() for block in blocks if block.lang == "console"]


# ---- the matching rules themselves -----------------------------------------------------------


def test_output_must_match_line_for_line() -> None:
    shown = ["papers            38", "concepts         251"]
    assert output_matches(shown, "papers            38\nconcepts         251\n")
    assert output_matches(shown, "papers            38   \nconcepts         251\n\n")  # trailing whitespace
    assert not output_matches(shown, "papers            38\nconcepts         252\n")  # drift
    assert not output_matches(shown, "papers            38\n")  # a line missing
    assert not output_matches(shown, "papers            38\nconcepts         251\nedges 358\n")  # one too many
    assert not output_matches(shown, "papers 38\nconcepts 251\n")  # spacing counts


def test_ellipsis_line_matches_any_run_of_lines_and_durations_any_number() -> None:
    shown = ["Built out/ in 2.8 s", "…", "  wrote out/related.idx"]
    assert output_matches(shown, "Built out/ in 14 s\n  wrote out/related.idx\n")
    assert output_matches(shown, "Built out/ in 0.31 s\n  papers 38\n  edges 358\n  wrote out/related.idx\n")
    assert not output_matches(shown, "Built out/ in 2.8 s\n  wrote out/graph.html\n")
    assert not output_matches(shown, "Built out/ in fast\n  wrote out/related.idx\n")
    assert not output_matches(["(0.9 MB): 38 papers"], "(0.8 MB): 38 papers\n")  # only durations are loose
    assert output_matches(["turning to…"], "turning to…\n")  # an ellipsis inside a line is literal
    assert not output_matches(["turning to…"], "turning to the doctor\n")


def test_a_near_number_matches_one_unit_either_way() -> None:
    assert output_matches(["  2. ≈0.716  p"], "  2. 0.715  p\n") and output_matches(["≈0.716"], "0.717\n")
    assert not output_matches(["≈0.716"], "0.714\n") and not output_matches(["≈0.716"], "0.7160\n")
    assert output_matches(["≈1.0 of ≈0.10"], "0.9 of 0.09\n") and not output_matches(["≈1.0"], "1.2\n")
    assert not output_matches(["≈10"], "9\n")  # decimals only: an integer after ≈ is written as it is


def test_parsing_commands_outputs_and_directives() -> None:
    text = "\n".join([
        "<!-- not run: needs a server -->", "", "```console", "$ kg serve", "```",
        "```console", "$ echo a; echo b", "a", "b", "$ true", "```", "```bash", "ls", "```",
    ])
    serve, echo, bash = parse_blocks(text, "docs/x.md")
    assert (serve.directive, [e.command for e in serve.examples]) == (("not run", "needs a server"), ["kg serve"])
    assert [(e.line, e.command, e.output) for e in echo.examples] == [(7, "echo a; echo b", ["a", "b"]), (10, "true", [])]
    assert (echo.directive, bash.lang, bash.examples, echo.where) == (None, "bash", [], "docs/x.md:6")
    with pytest.raises(AssertionError, match=r"docs/y\.md:2: output before any"):
        parse_blocks("```console\nstray output\n```", "docs/y.md")


def test_the_nav_is_read_in_order_sections_included() -> None:
    yml = "site_name: x\nnav:\n  - Home: index.md\n  - Guide:\n      - One: a/one.md\n      - two.md\n  - Last: z.md\nplugins:\n  - search\n"
    assert nav_pages(yml) == ["index.md", "a/one.md", "two.md", "z.md"]


# ---- every console block, run ----------------------------------------------------------------


@pytest.fixture(scope="module")
def doc_runs(tmp_path_factory) -> dict[str, list[tuple[Example, str]] | str]:
    """Run every runnable console block, README first and then the pages in nav order, in one
    scratch copy of the repository: "page:line" → [(example, real output)], or why it was not run."""
    bindir = Path(sys.executable).parent
    assert (bindir / "kg").is_file(), f"no kg script next to {sys.executable}: `pip install -e .` into this environment"
    scratch = tmp_path_factory.mktemp("docs")
    work = Path(shutil.copytree(ROOT, scratch / ROOT.name, ignore=not_copied))
    if (ROOT.parent / "shared").is_dir():  # ../shared as the pages' commands see it
        (scratch / "shared").symlink_to(ROOT.parent / "shared", target_is_directory=True)
    env = {key: value for key, value in os.environ.items() if key not in ("COLUMNS", "LINES", "SOURCE_DATE_EPOCH")}
    env.update(PATH=f"{bindir}{os.pathsep}{env.get('PATH', '')}", PYTHONUNBUFFERED="1")
    # An empty user cache of its own, as on a fresh machine (the session's holds the seeds already).
    env.update(KG_CACHE_DIR=str(scratch / "user-cache" / "kg"), XDG_CACHE_HOME=str(scratch / "user-cache"))
    runs: dict[str, list[tuple[Example, str]] | str] = {}
    for block in CONSOLE:
        reason = skip_reason(block, work)
        if reason:
            runs[block.where] = reason
            continue
        runs[block.where] = []
        for example in block.examples:
            done = subprocess.run(
                ["bash", "-c", example.command], cwd=work, env=env, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600,
            )
            runs[block.where].append((example, done.stdout))
    return runs


def skip_reason(block: Block, work: Path) -> str | None:
    if block.directive is None:
        return None
    kind, value = block.directive
    if kind == "not run":
        return f"{block.where}: not run: {value}"
    if not (work / value).exists():
        return f"{block.where}: needs {value}, which is not here"
    return None


# In the default leg: the README's test command checks every example the README and the pages show.
@pytest.mark.parametrize("block", CONSOLE, ids=[block.where for block in CONSOLE])
def test_console_block_output_is_real(block: Block, doc_runs) -> None:
    if isinstance(doc_runs[block.where], str):
        pytest.skip(doc_runs[block.where])
    failures = []
    for example, real in doc_runs[block.where]:
        if not output_matches(example.output, real):
            diff = "\n".join(difflib.unified_diff(_trimmed(example.output), _trimmed(real.splitlines()), block.page, "real", lineterm=""))
            failures.append(f"{block.page}:{example.line}: $ {example.command}\n{diff}")
    if failures:
        pytest.fail(f"{block.page}: shown output differs from the real output:\n\n" + "\n\n".join(failures), pytrace=False)


def test_console_blocks_that_are_not_run_say_why() -> None:
    for block in CONSOLE:
        if block.directive:
            kind, value = block.directive
            assert value, f"{block.where}: `<!-- {kind}: -->` without a reason"
    assert len(CONSOLE) >= 20 and sum(1 for block in CONSOLE if block.directive is None) >= 15  # most examples do run


def test_the_readme_shows_five_examples_that_run() -> None:
    readme = [block for block in README_BLOCKS if block.lang == "console"]
    assert all(block.directive is None for block in readme), [block.where for block in readme if block.directive]
    assert sum(len(block.examples) for block in readme) >= 5


def test_every_shell_example_is_a_console_block() -> None:
    """A `$ command` in a ``` or ```bash block would escape the test above."""
    hidden = [block.where for blocks in BLOCKS.values() for block in blocks if block.lang != "console" and any(line.startswith("$ ") for line in block.body)]
    assert hidden == []


# ---- the site's pages --------------------------------------------------------------------------


def test_every_page_is_in_the_nav_and_every_nav_entry_is_a_page() -> None:
    on_disk = sorted(str(path.relative_to(DOCS)) for path in DOCS.rglob("*.md"))
    assert len(NAV) == len(set(NAV)), "a page is in the nav twice"
    assert sorted(NAV) == on_disk
    assert NAV[0] == "index.md"  # the site's home page


def test_every_api_reference_names_an_importable_object() -> None:
    """`::: kg.module[.name]` lines (mkdocstrings) name modules and objects that exist, so a
    renamed module fails here too, not only in `mkdocs build --strict`."""
    references = [(page, name) for page in PAGES for name in API_REFERENCE.findall(page.read_text(encoding="utf-8"))]
    assert len(references) > 20
    missing = []
    for page, name in references:
        module, _, attribute = name, "", ""
        while True:
            try:
                found = importlib.import_module(module)
                break
            except ModuleNotFoundError:
                module, _, last = module.rpartition(".")
                attribute = f"{last}.{attribute}".strip(".")
        for part in filter(None, attribute.split(".")):
            found = getattr(found, part, None)
        if found is None:
            missing.append(f"{page.relative_to(ROOT)}: {name}")
    assert missing == []


def test_the_cli_reference_is_generated_from_the_click_group() -> None:
    from kg.cli import COMMANDS, cli

    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    directive = page[page.index("::: mkdocs-click") :]
    for option in (":module: kg.cli", ":command: cli", ":prog_name: kg", ":depth: 1"):
        assert option in directive
    assert sorted(cli.list_commands(None)) == sorted(COMMANDS)  # the lazy group lists every subcommand


def test_the_site_builds_offline_with_one_command() -> None:
    config = MKDOCS.read_text(encoding="utf-8")
    assert "name: material" in config and "font: false" in config  # no Google Fonts
    assert "python3 -m venv .venv && .venv/bin/pip install -q -e '.[docs]' && .venv/bin/mkdocs build --strict" in README.read_text(encoding="utf-8")
    docs = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]["docs"]
    assert {"mkdocs-material", "mkdocstrings", "mkdocs-click"} <= {re.match(r"[\w-]+", requirement).group() for requirement in docs}
    assert "site/" in (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()


# ---- the set-up commands at the top of the README ----------------------------------------------


def setup_commands() -> tuple[str, str, str]:
    """The README's first three ```bash blocks: build the graph, run the tests, build with
    embeddings (one line each)."""
    build, tests, embedded = [block for block in README_BLOCKS if block.lang == "bash"][:3]
    assert len(build.body) == len(tests.body) == len(embedded.body) == 1
    return build.body[0], tests.body[0], embedded.body[0]


@pytest.mark.network
def test_the_embed_setup_line_installs_and_builds_in_a_fresh_copy(tmp_path) -> None:
    """The set-up line with embeddings, verbatim, in a fresh copy of the repository with a venv of
    its own (pip reads PyPI, as on a fresh machine): it must install no torch and embed all 38 seeds."""
    _, _, embedded = setup_commands()
    assert embedded == (
        "python3 -m venv .venv && .venv/bin/pip install -q -e '.[embed]' && .venv/bin/kg build seeds/ -o out/ --embed"
    )
    work = Path(shutil.copytree(ROOT, tmp_path / ROOT.name, ignore=not_copied))
    env = {key: value for key, value in os.environ.items() if key not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    env.update(KG_CACHE_DIR=str(tmp_path / "cache"), PATH=os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if ".venv" not in p))
    done = subprocess.run(["bash", "-c", embedded], cwd=work, env=env, capture_output=True, text=True, timeout=1500, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "  embeddings        38  papers encoded, 0 from the cache" in done.stdout
    meta = (work / "out" / "embeddings.json").read_text(encoding="utf-8")
    assert '"papers": 38' in meta and "onnx" in meta
    venv_python = work / ".venv" / "bin" / "python"
    torchless = subprocess.run(
        [str(venv_python), "-c", "import importlib.util as u; print([m for m in ('torch', 'sentence_transformers') if u.find_spec(m)])"],
        capture_output=True, text=True, check=False,
    )
    assert torchless.stdout.strip() == "[]", torchless.stderr


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    _, tests, _ = setup_commands()
    assert tests.endswith(".venv/bin/python -m pytest") and "pip install -q -e '.[test]'" in tests
    assert "torch" not in tests  # the torch leg is CI's (.ci/run), not the newcomer's
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert tests in ci  # a whole, uncommented line


def test_the_build_command_is_the_quickstart_build() -> None:
    """The set-up's build is the README's first example (run above) behind a fresh venv."""
    build, _, _ = setup_commands()
    quickstart = CONSOLE[0].examples[0].command
    assert CONSOLE[0].page == "README.md" and quickstart == "kg build seeds/ -o out/"
    assert build == f"python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/{quickstart}"


# ---- paths ---------------------------------------------------------------------------------------


def test_every_repository_path_named_in_the_pages_exists() -> None:
    named = {
        (str(page.relative_to(ROOT)), path)
        for page in PAGES
        for path in re.findall(r"(?<![\w./-])((?:bench|schemas|src|tests|seeds|docs|\.ci)/[\w./*-]*)", page.read_text(encoding="utf-8"))
    }
    assert {"bench/html_page.py", "schemas/shapes.ttl", ".ci/run", "docs/images/page.png"} <= {path for _, path in named}
    missing = sorted(f"{page}: {path}" for page, path in named if not list(ROOT.glob(path.rstrip("/") or ".")))
    assert missing == []
