"""`kg html`: draw a built graph as one self-contained, offline HTML page."""

from __future__ import annotations

from pathlib import Path

import click

from kg.cli.common import graph_option, refuse_output_file, types_option


@click.command()
@graph_option
@click.option("-o", "--output", default=None, help="HTML file to write.  [default: graph.html beside graph.json]")
@click.option("--focus", metavar="PAPER", default=None, help="Draw one paper (id or title fragment), its related papers and the concepts they share; the page opens on it.")
@click.option("--depth", default=1, show_default=True, type=click.IntRange(min=0),
    help="Rounds of related papers around --focus: 0 the paper and its concepts, 1 + its 8 most related, 2 + the 3 most related to each of those.")
@types_option("Concept types to draw (papers are always drawn)")
@click.option("--min-papers", default=None, type=click.IntRange(min=1), help="Drop concepts mentioned by fewer papers.  [default: 1, raised automatically to keep big graphs near --max-nodes]")
@click.option("--max-nodes", default=5000, show_default=True, type=click.IntRange(min=1),
    help="Without --min-papers: size the page near this many nodes (threshold raised; if papers alone are too many, the best linked are kept).")
def html(graph_dir: str, output: str | None, focus: str | None, depth: int, types: tuple[str, ...] | None, min_papers: int | None, max_nodes: int) -> None:
    """Write an interactive HTML view of the graph: regions of the field (communities of
    papers), labels that fit the zoom, search, filters (type, papers per concept, year,
    venue), neighbourhood highlight and a details panel with each paper's related papers.
    The page needs no network: open it straight from disk."""
    from kg.graph import load
    from kg.html import HTML_FILE, write_html

    graph = load(graph_dir)
    if output is None:
        source = Path(graph_dir)
        output = str((source if source.is_dir() else source.parent) / HTML_FILE)
    refuse_output_file(output, own=HTML_FILE, what="a file outside it (e.g. out/graph.html)")
    summary = write_html(graph, output, focus=focus, depth=depth, types=types, min_papers=min_papers, max_nodes=max_nodes)
    capped = f" (the best linked of {summary.papers_available:,})" if summary.papers_available > summary.papers else ""
    click.echo(
        f"Wrote {summary.path} ({summary.bytes / 1e6:.1f} MB): {summary.papers:,} papers{capped}, "
        f"{summary.concepts:,} concepts (in ≥ {summary.min_papers} papers), {summary.edges:,} edges"
    )
