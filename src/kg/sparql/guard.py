"""Checks on what a SPARQL engine will run (`kg sparql`, `kg serve`, both backends).

pyoxigraph's parser and query algebra recurse: measured with pyoxigraph 0.5 on an 8 MB stack,
~3,000 nested ``{ }`` groups (or ~5,000 nested parentheses), flat operator chains of
~7,000 ``+`` terms or ``UNION`` branches, and flat chains of ~3,000 ``BIND``/``MINUS`` or
~10,000 ``FILTER`` clauses overflow the stack and kill the process with a segfault, which
no ``try`` catches; so do the lists the grammar writes without separators: an RDF collection
``( 1 1 … )`` of ~4,500 items, ~20,000 groups ``{ … }`` in a row. Every list-like shape of
the grammar is bounded by one of the counts: operators (paths' ``/ | ^ !``), separators
(triple patterns, object and predicate lists, argument and ``IN`` lists), items of one
``( … )`` (collections, ``VALUES`` rows and variable lists, arguments), bracketed groups in all
(groups in a row, ``VALUES`` rows, blank nodes) and terms in all (a one-variable ``VALUES``
block, ``SELECT``/``ORDER BY``/``GROUP BY`` lists, ``FROM``, ``DESCRIBE``, ``PREFIX``).
`check_query` refuses such text first, with limits far below those, and
refuses ``SERVICE`` (a query naming any URL would make the engine fetch it) unless the
caller allows it.

The text checked is the text the parsers read: SPARQL lets ``\\u0053ERVICE`` stand for
``SERVICE`` anywhere (codepoint escapes are expanded before parsing, as rdflib does), so
`check_query` expands them first. rdflib's parsed algebra is checked again by
`check_algebra` (SERVICE, ``FROM``/``FROM NAMED``, which rdflib would fetch from the web, and
its size and depth). pyoxigraph exposes no algebra to Python; what its parser accepts is
bounded by the text checks, and every query runs in a child process (`kg.sparql.pool`), so
a crash is reported as a refusal, never a segfault of the command.

`scan` is a small tokenizer that knows just enough SPARQL to skip what may hold brackets
or keywords innocently: a backslash escape outside strings (``e:x\\#`` is a prefixed name whose
local part ends in an escaped ``#``, not a comment; ``e:x\\'`` is no string), string literals (``'…'``, ``"…"``, and the long ``'''…'''``,
``\"\"\"…\"\"\"`` forms, with backslash escapes), IRIs (``<…>``, told apart from the ``<``
operator as the grammar's IRIREF rule does) and ``#`` comments. Everything else counts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kg.errors import QueryFailed, QuerySyntaxError

MAX_QUERY_CHARS = 200_000
MAX_DEPTH = 64  # nested { } ( ) [ ] together; real queries stay below ~10
MAX_OPERATORS = 1_000  # binary operators and UNIONs: each chain is one level of recursion
MAX_CLAUSES = 1_000  # FILTER, BIND, MINUS, OPTIONAL, …: each is one more node of a flat chain
# Triple patterns in all, weighted by what each costs the engine's stack (pyoxigraph 0.5.13, 8 MB,
# measured alone and mixed): ~8,000 `?s ?p ?o .` overflow it, ~4,000 collection items summed over
# the query (each stands for two patterns, rdf:first and rdf:rest: five collections of 990 items
# crashed, each under MAX_LIST_ITEMS) and ~2,600 IRIs a DESCRIBE names; mixed, they add up.
MAX_SEPARATORS = 2_000  # `.` `;` `,` + 2 per collection item + 3 per DESCRIBE IRI: a quarter of the crash
COLLECTION_ITEM_WEIGHT = 2
DESCRIBE_IRI_WEIGHT = 3
# The lists the grammar writes without separators, counted too: an RDF collection `( 1 2 … )` of
# ~4,500 items, or ~20,000 groups `{ … } { … }` in a row, overflow the stack just the same.
MAX_LIST_ITEMS = 1_000  # items of one `( … )`: a collection, a VALUES row or variable list, arguments
MAX_GROUPS = 2_000  # bracketed groups in all: `{ … }` patterns, `( … )` collections and rows, `[ … ]` nodes
MAX_TERMS = 10_000  # variables, IRIs, literals, numbers, prefixed names, blank nodes: every other list's items
MAX_ALGEBRA_NODES = 20_000  # rdflib's parsed algebra (a real query has a few hundred)
CLAUSE_KEYWORDS = frozenset({"FILTER", "BIND", "MINUS", "OPTIONAL", "VALUES", "GRAPH", "SERVICE", "EXISTS", "SELECT", "UNION"})
# SERVICE as the grammar needs it (`SERVICE SILENT? VarOrIri`), matched in the raw and the
# expanded text whatever the tokenizer makes of strings, IRIs and comments around it: a query
# can hide the keyword from a tokenizer (a fake IRI `<'x>`, an escaped quote that expands to a
# long-string opener, a number glued to it: `1SERVICE`), not from this. The price: a string
# holding "service <…" or "service ?x" is refused too.
_GAP = r"(?:\s|\#[^\n]*(?:\n|$))*"
SERVICE_CALL = re.compile(r"(?<![A-Za-z_?$:])service" + _GAP + r"(?:silent" + _GAP + r")?(?:<|[?$]|[^\s{}()<>\"'\#]*:)", re.I)
CODEPOINT_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")

SPARQL_TOKEN = re.compile(
    r'''(?P<skip>\\[\s\S]|"""(?:[^"\\]|\\.|"(?!""))*(?:"""|\Z)'''
    r"""|'''(?:[^'\\]|\\.|'(?!''))*(?:'''|\Z)"""
    r'''|"(?:[^"\\\n\r]|\\.)*(?:"|(?=[\n\r])|\Z)'''
    r"""|'(?:[^'\\\n\r]|\\.)*(?:'|(?=[\n\r])|\Z)"""
    r"""|<[^<>"{}|^`\\\x00-\x20]*>"""
    r"""|\#[^\n\r]*)"""
    r"""|(?P<open>[{(\[])|(?P<close>[})\]])"""
    r"""|(?P<var>[?$]\w+)"""
    r"""|(?P<name>(?:[A-Za-z_][\w.-]*[\w-]|[A-Za-z_])?:(?:[\w.:%-]*[\w:%-])?)"""  # a prefixed name or blank node label (no trailing `.`)
    r"""|(?P<number>(?<![\w.])(?:\d+\.\d*[eE][+-]?\d+|\d*\.\d+(?:[eE][+-]?\d+)?|\d+(?:[eE][+-]?\d+)?))"""
    r"""|(?P<word>(?<![?$:\w])[A-Za-z]+(?![\w:]))"""
    r"""|(?P<datatype>\^\^)"""  # `"1"^^xsd:integer`: one typed literal, not two `^` path operators
    r"""|(?P<op>\|\||&&|[-+*/|^!=<>])"""
    r"""|(?P<sep>[;,]|(?<!\d)\.|\.(?!\d))""",  # triple-pattern and list separators (not a decimal's point)
    re.S,
)


