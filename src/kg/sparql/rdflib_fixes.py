"""A fix to rdflib's SPARQL algebra, so that the rdflib backend answers as Oxigraph does.

rdflib 7 translates a ``VALUES`` block with no rows (``VALUES ?a { }``) or no variables
(``VALUES () { () }``) to a bare list where its evaluator expects a ``values`` node, and every
such query failed with ``AttributeError: 'list' object has no attribute 'name'`` (exit 14).
`install` replaces ``rdflib.plugins.sparql.algebra.translateValues`` with `translate_values`,
which always makes that node: no rows give no solutions, a row of no variables one empty
solution, as the SPARQL algebra says and Oxigraph answers. It is installed once, by the rdflib
backend before it parses a query (`kg.sparql.engine.RdflibBackend`); for every other block the
node is the one rdflib makes (with the block's variables kept as ``var``).

`select_star_columns` gives a ``SELECT *`` the variables of a trailing ``VALUES`` block
(``SELECT * WHERE { ?s ?p ?o } VALUES ?z { 1 }``), which rdflib left out and Oxigraph lists.
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
        node = Values([{} for _ in rows])
    elif rows and not isinstance(rows[0], list):  # `VALUES ?a { 1 2 }`: one value per row
        node = Values([{variables[0]: value} for value in rows])
    else:
        node = Values([dict(zip(variables, row, strict=False)) for row in rows])
    node["var"] = variables  # the block's variables, rows or none: `select_star_columns` needs them
    return node


def select_star_columns(algebra: CompValue) -> None:
    """Add the variables of a trailing ``VALUES`` (after the ``WHERE`` pattern) to the columns of
    `algebra`, a ``SELECT *``: rdflib takes them from the pattern only, Oxigraph (and SPARQL's
    in-scope rule) from both. The block is the `Join` rdflib puts under the projection (and any
    ``ORDER BY``)."""
    project = algebra.p
    while project.name in ("Slice", "Distinct", "Reduced"):  # LIMIT/OFFSET, DISTINCT, REDUCED sit above it
        project = project.p
    if project.name != "Project":
        return
    node = project.p
    while node.name == "OrderBy":
        node = node.p
    if node.name != "Join" or node.p2.name != "ToMultiSet" or node.p2.p.name != "values":
        return
    for variable in node.p2.p.get("var", ()):
        if variable not in project.PV:
            project.PV.append(variable)
    algebra["PV"] = project.PV


@functools.cache
def install() -> None:
    import rdflib.plugins.sparql.algebra as algebra

    algebra.translateValues = translate_values
