"""`kg related PAPER`: related work by shared concepts, with the reasons.

Reads ``GRAPH/related.idx`` (written by `kg build`) so it starts fast; never imports spaCy.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from kg.cli.common import graph_option, types_option

if TYPE_CHECKING:
    from kg.related_work.rank import RelatedResult


@click.command()
@click.argument("paper")
@click.option("-k", "--top", default=10, show_default=True, type=click.IntRange(min=1), help="How many related papers.")
@types_option("Count only shared concepts of these types")
@graph_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.option("--reasons", "max_reasons", default=5, show_default=True, type=click.IntRange(min=0), help="Shared concepts shown per result (text output; --json shows all).")
@click.option("--no-embeddings", is_flag=True, help="Rank by shared concepts alone, even when the build stored embeddings (kg build --embed).")
def related(paper: str, top: int, types: tuple[str, ...] | None, graph_dir: str, as_json: bool, max_reasons: int, no_embeddings: bool) -> None:
    """Papers related to PAPER: an id, a title, or words of the title in any order.

    Papers are ranked by the concepts they share with PAPER (rare concepts and
    proposed, not merely used, ones counting more; a shared broader concept
    counting less) and, when the graph was built with `kg build --embed`, by the
    similarity of their abstracts' embeddings. The line under the query paper says
    which signals were used. The number after each rank is the score: the concept
    score, or with embeddings 0.15 × concepts / best concepts + 0.85 × similarity.
    Each result lists the shared concepts that explain it, strongest first:

    \b
      +12.345  large language model [METHOD] (used/proposed)
        +12.345: what the concept adds to the concept score;
        (used/proposed): the query paper's role for the concept / the related
        paper's: "proposed" (the paper presents it as its contribution) or
        "used"; "broader" after the roles: shared as a broader concept, one of
        the two papers naming a narrower one ("semantic segmentation" for
        "segmentation").
      similarity 0.612: cosine of the two papers' embeddings (with --embed).

    --json adds each result's signals: the concept score and the similarity.
    """
    from kg.related_work.rank import find_related

    result = find_related(graph_dir, paper, top=top, types=types, use_embeddings=not no_embeddings)
    if as_json:
        click.echo(json.dumps(result.to_dict(), ensure_ascii=False, indent=2))
    else:
        click.echo(render(result, max_reasons=max_reasons))


def render(result: RelatedResult, *, max_reasons: int) -> str:
    """The text output: one line per related paper, its strongest reasons indented below."""
    lines = [f"Related to {result.query_id}: {result.query_title}"]
    embedding = "embedding" in result.signals
    lines.append("  by shared concepts and embedding similarity" if embedding else "  by shared concepts")
    if not result.results:
        lines.append("  (no paper shares a concept with it)")
    for rank, paper in enumerate(result.results, start=1):
        lines.append(f"{rank:>3}. {paper.score:.3f}  {paper.id}  {paper.title}")
        if paper.similarity is not None:
            lines.append(f"         similarity {paper.similarity:.3f}")
        for reason in paper.reasons[:max_reasons]:
            roles = f"{reason.query_role}/{reason.candidate_role}" + (", broader" if reason.broader else "")
            lines.append(f"         +{reason.contribution:.3f}  {reason.label} [{reason.type}] ({roles})")
        if len(paper.reasons) > max_reasons:
            lines.append(f"         … {len(paper.reasons) - max_reasons} more shared concepts")
    return "\n".join(lines)