SERVICE_REFUSED = "query refused: SERVICE (federated queries) is disabled; it would make this machine fetch the URL the query names"
# The keywords an update operation begins with (SPARQL 1.1 Update); a query begins SELECT, CONSTRUCT, ASK or DESCRIBE.
UPDATE_KEYWORDS = frozenset({"INSERT", "DELETE", "LOAD", "CLEAR", "DROP", "CREATE", "ADD", "MOVE", "COPY", "WITH"})


class QueryRefused(QuerySyntaxError):
    """A query refused before parsing (too deep, too long, or SERVICE); exit code 13."""


class UpdateRefused(QueryRefused):
    """A SPARQL update (``INSERT DATA …``) where a query was expected: kg's graphs are read-only.
    Exit code 13; `kg serve` answers ``405``, as for an ``update=`` form."""


class QueryTimedOut(QueryFailed):
    """A query stopped because it ran past its time limit; exit code 14."""


@dataclass(frozen=True, slots=True)
class QueryShape:
    depth: int  # deepest nesting of brackets outside strings, IRIs and comments
    operators: int  # operator tokens and UNION keywords
    service: bool  # the SERVICE keyword appears
    clauses: int = 0  # CLAUSE_KEYWORDS: group elements and sub-selects
    separators: int = 0  # `.` `;` `,` outside strings, IRIs and comments
    list_items: int = 0  # the most items (terms and groups) directly inside one `( … )`
    groups: int = 0  # bracketed groups `{ }` `( )` `[ ]`
    terms: int = 0  # TERM_WORDS, variables, IRIs, literals (a typed one once), numbers, prefixed names, blank node labels
    collection_items: int = 0  # items of RDF collections `( … )` in triple patterns, summed over the query
    describe_iris: int = 0  # IRIs and prefixed names a DESCRIBE names (its variables cost nothing)

    @property
    def patterns(self) -> int:
        """The triple patterns the query stands for, weighted by their cost to the engine's stack."""
        return self.separators + COLLECTION_ITEM_WEIGHT * self.collection_items + DESCRIBE_IRI_WEIGHT * self.describe_iris


