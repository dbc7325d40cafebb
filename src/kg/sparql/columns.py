"""The columns of ``SELECT *``: the query's variables in the order it first names them.

SPARQL leaves that order to the engine: rdflib took it from a set (``s,o,p`` one run,
``p,s,o`` the next), Oxigraph sorts the names. kg puts the columns in the order the variables
first appear in the query text (``?s ?p ?o`` gives s, p, o) on both backends and in
`kg serve`, so a CSV's columns never move between runs or backends. Which variables a
``SELECT *`` returns is still the engine's to say; only their order is set here.
"""

from __future__ import annotations

from collections.abc import Sequence

from kg.sparql.guard import SPARQL_TOKEN, expand_codepoints

_QUERY_FORMS = frozenset({"SELECT", "CONSTRUCT", "ASK", "DESCRIBE"})


def star_position(text: str) -> int | None:
    """Where the ``*`` of a top-level ``SELECT *`` (or ``SELECT DISTINCT *`` …) is in
    `expand_codepoints(text)`; None for any other query. The first query-form keyword is the
    top level's: a sub-select only comes inside ``{ }``, after it."""
    after_select = False
    for match in SPARQL_TOKEN.finditer(expand_codepoints(text)):
        kind = match.lastgroup
        if kind == "skip":
            continue
        word = match.group().upper() if kind == "word" else ""
        if not after_select:
            if word in _QUERY_FORMS:
                if word != "SELECT":
                    return None
                after_select = True
            continue
        if word in ("DISTINCT", "REDUCED"):
            continue
        return match.start() if match.group() == "*" else None
    return None


def first_appearances(text: str) -> dict[str, int]:
    """Each variable of `text` (``?x`` and ``$x`` alike) → the rank of its first appearance,
    outside strings, IRIs and comments."""
    seen: dict[str, int] = {}
    for match in SPARQL_TOKEN.finditer(expand_codepoints(text)):
        if match.lastgroup == "var":
            seen.setdefault(match.group()[1:], len(seen))
    return seen


def star_order(text: str, variables: Sequence[str]) -> tuple[str, ...] | None:
    """`variables` (the columns an engine gave) in the order `text` first names them, when
    `text` is a ``SELECT *`` (names the text lacks keep their place after the others); None
    for any other query, whose columns are the ones it lists."""
    if star_position(text) is None:
        return None
    rank = first_appearances(text)
    return tuple(sorted(variables, key=lambda name: (rank.get(name, len(rank)), variables.index(name))))


def explicit_projection(text: str, variables: Sequence[str]) -> str:
    """`text` (a ``SELECT *``) with its ``*`` replaced by ``?v1 ?v2 …``, in that order."""
    position = star_position(text)
    if position is None:
        raise ValueError("not a SELECT * query")
    expanded = expand_codepoints(text)
    return expanded[:position] + " ".join(f"?{name}" for name in variables) + expanded[position + 1 :]
