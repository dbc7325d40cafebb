"""A fix to rdflib's SPARQL algebra, so that the rdflib backend answers as Oxigraph does.

rdflib 7 translates a ``VALUES`` block with no rows (``VALUES ?a { }``) or no variables
(``VALUES () { () }``) to a bare list where its evaluator expects a ``values`` node, and every
such query failed with ``AttributeError: 'list' object has no attribute 'name'`` (exit 14).
`install` replaces ``rdflib.plugins.sparql.algebra.translateValues`` with `translate_values`,
which always makes that node: no rows give no solutions, a row of no variables one empty
solution, as the SPARQL algebra says and Oxigraph answers. It is installed once, by the rdflib
backend before it parses a query (`kg.sparql.engine.RdflibBackend`); for every other block the
node is the one rdflib makes.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rdflib.plugins.sparql.parserutils import CompValue


def translate_values(v: CompValue) -> CompValue:
    """rdflib's ``translateValues`` (its argument's name kept), with a ``values`` node whatever the block holds."""
    from rdflib.plugins.sparql.algebra import Values  # rdflib only loads with the rdflib backend

    variables = list(v.var or ())
    rows = list(v.value or ())
    if not variables:
        return Values([{} for _ in rows])
    if rows and not isinstance(rows[0], list):  # `VALUES ?a { 1 2 }`: one value per row
        return Values([{variables[0]: value} for value in rows])
    return Values([dict(zip(variables, row, strict=False)) for row in rows])


@functools.cache
def install() -> None:
    import rdflib.plugins.sparql.algebra as algebra

    algebra.translateValues = translate_values