# Words that are terms: `a` (rdf:type), the booleans, and UNDEF, a value of a VALUES row.
TERM_WORDS = frozenset({"A", "TRUE", "FALSE", "UNDEF"})


def expand_codepoints(text: str) -> str:
    """`text` with SPARQL's ``\\uXXXX`` and ``\\UXXXXXXXX`` escapes expanded, as a parser would
    (an escape that names no character is kept: the parser will refuse it)."""

    def expand(match: re.Match[str]) -> str:
        code = int(match.group(1) or match.group(2), 16)
        return chr(code) if code <= 0x10FFFF else match.group()

    return CODEPOINT_ESCAPE.sub(expand, text) if "\\" in text else text


def scan(text: str) -> QueryShape:
    """The nesting depth, operator and clause counts and SERVICE use of `text` (which need
    not parse), after codepoint escapes are expanded."""
    text = expand_codepoints(text)
    depth = deepest = operators = clauses = separators = widest = groups = terms = collected = described = 0
    service = values = describing = typed = literal = False
    items: list[int] = []  # per open bracket, outermost first: the terms and groups directly inside it
    kinds: list[str] = []  # per open bracket: "(" a list, "C" an RDF collection, "{" a pattern, "V" a VALUES block, "[" a blank node
    before: list[str] = ["", ""]  # the last two tokens' kinds ("word", "op", "term", "name", "var", "open", …), last first
    for match in SPARQL_TOKEN.finditer(text):
        kind = match.lastgroup
        if kind == "skip" and match.group()[:1] == "#":
            continue  # a comment
        term = kind in ("var", "name", "number") or (kind == "skip" and match.group()[0] in "<'\"")
        seen = "name" if kind == "name" or (kind == "skip" and match.group()[0] == "<") else "term" if term else kind or ""
        if kind == "open":
            if items:
                items[-1] += 1  # a group is an item of the list it is in
            items.append(0)
            bracket = match.group()
            if bracket == "(" and _opens_collection(kinds[-1] if kinds else "", before):
                bracket = "C"
            elif bracket == "{" and values:
                bracket, values = "V", False
            kinds.append(bracket)
            groups += 1
            depth += 1
            deepest = max(deepest, depth)
            describing = False
        elif kind == "close":
            if items:
                inside, bracket = items.pop(), kinds.pop()
                widest = max(widest, inside) if bracket in "(C" else widest
                collected += inside if bracket == "C" else 0
            depth = max(0, depth - 1)
        elif kind == "op":
            operators += 1
        elif kind == "sep":
            separators += 1
        elif kind == "word":
            word = match.group().upper()
            term = word in TERM_WORDS
            seen = "term" if term else "word"
            if word in CLAUSE_KEYWORDS:
                clauses += 1
            if word == "SERVICE":
                service = True
            elif word == "UNION":
                operators += 1
            values = values or word == "VALUES"
            describing = word == "DESCRIBE" or (describing and term)
        if kind == "datatype":
            if literal:
                typed = True
            else:  # no string before it: two inverse-path `^` (the grammar has no such path, a parser may)
                operators += 2
        elif typed and term:  # the datatype IRI of a typed literal: the literal was counted
            term = typed = False
        literal = kind == "skip" and match.group()[0] in "'\""
        if term:
            terms += 1
            if items:
                items[-1] += 1
            if describing and kind != "var":
                described += 1
        before = [seen, before[0]]
    open_lists = [inside for inside, bracket in zip(items, kinds, strict=True) if bracket in "(C"]  # lists left open
    widest = max([widest, *open_lists])
    collected += sum(inside for inside, bracket in zip(items, kinds, strict=True) if bracket == "C")
    return QueryShape(deepest, operators, service, clauses, separators, widest, groups, terms, collected, described)


def _opens_collection(enclosing: str, before: list[str]) -> bool:
    """Whether a `(` is an RDF collection: in a triple pattern (directly in a `{ … }` pattern, a
    `[ … ]` node or a collection) and not a call or expression: after no keyword, function name
    or operator, and no prefixed name or IRI that a keyword precedes (``FILTER ex:f(…)``)."""
    if enclosing not in ("{", "[", "C"):
        return False
    last, second = before
    return last not in ("word", "op") and not (last == "name" and second == "word")


def update_keyword(text: str) -> str | None:
    """The keyword that makes `text` a SPARQL update (``INSERT``, ``DELETE``, ``LOAD``, …): its
    first word after the prologue (``PREFIX``/``BASE`` lines); None for a query."""
    for match in SPARQL_TOKEN.finditer(expand_codepoints(text)):
        if match.lastgroup == "word" and match.group().upper() not in ("PREFIX", "BASE"):
            return match.group().upper() if match.group().upper() in UPDATE_KEYWORDS else None
    return None


