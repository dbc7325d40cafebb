"""`kg export`: the built graph as Turtle, N-Triples (optionally sharded), JSON-LD or GraphML."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from kg.cli.common import base_option, chosen, graph_option, refuse_output_file
from kg.rdf.terms import EXPORT_FORMATS


@click.command()
@graph_option
@click.option("-f", "--format", "output_format", type=click.Choice(EXPORT_FORMATS), default="ttl", show_default=True,
    help="ttl, nt (N-Triples), jsonld (expanded JSON-LD) or graphml (the networkx graph).")
@click.option("-o", "--output", default=None, help="Output file (default GRAPH/graph.EXT; - for stdout). With --shards, the name the shard files are derived from.")
@click.option("--shards", type=click.IntRange(min=1), default=None, help="Split N-Triples over N files NAME-0000i-of-0000N.nt (for a triple store's parallel bulk load).")
@base_option
def export(graph_dir: str, output_format: str, output: str | None, shards: int | None, base: str) -> None:
    """Export the graph in GRAPH as RDF or GraphML (written atomically)."""
    from kg.graph import load
    from kg.rdf.writers import export as run_export
    from kg.rdf.writers import write_stream

    fmt = chosen(output_format, EXPORT_FORMATS)
    if shards is not None and fmt != "nt":
        raise click.UsageError(f"--shards needs --format nt (got {fmt})")
    graph = load(graph_dir)
    if output == "-":
        if shards is not None:
            raise click.UsageError("--shards writes files; give -o NAME.nt, not -")
        write_stream(graph, sys.stdout.buffer, format=fmt, base=base)
        sys.stdout.buffer.flush()
        return
    folder = Path(graph_dir) if Path(graph_dir).is_dir() else Path(graph_dir).parent
    path = output or str(folder / f"graph.{fmt}")
    refuse_output_file(path, own=f"graph.{fmt}", what="a file outside it (e.g. beside graph.json)")
    result = run_export(graph, path, format=fmt, shards=shards, base=base)
    what = f"{result.triples:,} triples" if result.triples is not None else f"{graph.number_of_nodes():,} nodes, {graph.number_of_edges():,} edges"
    if len(result.paths) == 1:
        click.echo(f"wrote {result.paths[0]} ({what})")
    else:
        click.echo(f"wrote {len(result.paths)} shards ({what}): {result.paths[0]} … {result.paths[-1]}")
