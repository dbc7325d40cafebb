"""Help for a SPARQL query that went wrong: where it broke, what was likely meant.

* `likely_expected` cuts a parser's list of expected tokens to the few a person probably
  forgot: closing brackets and separators first, keywords next, character classes never.
* `excerpt` is the query line a syntax error points at, with a caret under the column
  (`kg sparql` prints it under the ``Error:`` line).
* `undeclared_terms` finds the terms of kg's namespace (``kg:useDataset``) that its ontology
  (``schemas/kg.ttl``) does not declare, each with the closest declared ones: such a query
  runs, and silently matches nothing, so kg warns (`kg sparql`: a ``Warning:`` line;
  `kg serve`: an ``X-Kg-Warning`` header and a log line).
"""

from __future__ import annotations

import difflib
import functools
import re
from dataclasses import dataclass
from importlib.resources import files

from kg.rdf.terms import KG
from kg.sparql.guard import expand_codepoints

MAX_EXPECTED = 4
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|\[[^\]]*\]|[A-Za-z_]\w*')
_FIRST = (")", "}", "]", ".", ";", ",")  # what a person most often forgot, in this order
# IRIs kept (a kg term may be written in full), strings and comments blanked.
_SKIPPED = re.compile(
    r'''(<[^<>"{}|^`\\\x00-\x20]*>)|\\[\s\S]|"""(?:[^"\\]|\\.|"(?!""))*"""|\'\'\'(?:[^'\\]|\\.|'(?!''))*\'\'\'|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|\#[^\n]*''',
)
_KG_TERM = re.compile(r"(?<![\w:])kg:([A-Za-z_][\w-]*)|<" + re.escape(KG) + r"([A-Za-z_][\w-]*)>")


def likely_expected(listing: str) -> str:
    """``"&&", ")", "*", …`` (a parser's "expected one of" list) → the few likely ones,
    closers first: ``")", "&&", "*", "+", …``. Character classes (``['0'..='9']``) are dropped."""
    tokens = [t for t in _TOKEN.findall(listing) if not t.startswith("[")]
    if not tokens:
        return listing
    rank = {f'"{t}"': i for i, t in enumerate(_FIRST)}
    ordered = sorted(tokens, key=lambda t: (rank.get(t, len(_FIRST)), tokens.index(t)))
    shown = ", ".join(ordered[:MAX_EXPECTED])
    return shown + (", …" if len(ordered) > MAX_EXPECTED else "")


def excerpt(text: str, line: int, column: int, *, width: int = 100) -> tuple[str, str]:
    """The query's `line` (1-based) and a caret line under `column` (1-based), both cut to
    about `width` characters around the column."""
    lines = text.split("\n")
    source = lines[line - 1] if 0 < line <= len(lines) else ""
    source = source.replace("\t", " ").rstrip("\r")
    at = max(0, min(column - 1, len(source)))
    start = 0 if len(source) <= width else max(0, min(at - width // 2, len(source) - width))
    shown = source[start : start + width]
    prefix = "…" if start else ""
    suffix = "…" if start + width < len(source) else ""
    return f"{prefix}{shown}{suffix}", " " * (len(prefix) + at - start) + "^"


@dataclass(frozen=True)
class UndeclaredTerm:
    term: str  # as the query wrote it, e.g. "kg:useDataset"
    suggestions: tuple[str, ...]  # the closest declared terms, "kg:usesDataset"

    def message(self) -> str:
        close = f"; did you mean {' or '.join(self.suggestions)}?" if self.suggestions else ""
        return f"{self.term} is not a term of kg's ontology, so it matches nothing{close}"


@functools.cache
def declared_terms() -> frozenset[str]:
    """The local names kg's ontology declares in its namespace (kg:Method, kg:usesDataset, …)."""
    import pyoxigraph as ox

    text = (files("kg.schemas") / "kg.ttl").read_text(encoding="utf-8")
    names = set()
    for quad in ox.parse(text, format=ox.RdfFormat.TURTLE):
        subject = quad.subject
        if isinstance(subject, ox.NamedNode) and subject.value.startswith(KG):
            names.add(subject.value[len(KG) :])
    return frozenset(names)


def undeclared_terms(query: str) -> list[UndeclaredTerm]:
    """The kg: terms `query` uses that the ontology does not declare, in order of first use
    (strings and comments are skipped; codepoint escapes expanded)."""
    text = _SKIPPED.sub(lambda m: m.group(1) or " ", expand_codepoints(query))
    declared = declared_terms()
    found: dict[str, UndeclaredTerm] = {}
    for match in _KG_TERM.finditer(text):
        name = match.group(1) or match.group(2)
        written = match.group()
        if name in declared or written in found:
            continue
        close = difflib.get_close_matches(name, sorted(declared), n=2, cutoff=0.7)
        if not close:  # a case slip (kg:method) is close whatever the ratio
            close = [d for d in sorted(declared) if d.lower() == name.lower()][:2]
        found[written] = UndeclaredTerm(written, tuple(f"kg:{c}" for c in close))
    return list(found.values())