def check_query(
    text: str, *, allow_service: bool = False, max_chars: int = MAX_QUERY_CHARS, max_depth: int = MAX_DEPTH,
    max_operators: int = MAX_OPERATORS, max_clauses: int = MAX_CLAUSES,
) -> None:
    """Raise `QueryRefused` when `text` is too long, nests too deep, chains too many
    operators or clauses, or uses SERVICE without `allow_service` (escaped or not), and
    `UpdateRefused` when it is an update, not a query."""
    if len(text) > max_chars:
        raise QueryRefused(f"query refused: {len(text):,} characters, above the limit of {max_chars:,}")
    keyword = update_keyword(text)
    if keyword is not None:
        raise UpdateRefused(f"updates are refused: {keyword} is a SPARQL update, and the graph is read-only (ask SELECT, ASK, CONSTRUCT or DESCRIBE)")
    expanded = expand_codepoints(text)
    surrogate = re.search("[\ud800-\udfff]", expanded)
    if surrogate:  # `\uD800`: no character, and no answer could be printed or sent
        raise QueryRefused(f"query refused: it holds a lone surrogate U+{ord(surrogate.group()):04X}, which is not a character")
    shape = scan(text)
    if shape.depth > max_depth:
        raise QueryRefused(f"query refused: brackets nested {shape.depth:,} deep, above the limit of {max_depth}")
    if shape.operators > max_operators:
        raise QueryRefused(f"query refused: {shape.operators:,} operators and UNIONs, above the limit of {max_operators:,}")
    if shape.clauses > max_clauses:
        raise QueryRefused(f"query refused: {shape.clauses:,} clauses (FILTER, BIND, MINUS, OPTIONAL, …), above the limit of {max_clauses:,}")
    if shape.list_items > MAX_LIST_ITEMS:
        raise QueryRefused(f"query refused: {shape.list_items:,} items in one ( … ) list (an RDF collection, a VALUES row, arguments), above the limit of {MAX_LIST_ITEMS:,}")
    if shape.patterns > MAX_SEPARATORS:
        raise QueryRefused(
            f"query refused: {shape.patterns:,} triple patterns and list items (an RDF collection's item counts {COLLECTION_ITEM_WEIGHT}, "
            f"an IRI DESCRIBE names {DESCRIBE_IRI_WEIGHT}), above the limit of {MAX_SEPARATORS:,}",
        )
    if shape.groups > MAX_GROUPS:
        raise QueryRefused(f"query refused: {shape.groups:,} bracketed groups ({{ }}, ( ), [ ]), above the limit of {MAX_GROUPS:,}")
    if shape.terms > MAX_TERMS:
        raise QueryRefused(f"query refused: {shape.terms:,} terms (variables, IRIs, literals, …), above the limit of {MAX_TERMS:,}")
    if not allow_service and (shape.service or SERVICE_CALL.search(text) or SERVICE_CALL.search(expanded)):
        raise QueryRefused(SERVICE_REFUSED)


def check_algebra(query: Any, *, allow_service: bool = False, max_nodes: int = MAX_ALGEBRA_NODES, max_depth: int = 4 * MAX_DEPTH) -> None:
    """Raise `QueryRefused` when rdflib's parsed query (`prepareQuery(...)`) would call a
    service, load a graph from the web (``FROM``), or is too big or deep to evaluate safely.
    Walked without recursion, so a deep algebra cannot overflow this check itself."""
    from rdflib.plugins.sparql.parserutils import CompValue

    algebra = getattr(query, "algebra", query)
    if algebra.get("datasetClause"):
        raise QueryRefused("query refused: FROM and FROM NAMED are not supported on the rdflib backend (it would fetch the graphs they name); the oxigraph backend reads them from the store")
    nodes = 0
    stack: list[tuple[Any, int]] = [(algebra, 1)]
    while stack:
        node, depth = stack.pop()
        nodes += 1
        if nodes > max_nodes:
            raise QueryRefused(f"query refused: its algebra has more than {max_nodes:,} nodes")
        if depth > max_depth:
            raise QueryRefused(f"query refused: its algebra is nested more than {max_depth} deep")
        if isinstance(node, CompValue):
            if node.name == "ServiceGraphPattern" and not allow_service:
                raise QueryRefused(SERVICE_REFUSED)
            children: Iterable[Any] = node.values()
        elif isinstance(node, (list, tuple)):
            children = node
        else:
            continue
        stack.extend((child, depth + 1) for child in children)  # terms count as nodes too
