"""`kg related PAPER`: related work by shared concepts, with the reasons.

Reads ``GRAPH/related.idx`` (written by `kg build`) so it starts fast; never imports spaCy.
"""

from __future__ import annotations

import json
from typing import IO, TYPE_CHECKING

import click

from kg.cli.common import graph_option, types_option

if TYPE_CHECKING:
    from kg.related_work.rank import RelatedPaper, RelatedResult


@click.command()
@click.argument("paper", required=False)
@click.option("--text", "text", metavar="TEXT", help='Rank the corpus against this text instead of a paper of it: "title. abstract" of a draft, a review, a paper just read.')
@click.option("--file", "text_file", type=click.File("rb"), help="Like --text, with the text read from this UTF-8 file (- for standard input).")
@click.option("-k", "--top", default=10, show_default=True, type=click.IntRange(min=1), help="How many related papers.")
@types_option("Only papers sharing a concept of these types, and only those concepts counted")
@graph_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.option("--reasons", "max_reasons", default=5, show_default=True, type=click.IntRange(min=0), help="Shared concepts shown per result (text output; --json shows all).")
@click.option("--no-embeddings", is_flag=True, help="Rank without the embeddings the build stored (kg build --embed): by shared concepts and words.")
@click.option("--concepts-only", is_flag=True, help="Rank by shared concepts alone: the graph's own signal.")
def related(
    paper: str | None, text: str | None, text_file: IO[bytes] | None, top: int, types: tuple[str, ...] | None, graph_dir: str, as_json: bool,
    max_reasons: int, no_embeddings: bool, concepts_only: bool,
) -> None:  # fmt: skip
    """Papers related to PAPER (an id, a title, or words of the title in any order), or to a
    text given by --text or --file.

    Three signals rank the papers, fused as `bench/related_eval.py` chose:
    the concepts two papers share (rare concepts and proposed, not merely used,
    ones counting more; a shared broader concept counting less), the words and
    word pairs they share (BM25 over title and abstract), and, when the graph
    was built with `kg build --embed`, the similarity of their abstracts'
    embeddings. The line under the query says which were used. The number
    after each rank is the fused score, 0.03 × concepts / best + 0.45 × words /
    best + 0.52 × similarity (without embeddings the first two weights keep
    their ratio; a signal alone is its own score). Each result says why,
    strongest first:

    \b
      +12.345  temporal difference learning [METHOD] (used/proposed)
        a shared concept: what it adds to the concept score, then the
        query's role for it / the related paper's ("proposed": the paper
        presents it as its contribution; "broader": shared as a broader
        concept of one side's narrower one; "generic": too common or vague
        to say much, always listed after the specific ones);
      ≈ monocular depth estimation ~ depth completion
        near concepts: one of each paper's, not the same, whose labels share
        a word found on few papers;
      shared words: "eligibility trace", "value function"
        the words and phrases that carried the word score;
      similar abstract (0.612): "eligibility trace", …
        said instead when the embedding similarity (the cosine, in
        brackets) led the score, or no specific concept is shared.

    A text is matched against the corpus's concept labels and words, and
    embedded with the model that made the stored embeddings when it is
    installed (else a warning says so and the text is ranked without them).
    --json adds each result's signals and what led its score.
    """
    from kg.related_work.rank import find_related, find_related_text

    given = [name for name, value in (("PAPER", paper), ("--text", text), ("--file", text_file)) if value is not None]
    if len(given) != 1:
        raise click.UsageError("give a PAPER, or a text with --text or --file" if not given else f"give only one of {', '.join(given)}")
    signals = ("concepts",) if concepts_only else None
    if paper is not None:
        result = find_related(graph_dir, paper, top=top, types=types, use_embeddings=not no_embeddings, signals=signals)
    else:
        if text is not None:
            content, where = text, "--text"
        else:
            assert text_file is not None  # one of PAPER, --text and --file, as checked above
            content, where = read_text_file(text_file), f"--file {getattr(text_file, 'name', '-')}"
        if not content.strip():
            raise click.UsageError(f"{where} is empty: nothing to rank against")
        if len(content) > MAX_TEXT:
            raise click.UsageError(f"{where} holds {len(content):,} characters: a text to rank against is at most {MAX_TEXT:,} (a paper's title and abstract, or a draft)")
        result = find_related_text(graph_dir, content, top=top, types=types, use_embeddings=not no_embeddings, signals=signals)
    for warning in result.warnings:
        click.echo(f"Warning: {warning}", err=True)
    if as_json:
        click.echo(json.dumps(result.to_dict(), ensure_ascii=False, indent=2))
    else:
        click.echo(render(result, max_reasons=max_reasons))


MAX_TEXT = 200_000  # characters: a whole draft fits; matching costs ~0.2 s per 10,000 on 7,000 papers


def read_text_file(handle: IO[bytes]) -> str:
    """The file's text, UTF-8 (a byte-order mark allowed); else a usage error naming the file and
    what is wrong. At most `MAX_TEXT` characters' worth of bytes is read, so /dev/zero stops."""
    limit = 4 * MAX_TEXT  # UTF-8 takes at most 4 bytes a character
    name = getattr(handle, "name", "-")
    data = handle.read(limit + 1)
    if len(data) > limit:
        raise click.UsageError(f"--file {name} is over {limit:,} bytes: a text to rank against is at most {MAX_TEXT:,} characters")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise click.UsageError(f"--file {name}: not UTF-8 text (byte {error.start:,})") from None
    if "\x00" in text:
        raise click.UsageError(f"--file {name}: not text (a NUL byte at character {text.index(chr(0)):,})")
    return text


SIGNAL_WORDS = {"concepts": "shared concepts", "lexical": "shared words", "embedding": "embedding similarity"}


def render(result: RelatedResult, *, max_reasons: int) -> str:
    """The text output: one line per related paper, its reasons indented below."""
    query = f"{result.query_id}: {result.query_title}" if result.query_id else f"the text: {result.query_title}"
    lines = [f"Related to {query}"]
    used = [SIGNAL_WORDS[name] for name in result.signals]
    lines.append("  by " + (", ".join(used[:-1]) + " and " + used[-1] if len(used) > 1 else used[0]))
    show_words = "lexical" in result.signals or "embedding" in result.signals  # not for --concepts-only
    if not result.results:
        lines.append("  (no paper shares a concept or a word with it)")
    for rank, paper in enumerate(result.results, start=1):
        lines.append(f"{rank:>3}. {paper.score:.3f}  {paper.id}  {paper.title}")
        for reason in paper.reasons[:max_reasons]:
            roles = f"{reason.query_role}/{reason.candidate_role}" + (", broader" if reason.broader else "") + (", generic" if reason.generic else "")
            lines.append(f"         +{reason.contribution:.3f}  {reason.label} [{reason.type}] ({roles})")
        if len(paper.reasons) > max_reasons:
            lines.append(f"         … {len(paper.reasons) - max_reasons} more shared concepts")
        for near in paper.near:
            lines.append(f"         ≈ {near.query_label} ~ {near.label}")
        if show_words:
            lines.append("         " + words_line(paper))
    return "\n".join(lines)


def words_line(paper: RelatedPaper) -> str:
    """What the words say: the shared phrases, and whether the abstracts' similarity carried it."""
    quoted = ", ".join(f'"{word}"' for word in paper.words)
    if paper.by_similarity:
        return f"similar abstract ({paper.similarity:.3f}): {quoted}" if quoted else f"similar abstract ({paper.similarity:.3f}), no word in common"
    return f"shared words: {quoted}" if quoted else "no word in common"
