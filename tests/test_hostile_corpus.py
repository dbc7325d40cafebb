"""Random hostile corpora through `kg build`: never a traceback, Turtle that parses, an inert page.

Each example is a JSON Lines file of records built from ML words, script/HTML/LaTeX payloads,
lone surrogates (as JSON escapes, or as raw surrogate bytes), control characters, huge tokens
(some over the abstract limit), empty and wrongly-typed fields and non-JSON lines, built with
``--model none`` (rules alone: fast). The build must exit 0, or with a documented code and
exactly one ``Error:`` line and no output folder at all (nothing written). On success
``graph.ttl`` parses with rdflib and ``graph.html`` carries no executable trace of the text.

10 examples by default (a build each); ``pytest -m slow`` runs `test_hostile_corpora_many` with 1,000.
"""

from __future__ import annotations

import io
import json
import re
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
import rdflib
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from kg.cli import main
from kg.errors import ExitCode
from kg.ingest.records import MAX_ABSTRACT_CHARS, MAX_SYMBOL_RUN, MAX_WORD_CHARS

# Untrusted text: markup, script, template, Turtle and LaTeX payloads; those that could run carry "kgpwn".
PAYLOADS = [
    "<script>alert('kgpwn')</script>",
    "</script><script>window.kgpwn=1</script>",
    '<img src=x onerror="window.kgpwn=1">',
    '<a href="javascript:window.kgpwn=1">x</a>',
    "<svg onload=window.kgpwn=1>",
    "<iframe srcdoc='<script>kgpwn()</script>'>",
    "<!--",
    "-->",
    "]]>",
    "<![CDATA[",
    "\u2028",
    "\u2029",
    "{{kgpwn}}",
    "${kgpwn}",
    "`kgpwn`",
    "&lt;script&gt;kgpwn&lt;/script&gt;",
    '"; kgpwn(); "',
    "@prefix kgpwn: <http://evil.example/> .",
    '""" ; <http://evil.example/s> <http://evil.example/p> "kgpwn" .',
    "$\\texttt{GD-LS}$",
    "\\begin{equation} x^2 \\end{equation}",
    "{\\\"u}ber",
    "\\",
    "'; DROP TABLE extraction; --",
]
MARKERS = ("kgpwn",)  # in every payload that could run; never in kg's own page
WORDS = [
    "We", "propose", "BERT", "ResNet", "ImageNet", "accuracy", "Transformer", "GAN", "object detection",
    "CIFAR-10", "F1", "GPU", "(", ")", ",", ".", "we introduce", "KAN-AD", "https://x.org/a(b)",
]
SURROGATE = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
CONTROL = st.characters(min_codepoint=0, max_codepoint=0x1F) | st.sampled_from("\x7f\x85\x9f\u200b\ufeff\ufffe")
HUGE = st.one_of(
    st.builds(lambda char, n: char * n, st.sampled_from("xé<$-"), st.sampled_from([40, MAX_SYMBOL_RUN + 1, MAX_WORD_CHARS + 1, 5_000])),
    st.builds(lambda word, n: word * n, st.sampled_from(["word ", "BERT ", "a- ", "(x) "]), st.sampled_from([1_000, 4_000])),
    st.just("word " * (MAX_ABSTRACT_CHARS // 5 + 1)),  # over the length limit
)
def weighted(*choices: tuple[int, st.SearchStrategy]) -> st.SearchStrategy:
    """One of the strategies, each as often as its weight (`st.one_of` would merge repeats)."""
    return st.sampled_from([strategy for weight, strategy in choices for _ in range(weight)]).flatmap(lambda strategy: strategy)


def _sometimes(strategy: st.SearchStrategy[str], one_in: int) -> st.SearchStrategy[str]:
    """`strategy` about once in `one_in` draws, else ""."""
    return weighted((one_in - 1, st.just("")), (1, strategy))


# Tokens are weighted towards words (so most records are papers with concepts and the graph,
# Turtle and page are exercised); a lone surrogate or a huge token comes about once a record in ten.
TOKEN = weighted((4, st.sampled_from(WORDS)), (2, st.sampled_from(PAYLOADS)), (1, st.text(max_size=12)), (1, CONTROL))
OPENINGS = ["We propose BERT for object detection.", "We train ResNet on ImageNet.", "A GAN on CIFAR-10 reaches high accuracy."]
TEXT = st.tuples(st.sampled_from(OPENINGS), st.lists(TOKEN, max_size=30), _sometimes(SURROGATE, 10), _sometimes(HUGE, 10)).map(
    lambda parts: " ".join([parts[0], *parts[1], parts[2], parts[3]])
)
SMALL = st.tuples(st.lists(st.one_of(st.sampled_from(WORDS), st.sampled_from(PAYLOADS), CONTROL, st.text(max_size=8)), max_size=6), _sometimes(SURROGATE, 20)).map(
    lambda parts: " ".join([*parts[0], parts[1]])
)
EMPTY = st.sampled_from([None, "", " ", "\t\n", [], {}])
FIELD = weighted((12, SMALL), (2, EMPTY), (2, st.integers(-10, 3000)), (1, st.booleans()), (1, st.lists(SMALL, max_size=3)))
URL = st.sampled_from(["javascript:window.kgpwn=1", "https://ok.example/p?a=<b>", "data:text/html,<script>kgpwn</script>", "http://x", ""])
RECORD = st.fixed_dictionaries(
    {"abstract": weighted((12, TEXT), (1, EMPTY))},
    optional={
        "id": FIELD,
        "title": FIELD,
        "authors": st.one_of(FIELD, st.lists(st.fixed_dictionaries({"name": SMALL}), max_size=3)),
        "venue": FIELD,
        "year": FIELD,
        "url": st.one_of(URL, FIELD),
        "keywords": FIELD,
        "doi": st.sampled_from(["10.1000/<script>kgpwn</script>", "10.1/x y", "doi:10.5555/ok"]),
    },
)
# ensure_ascii=True writes a surrogate as a JSON escape; False leaves it raw (bytes ED A0 80 …).
JSON_LINE = st.tuples(RECORD, st.booleans()).map(lambda pair: json.dumps(pair[0], ensure_ascii=pair[1]))
LINE = weighted((12, JSON_LINE), (1, st.text(max_size=40)), (1, st.just("")))  # text: not JSON, or not an object
# (lines, skip_invalid): skipping is drawn more often, so that bad records are also seen skipped.
CORPUS = st.tuples(st.lists(LINE, min_size=1, max_size=8), st.sampled_from([True, True, False]))

# Exit codes a corpus file's content may earn (a bug would be 1 or an exception).
CONTENT_CODES = {
    ExitCode.OK, ExitCode.UNSUPPORTED_FORMAT, ExitCode.DECODE_ERROR, ExitCode.MALFORMED_RECORD,
    ExitCode.EMPTY_ABSTRACT, ExitCode.EMPTY_CORPUS, ExitCode.RECORD_TOO_LARGE,
}


def _scripts(page: str) -> list[tuple[str, str]]:
    return re.findall(r"<script\b([^>]*)>(.*?)</script>", page, re.S | re.I)


def assert_inert(page: str) -> None:
    """No corpus text can run: exactly kg's two inline scripts run (both hash-pinned by the CSP, so
    nothing else could), neither holds a payload marker, every data block is plain JSON, and no
    marker survives outside the scripts."""
    scripts = _scripts(page)
    executable = [body for attrs, body in scripts if "application/json" not in attrs]
    assert len(executable) == 2
    for attrs, body in scripts:
        if "application/json" in attrs:
            json.loads(body)
            assert "<" not in body  # so "</script>" or "<!--" can never end or bend the block
    for body in executable:
        assert not any(marker in body for marker in MARKERS)
    outside = re.sub(r"<script\b[^>]*>.*?</script>", "", page, flags=re.S | re.I)
    assert not any(marker in outside for marker in MARKERS)
    assert "unsafe-inline" not in page.split("script-src", 1)[1].split(";", 1)[0]


def build_hostile(lines: list[str], skip_invalid: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        corpus, out = Path(tmp) / "corpus.jsonl", Path(tmp) / "out"
        # surrogatepass: a surrogate that json.dumps left raw becomes the bytes ED A0 80 …,
        # which are not UTF-8 either.
        corpus.write_bytes(("\n".join(lines) + "\n").encode("utf-8", "surrogatepass"))
        stdout, stderr = io.StringIO(), io.StringIO()
        args = ["build", str(corpus), "-o", str(out), "--quiet", "--model", "none", *(["--skip-invalid"] if skip_invalid else [])]
        with redirect_stdout(stdout), redirect_stderr(stderr):
            status = main(args)
        event(f"exit {status}")  # shown by --hypothesis-show-statistics
        err_lines = stderr.getvalue().splitlines()
        assert "Traceback" not in stderr.getvalue()
        assert status in CONTENT_CODES, stderr.getvalue()
        assert all(line.startswith(("Error: ", "Warning: ")) for line in err_lines), err_lines
        errors = [line for line in err_lines if line.startswith("Error: ")]
        if status != ExitCode.OK:
            assert len(errors) == 1 and errors[0].startswith(f"Error: {corpus}") or "no papers" in errors[0], errors
            assert not out.exists()  # refused before anything was written
            return
        assert errors == []
        graph = rdflib.Graph()
        graph.parse(out / "graph.ttl", format="turtle")
        assert len(graph) > 0
        assert_inert((out / "graph.html").read_text(encoding="utf-8"))
        for name in ("papers.jsonl", "entities.jsonl", "concepts.jsonl"):
            for line in (out / name).read_text(encoding="utf-8").splitlines():
                json.loads(line)


@settings(max_examples=10, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(CORPUS)
def test_hostile_corpora(corpus):
    build_hostile(*corpus)


@settings(max_examples=1000, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(CORPUS)
def _many_hostile_corpora(corpus):
    build_hostile(*corpus)


@pytest.mark.slow
def test_hostile_corpora_many():
    """1,000 examples (about 4 minutes): the slow leg, ``pytest -m slow``."""
    _many_hostile_corpora()


def test_the_markers_are_absent_from_a_clean_page(tmp_path):
    """The inertness check means something only if kg's own page holds none of the markers."""
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"id": "a", "title": "T", "abstract": "We propose BERT for object detection."}) + "\n", encoding="utf-8")
    assert main(["build", str(corpus), "-o", str(tmp_path / "out"), "--quiet", "--model", "none"]) == 0
    assert_inert((tmp_path / "out" / "graph.html").read_text(encoding="utf-8"))


def test_a_payload_corpus_is_inert(tmp_path):
    """Every payload at once, in every field, through a real build."""
    records = [{"id": f"p{i}", "title": p, "abstract": f"We propose BERT {p} on ImageNet {p}.", "venue": p, "authors": [p], "url": p}
               for i, p in enumerate(PAYLOADS)]
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert main(["build", str(corpus), "-o", str(tmp_path / "out"), "--quiet", "--model", "none"]) == 0
    assert_inert((tmp_path / "out" / "graph.html").read_text(encoding="utf-8"))
    rdflib.Graph().parse(tmp_path / "out" / "graph.ttl", format="turtle")
