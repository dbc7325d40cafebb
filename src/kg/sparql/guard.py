"""Checks on SPARQL text made before any parser sees it (`kg sparql`, `kg serve`).

pyoxigraph's parser and query algebra recurse: measured with pyoxigraph 0.5 on an 8 MB stack,
~3,000 nested ``{ }`` groups (or ~5,000 nested parentheses) and flat operator chains of
~7,000 ``+`` terms or ``UNION`` branches overflow the stack and kill the process with a
segfault, which no ``try`` catches. `check_query` refuses such text first, with limits far
below those depths, and refuses ``SERVICE`` (a query naming any URL would make the engine
fetch it) unless the caller allows it.

`scan` is a small tokenizer that knows just enough SPARQL to skip what may hold brackets
or keywords innocently: string literals (``'…'``, ``"…"``, and the long ``'''…'''``,
``\"\"\"…\"\"\"`` forms, with backslash escapes), IRIs (``<…>``, told apart from the ``<``
operator as the grammar's IRIREF rule does) and ``#`` comments. Everything else counts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kg.errors import QueryFailed, QuerySyntaxError

MAX_QUERY_CHARS = 200_000
MAX_DEPTH = 64  # nested { } ( ) [ ] together; real queries stay below ~10
MAX_OPERATORS = 1_000  # binary operators and UNIONs: each chain is one level of recursion

SPARQL_TOKEN = re.compile(
    r'''(?P<skip>"""(?:[^"\\]|\\.|"(?!""))*(?:"""|\Z)'''
    r"""|'''(?:[^'\\]|\\.|'(?!''))*(?:'''|\Z)"""
    r'''|"(?:[^"\\\n\r]|\\.)*(?:"|(?=[\n\r])|\Z)'''
    r"""|'(?:[^'\\\n\r]|\\.)*(?:'|(?=[\n\r])|\Z)"""
    r"""|<[^<>"{}|^`\\\x00-\x20]*>"""
    r"""|\#[^\n\r]*)"""
    r"""|(?P<open>[{(\[])|(?P<close>[})\]])"""
    r"""|(?P<word>(?<![?$:\w])[A-Za-z]+(?![\w:]))"""
    r"""|(?P<op>\|\||&&|[-+*/|^!=<>])""",
    re.S,
)


class QueryRefused(QuerySyntaxError):
    """A query refused before parsing (too deep, too long, or SERVICE); exit code 13."""


class QueryTimedOut(QueryFailed):
    """A query stopped because it ran past its time limit; exit code 14."""


@dataclass(frozen=True, slots=True)
class QueryShape:
    depth: int  # deepest nesting of brackets outside strings, IRIs and comments
    operators: int  # operator tokens and UNION keywords
    service: bool  # the SERVICE keyword appears


def scan(text: str) -> QueryShape:
    """The nesting depth, operator count and SERVICE use of `text` (which need not parse)."""
    depth = deepest = operators = 0
    service = False
    for match in SPARQL_TOKEN.finditer(text):
        kind = match.lastgroup
        if kind == "open":
            depth += 1
            deepest = max(deepest, depth)
        elif kind == "close":
            depth = max(0, depth - 1)
        elif kind == "op":
            operators += 1
        elif kind == "word":
            word = match.group().upper()
            if word == "SERVICE":
                service = True
            elif word == "UNION":
                operators += 1
    return QueryShape(deepest, operators, service)


def check_query(text: str, *, allow_service: bool = False, max_chars: int = MAX_QUERY_CHARS, max_depth: int = MAX_DEPTH, max_operators: int = MAX_OPERATORS) -> None:
    """Raise `QueryRefused` when `text` is too long, nests too deep, chains too many
    operators, or uses SERVICE without `allow_service`."""
    if len(text) > max_chars:
        raise QueryRefused(f"query refused: {len(text):,} characters, above the limit of {max_chars:,}")
    shape = scan(text)
    if shape.depth > max_depth:
        raise QueryRefused(f"query refused: brackets nested {shape.depth:,} deep, above the limit of {max_depth}")
    if shape.operators > max_operators:
        raise QueryRefused(f"query refused: {shape.operators:,} operators and UNIONs, above the limit of {max_operators:,}")
    if shape.service and not allow_service:
        raise QueryRefused("query refused: SERVICE (federated queries) is disabled; it would make this machine fetch the URL the query names")
