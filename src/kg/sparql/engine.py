"""SPARQL over the graph with two backends that return the same rows.

* ``oxigraph`` — a pyoxigraph Store. Over a built folder it is cached on disk next to
  graph.json (``graph.oxigraph/``, see `kg.rdf.store.open_store`), so only the first query
  after a build pays for loading; later ones open the store in milliseconds.
* ``rdflib`` — rdflib's in-memory engine over a Graph built from graph.json. Fine for
  small graphs; slow on millions of triples.
* ``auto`` — Oxigraph for big graphs (graph.json ≥ 2 MB, ~1,000 papers, or an estimated
  100k triples for an in-memory graph), rdflib below.

Queries may use the kg prefixes (kg:, dcterms:, skos:, …; `kg.rdf.terms.PREFIXES`) without
declaring them. Parameters are SEP-0007 substitutions: ``bindings={"dataset": "MuSiQue"}``
binds ``?dataset`` to the string "MuSiQue" before evaluation (``"<iri>"`` binds an IRI).
Rows come back as plain `Term`s, normalised so both backends compare equal.
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

import pyoxigraph as ox

from kg.errors import InputNotFound, KgError, QueryFailed, QuerySyntaxError, UnknownTerm
from kg.generations import GraphFolder, resolve
from kg.rdf.store import is_corruption, open_store, repair_store, to_store
from kg.rdf.terms import DEFAULT_BASE, PREFIXES
from kg.rdf.triples import estimated_triples
from kg.sparql.columns import star_order, star_position
from kg.sparql.guard import check_algebra, check_query
from kg.sparql.hints import excerpt, likely_expected, undeclared_terms
from kg.sparql.labels import UnmatchedLabel, apply_label_bindings, unmatched

if TYPE_CHECKING:  # a query over the cached store never needs networkx (~0.2 s to import)
    import networkx as nx

Backend = Literal["auto", "rdflib", "oxigraph"]
BACKENDS: tuple[Backend, ...] = get_args(Backend)
AUTO_OXIGRAPH_BYTES = 2_000_000
AUTO_OXIGRAPH_TRIPLES = 100_000
XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"


@dataclass(frozen=True, slots=True)
class Term:
    """One RDF term of a result row, as in the SPARQL JSON results format."""

    type: Literal["uri", "literal", "bnode", "triple"]
    value: str
    datatype: str | None = None  # None for plain strings (xsd:string) and language strings
    lang: str | None = None

    def __str__(self) -> str:
        return self.value


Row = tuple[Term | None, ...]


@dataclass(frozen=True)
class QueryResult:
    """Rows of a SELECT (or subject/predicate/object for CONSTRUCT); `boolean` for ASK."""

    variables: tuple[str, ...]
    rows: tuple[Row, ...] = ()
    boolean: bool | None = None
    backend: str = field(default="", compare=False)  # which engine answered
    # bound labels (`kg.sparql.labels`) that name no concept, when the query returned nothing
    unmatched: tuple[UnmatchedLabel, ...] = field(default=(), compare=False)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # Rows cross a pipe from the timed child (`kg.sparql.pool`): as plain tuples they pickle
        # ~10x faster than Term objects (0.5 s → 0.05 s for 11k rows).
        rows = [tuple(None if t is None else (t.type, t.value, t.datatype, t.lang) for t in row) for row in self.rows]
        return (_unpack_result, (self.variables, rows, self.boolean, self.backend, self.unmatched))


def _unpack_result(variables: tuple[str, ...], rows: list[tuple[Any, ...]], boolean: bool | None, backend: str, unmatched: tuple[UnmatchedLabel, ...]) -> QueryResult:
    terms = tuple(tuple(None if t is None else Term(*t) for t in row) for row in rows)
    return QueryResult(variables, terms, boolean, backend, unmatched)


# --- query text -------------------------------------------------------------------------


def example_queries() -> dict[str, str]:
    """The bundled example queries (``schemas/queries/*.rq``) by name."""
    folder = files("kg.schemas") / "queries"
    return {entry.name[:-3]: entry.read_text(encoding="utf-8") for entry in sorted(folder.iterdir(), key=lambda e: e.name) if entry.name.endswith(".rq")}


def read_query(spec: str) -> str:
    """`QUERY` as given on the command line: text, ``@FILE.rq``, or ``@name`` of an example."""
    if not spec.startswith("@"):
        return spec
    name = spec[1:]
    path = Path(name)
    if path.is_file():
        try:
            return path.read_text(encoding="utf-8")
        except UnicodeDecodeError as error:
            raise QuerySyntaxError(f"{name}: not UTF-8 text ({error.reason})") from error
    examples = example_queries()
    key = name[:-3] if name.endswith(".rq") else name
    if "/" not in key and key in examples:
        return examples[key]
    raise InputNotFound(f"no query file {name} (bundled examples: {', '.join(examples)})")


def parse_bindings(pairs: Mapping[str, str]) -> dict[str, ox.NamedNode | ox.Literal]:
    """``{"dataset": "MuSiQue", "paper": "<https://…>"}`` → pyoxigraph terms."""
    terms: dict[str, ox.NamedNode | ox.Literal] = {}
    for name, value in pairs.items():
        variable = name.lstrip("?$")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", variable):
            raise QuerySyntaxError(f"{name!r} is not a SPARQL variable name", binding="")
        if value.startswith("<") and value.endswith(">"):
            try:
                terms[variable] = ox.NamedNode(value[1:-1])
            except ValueError as error:
                raise QuerySyntaxError(f"invalid IRI {value} ({error})", binding=variable) from error
        else:
            terms[variable] = ox.Literal(value)
    return terms


# --- backends ---------------------------------------------------------------------------


class _Backend:
    """What both engines share: label parameters (`kg.sparql.labels`) around `_run`."""

    name = ""

    def query(self, text: str, bindings: Mapping[str, str] | None = None, *, allow_service: bool = False) -> QueryResult:
        """Run `text` with `bindings`; a label bound to a key variable matches case-, plural-
        and hyphen-insensitively, and if nothing came back, `unmatched` says which bound
        labels name no concept (with close labels)."""
        check_query(text, allow_service=allow_service)
        given = text
        text, bindings, labels = apply_label_bindings(text, bindings or {})
        result = in_star_order(self._run(text, bindings, allow_service=allow_service), given)
        if labels and result.boolean is None and not result.rows:
            ask = lambda q: bool(self._run(q, {}).boolean)  # noqa: E731
            select = lambda q: [tuple(str(term or "") for term in row) for row in self._run(q, {}).rows]  # noqa: E731
            result = replace(result, unmatched=unmatched(labels, ask, select))
        return result

    def _run(self, text: str, bindings: Mapping[str, str], *, allow_service: bool = False) -> QueryResult:
        raise NotImplementedError


def in_star_order(result: QueryResult, text: str) -> QueryResult:
    """`result` with the columns of a ``SELECT *`` in the order `text` first names them
    (`kg.sparql.columns`): rdflib's came from a set, Oxigraph's are sorted by name."""
    order = star_order(text, result.variables) if result.boolean is None else None
    if order is None or order == result.variables:
        return result
    index = [result.variables.index(name) for name in order]
    return replace(result, variables=order, rows=tuple(tuple(row[i] for i in index) for row in result.rows))


class StoreDamaged(QueryFailed):
    """The on-disk store failed a query with a corruption error (its files are damaged)."""

    @classmethod
    def of(cls, error: BaseException) -> StoreDamaged:
        return cls(f"the SPARQL store is damaged ({_one_line(str(error), 120)})")


class OxigraphBackend(_Backend):
    name = "oxigraph"

    def __init__(self, store: ox.Store, folder: GraphFolder | None = None) -> None:
        self.store = store
        self.folder = folder  # the built folder whose cached store this is (None: in memory)

    def _run(self, text: str, bindings: Mapping[str, str], *, allow_service: bool = False) -> QueryResult:
        check_query(text, allow_service=allow_service)  # before the parser: deep nesting crashes it
        substitutions: dict[ox.Variable, ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple] = {ox.Variable(k): v for k, v in parse_bindings(bindings or {}).items()}
        try:
            result = self.store.query(text, prefixes=PREFIXES, substitutions=substitutions or None)
        except SyntaxError as error:
            raise oxigraph_syntax_error(str(error), text) from error
        except (OSError, ValueError, RuntimeError) as error:
            unprojected = re.search(r"does not contains? variable \?(\w+) in its SELECT projection", str(error))
            if unprojected:
                raise _unprojected(unprojected.group(1)) from error
            if is_corruption(error):
                raise StoreDamaged.of(error) from error
            raise QueryFailed(f"SPARQL query failed: {error}") from error
        try:
            if isinstance(result, ox.QueryBoolean):
                return QueryResult(variables=(), boolean=bool(result), backend=self.name)
            if isinstance(result, ox.QuerySolutions):
                variables = tuple(v.value for v in result.variables)
                return QueryResult(variables=variables, rows=_ox_rows(result), backend=self.name)
            rows = tuple((_ox_term(t.subject), _ox_term(t.predicate), _ox_term(t.object)) for t in result)
            return QueryResult(variables=("subject", "predicate", "object"), rows=rows, backend=self.name)
        except (OSError, ValueError, RuntimeError) as error:
            if is_corruption(error):
                raise StoreDamaged.of(error) from error
            raise QueryFailed(f"SPARQL query failed: {error}") from error


def oxigraph_syntax_error(message: str, text: str | None = None) -> QuerySyntaxError:
    """pyoxigraph's "error at 3:17: expected one of …" as one line (the expected tokens cut to
    the likely few), with the position and, given the query `text`, its excerpt."""
    match = re.match(r"error at (\d+):(\d+)(?:-\d+:\d+)?: (.*)", message, re.S)
    if match:
        line, column, detail = match.groups()
        if "Prefix not found" in detail:
            detail = "undeclared prefix"
        expected = re.match(r"expected one of (.*)", detail, re.S)
        if expected:
            likely = likely_expected(expected.group(1))
            detail = f"expected {likely}" if "," not in likely else f"expected one of {likely}"
        return positioned(QuerySyntaxError(f"SPARQL syntax error at line {line}, column {column}: {_one_line(detail)}"), int(line), int(column), text)
    return QuerySyntaxError(f"SPARQL syntax error: {_one_line(message)}")


def positioned(error: QuerySyntaxError, line: int, column: int, text: str | None) -> QuerySyntaxError:
    error.position = (line, column)
    if text is not None:
        error.excerpt = excerpt(text, line, column)
    return error


def _unprojected(name: str) -> QueryFailed:
    return QueryFailed(f"the query must SELECT ?{name} to bind it", binding=name)


def _oxigraph_syntax_check(text: str) -> QuerySyntaxError | None:
    try:
        ox.Store().query(text, prefixes=PREFIXES)  # an empty store: parsing is the work
    except SyntaxError as error:
        return oxigraph_syntax_error(str(error), text)
    except Exception:  # noqa: BLE001 - only the syntax verdict matters here
        return None
    return None


def _rdflib_unknown_prefix(text: str, message: str) -> QuerySyntaxError | None:
    """rdflib reports an undeclared prefix without a position: find it in the query."""
    match = re.search(r"Unknown namespace prefix : (\S+)", message)
    if not match:
        return None
    used = re.search(rf"(?<![\w<:]){re.escape(match.group(1))}:", text)
    if not used:
        return None
    line = text.count("\n", 0, used.start()) + 1
    column = used.start() - (text.rfind("\n", 0, used.start()) + 1) + 1
    return positioned(QuerySyntaxError(f"SPARQL syntax error at line {line}, column {column}: undeclared prefix {match.group(1)}:"), line, column, text)


def _one_line(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


_PLAIN_DATATYPES = (XSD_STRING, "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString")


def _ox_rows(solutions: Any) -> tuple[Row, ...]:
    """Rows of `Term`s, each distinct term converted once (labels and counts repeat: 16k rows
    of methods_per_task convert in 0.08 s instead of 0.13, and pickle smaller)."""
    cache: dict[Any, Term | None] = {}
    get = cache.get
    rows = []
    for solution in solutions:
        row = []
        for term in solution:
            converted = get(term)
            if converted is None and term is not None:
                converted = cache[term] = _ox_term(term)
            row.append(converted)
        rows.append(tuple(row))
    return tuple(rows)


def _ox_term(term: Any) -> Term | None:
    kind = type(term)
    if kind is ox.NamedNode:
        return Term("uri", term.value)
    if kind is ox.Literal:
        if term.language:
            return Term("literal", term.value, None, term.language)
        datatype = term.datatype.value
        return Term("literal", term.value, None if datatype in _PLAIN_DATATYPES else datatype)
    if term is None:
        return None
    if kind is ox.BlankNode:
        return Term("bnode", term.value)
    return Term("triple", str(term))


class RdflibBackend(_Backend):
    name = "rdflib"

    def __init__(self, graph: Any) -> None:  # an rdflib Graph or Dataset
        self.graph = graph

    @classmethod
    def over(cls, graph: nx.DiGraph[str], *, base: str = DEFAULT_BASE) -> RdflibBackend:
        """The backend over `graph`'s triples, held as the default graph of a Dataset so that
        ``GRAPH ?g`` finds no named graph, as on Oxigraph (a plain rdflib Graph raises)."""
        import rdflib

        from kg.rdf.convert import to_rdflib  # imports rdflib: only for this backend

        dataset = rdflib.Dataset(default_union=False)
        to_rdflib(graph, base=base, into=dataset.default_graph)
        return cls(dataset)

    def _run(self, text: str, bindings: Mapping[str, str], *, allow_service: bool = False) -> QueryResult:
        check_query(text, allow_service=allow_service)  # rdflib follows SERVICE too
        import rdflib
        from pyparsing import ParseException
        from rdflib.plugins.sparql import prepareQuery

        from kg.rdf.convert import to_rdflib_term
        from kg.sparql import rdflib_fixes

        rdflib_fixes.install()  # an empty VALUES block crashed rdflib's evaluator
        init = {k: to_rdflib_term(v) for k, v in parse_bindings(bindings or {}).items()}
        try:
            prepared = prepareQuery(text, initNs=PREFIXES)
        except ParseException as error:
            # pyparsing's messages are vague ("Expected SelectQuery"): prefer Oxigraph's
            # parser, which names what it expected where, when it rejects the query too.
            fallback = positioned(QuerySyntaxError(f"SPARQL syntax error at line {error.lineno}, column {error.col}: {_one_line(error.msg)}"), error.lineno, error.col, text)
            raise (_oxigraph_syntax_check(text) or fallback) from error
        except Exception as error:  # rdflib reports e.g. unknown prefixes as bare Exceptions
            raise (_rdflib_unknown_prefix(text, str(error)) or QuerySyntaxError(f"SPARQL syntax error: {_one_line(str(error))}")) from error
        check_algebra(prepared, allow_service=allow_service)  # what rdflib will run, escapes expanded
        if prepared.algebra.name == "SelectQuery" and star_position(text) is not None:
            rdflib_fixes.select_star_columns(prepared.algebra)
        try:
            with warnings.catch_warnings():  # rdflib 7.6's engine calls its own deprecated Dataset API (default_context, contexts): nothing kg can change
                warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"rdflib\.")
                result = self.graph.query(prepared, initBindings=init)
                projected = list(result.vars or ()) if result.type == "SELECT" else []
                solutions = list(result.bindings) if result.type == "SELECT" else []
            if result.type == "ASK":
                return QueryResult(variables=(), boolean=bool(result.askAnswer), backend=self.name)
            if result.type == "SELECT":
                variables = tuple(str(v) for v in projected)
                for name in init:
                    if name not in variables:  # as Oxigraph (SEP-0007) requires
                        raise _unprojected(name)
                # The solutions themselves (evaluated above): iterating the result drops those that bind no variable.
                rows = tuple(tuple(_rdflib_term(solution.get(v)) for v in projected) for solution in solutions)
                return QueryResult(variables=variables, rows=rows, backend=self.name)
            rows = tuple(tuple(_rdflib_term(t) for t in triple) for triple in result.graph)
            return QueryResult(variables=("subject", "predicate", "object"), rows=rows, backend=self.name)
        except rdflib.exceptions.Error as error:
            raise QueryFailed(f"SPARQL query failed: {error}") from error
        except (OSError, ValueError, TypeError, KeyError, ZeroDivisionError) as error:
            raise QueryFailed(f"SPARQL query failed: {type(error).__name__}: {error}") from error


def _rdflib_term(term: Any) -> Term | None:
    import rdflib

    if term is None:
        return None
    if isinstance(term, rdflib.URIRef):
        return Term("uri", str(term))
    if isinstance(term, rdflib.BNode):
        return Term("bnode", str(term))
    if isinstance(term, rdflib.Literal):
        datatype = str(term.datatype) if term.datatype is not None else None
        if term.language or datatype == XSD_STRING:
            datatype = None
        return Term("literal", str(term), datatype, term.language)
    return Term("triple", str(term))


SparqlBackend = OxigraphBackend | RdflibBackend


def open_backend(
    source: nx.DiGraph[str] | str | os.PathLike[str],
    *,
    backend: Backend = "auto",
    base: str = DEFAULT_BASE,
    cache: bool = True,
) -> SparqlBackend:
    """A loaded backend over an in-memory graph or a built folder (``out/``)."""
    from kg.graph import load

    if backend not in BACKENDS:
        raise QueryFailed(f"unknown backend {backend!r} (choose {', '.join(BACKENDS)})")
    if not isinstance(source, (str, os.PathLike)):  # an in-memory graph
        if backend == "auto":
            backend = "oxigraph" if estimated_triples(source) >= AUTO_OXIGRAPH_TRIPLES else "rdflib"
        if backend == "oxigraph":
            return OxigraphBackend(to_store(source, base=base))
        return RdflibBackend.over(source, base=base)
    view = resolve(source)  # one generation for the size, the store stamp and the graph
    graph_file = view.graph
    if backend == "auto":
        size = graph_file.stat().st_size if graph_file.is_file() else 0
        backend = "oxigraph" if size >= AUTO_OXIGRAPH_BYTES else "rdflib"
    if backend == "oxigraph":
        if not graph_file.is_file():
            load(graph_file)  # raises GraphNotFound with the usual message
        return OxigraphBackend(open_store(view, base=base, cache=cache), view if cache else None)
    return RdflibBackend.over(load(graph_file), base=base)


def query(
    source: nx.DiGraph[str] | str | os.PathLike[str],
    text: str,
    *,
    backend: Backend = "auto",
    bindings: Mapping[str, str] | None = None,
    base: str = DEFAULT_BASE,
    cache: bool = True,
    timeout: float | None = None,
    allow_service: bool = False,
) -> QueryResult:
    """Run one SPARQL query over a graph or a built folder.

    The text is checked first (`kg.sparql.guard.check_query`: size, nesting, SERVICE unless
    `allow_service`). The query runs in a forked child, so that a crash of the engine is a
    `WorkerCrashed` refusal, not the end of this process; with a `timeout` (seconds) the child
    is killed past it (`QueryTimedOut`). Loading the graph or building the store is not timed.
    """
    check_query(text, allow_service=allow_service)
    for term in undeclared_terms(text):  # it runs, but matches nothing: say so
        warnings.warn(term.message(), UnknownTerm, stacklevel=2)
    engine = open_backend(source, backend=backend, base=base, cache=cache)
    from kg.sparql.pool import call_with_timeout

    try:
        return call_with_timeout(partial(engine.query, allow_service=allow_service), text, bindings, timeout=timeout)
    except StoreDamaged as error:
        if not isinstance(engine, OxigraphBackend) or engine.folder is None:
            raise
        # The cached store's files are damaged: rebuilt from the build's own files, asked again.
        del engine.store
        try:
            engine = OxigraphBackend(repair_store(engine.folder, base=base), engine.folder)
        except KgError as repair_error:
            raise QueryFailed(f"{error.message}, and rebuilding it failed: {repair_error.message}") from repair_error
        return call_with_timeout(partial(engine.query, allow_service=allow_service), text, bindings, timeout=timeout)
