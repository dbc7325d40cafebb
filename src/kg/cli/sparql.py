"""`kg sparql`: run a SPARQL query over a built graph (never imports spaCy)."""

from __future__ import annotations

import csv
import io
import json

import click

from kg.cli.common import allow_service_option, base_option, chosen, graph_option, timeout_option
from kg.errors import ExitCode
from kg.sparql.engine import BACKENDS, QueryResult, Term


def parse_bind(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> dict[str, str]:
    bindings: dict[str, str] = {}
    for value in values:
        name, sep, term = value.partition("=")
        if not sep or not name:
            raise click.BadParameter(f"expected NAME=VALUE, got {value!r}", ctx=ctx, param=param)
        bindings[name] = term
    return bindings


@click.command()
@click.argument("query_spec", metavar="QUERY")
@graph_option
@click.option("--format", "output_format", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True, help="table for people; csv and json are the SPARQL 1.1 results formats.")
@click.option("--backend", type=click.Choice(BACKENDS), default="auto", show_default=True, help="auto: Oxigraph for big graphs, rdflib for small ones.")
@click.option("--bind", "bindings", multiple=True, metavar="NAME=VALUE", callback=parse_bind, help="Bind ?NAME to the string VALUE (or to an IRI written <…>) before running. Repeatable.")
@base_option
@click.option("--no-cache", is_flag=True, help="Do not create or reuse the Oxigraph store cached next to graph.json.")
@timeout_option
@allow_service_option
def sparql(query_spec: str, graph_dir: str, output_format: str, backend: str, bindings: dict[str, str], base: str, no_cache: bool, timeout: float, allow_service: bool) -> int | None:
    """Run a SPARQL QUERY over the graph and print the rows.

    QUERY is the query text, @FILE.rq, or @NAME of a bundled example
    (papers_using_dataset, methods_per_task, hardware_per_paper,
    shared_concepts, related_shared_concepts, …; see schemas/queries/).
    The kg prefixes (kg:, dcterms:,
    skos:, oa:, prov:, fabio:, schema:, …) need no PREFIX line.
    A label bound to a query's kg:key variable (--bind dataset=imagenet)
    matches whatever its case, plural or hyphens; one that names no
    concept is reported on stderr with close labels (exit 25).

    \b
    kg sparql @papers_using_dataset --bind dataset=MuSiQue
    kg sparql 'SELECT (COUNT(*) AS ?n) WHERE { ?p a fabio:ResearchPaper }'
    """
    from kg.sparql.engine import query, read_query

    text = read_query(query_spec)
    result = query(graph_dir, text, backend=chosen(backend, BACKENDS), bindings=bindings, base=base, cache=not no_cache, timeout=timeout or None, allow_service=allow_service)
    click.echo(FORMATTERS[output_format](result), nl=False)
    for label in result.unmatched:
        close = f"; close labels: {', '.join(label.suggestions)}" if label.suggestions else "; no label is close"
        click.echo(f"Error: no concept has the label {label.value!r} (--bind {label.name}, key {label.key!r}){close}", err=True)
    return int(ExitCode.LABEL_NOT_FOUND) if result.unmatched else None


def format_json(result: QueryResult) -> str:
    """SPARQL 1.1 Query Results JSON Format."""
    if result.boolean is not None:
        return json.dumps({"head": {}, "boolean": result.boolean}, ensure_ascii=False) + "\n"
    bindings = [{name: _json_term(term) for name, term in zip(result.variables, row, strict=True) if term is not None} for row in result.rows]
    return json.dumps({"head": {"vars": list(result.variables)}, "results": {"bindings": bindings}}, ensure_ascii=False, indent=1) + "\n"


def _json_term(term: Term) -> dict[str, str]:
    out = {"type": term.type, "value": term.value}
    if term.lang:
        out["xml:lang"] = term.lang
    elif term.datatype:
        out["datatype"] = term.datatype
    return out


def format_csv(result: QueryResult) -> str:
    """SPARQL 1.1 Query Results CSV Format (plain values, CRLF line ends)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    if result.boolean is not None:
        writer.writerow(["boolean"])
        writer.writerow(["true" if result.boolean else "false"])
        return buffer.getvalue()
    writer.writerow(result.variables)
    for row in result.rows:
        writer.writerow([_csv_value(term) for term in row])
    return buffer.getvalue()


def _csv_value(term: Term | None) -> str:
    if term is None:
        return ""
    return f"_:{term.value}" if term.type == "bnode" else term.value


def format_table(result: QueryResult) -> str:
    """Aligned columns for a terminal; IRIs shortened with the kg prefixes."""
    if result.boolean is not None:
        return ("yes" if result.boolean else "no") + "\n"
    header = list(result.variables)
    cells = [[_table_value(term) for term in row] for row in result.rows]
    widths = [max([len(name)] + [len(row[i]) for row in cells]) for i, name in enumerate(header)]
    lines = ["  ".join(name.ljust(w) for name, w in zip(header, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines.extend("  ".join(value.ljust(w) for value, w in zip(row, widths, strict=True)).rstrip() for row in cells)
    lines.append(f"({len(cells)} row{'s' if len(cells) != 1 else ''}, {result.backend})")
    return "\n".join(lines) + "\n"


def _table_value(term: Term | None) -> str:
    from kg.rdf.terms import PREFIXES

    if term is None:
        return ""
    value = " ".join(term.value.split()) if term.type == "literal" else term.value
    if term.type == "uri":
        for prefix, namespace in PREFIXES.items():
            if value.startswith(namespace) and len(value) > len(namespace):
                return f"{prefix}:{value[len(namespace):]}"
        return f"<{value}>"
    if term.type == "bnode":
        return f"_:{value}"
    return value


FORMATTERS = {"table": format_table, "csv": format_csv, "json": format_json}
