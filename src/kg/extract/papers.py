"""Per-paper entity extraction: abstract text → mentions with local keys (no corpus state).

`extract_papers` depends only on each paper's abstract and the pipeline version, so its
results can be cached per paper and computed in parallel; `kg.concepts.resolve.resolve` then
merges them across the corpus into concepts.

Markup is masked before spaCy sees the text (`kg.text.markup.mask_markup`): same length, so
every offset still points into the abstract as given (``abstract[start:end] == text``).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from kg.model import DEFAULT_RECOGNIZER, Definition, LocalMention, Paper, PaperExtraction
from kg.text.markup import mask_markup

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc


def doc_to_extraction(paper_id: str, abstract: str, doc: Doc) -> PaperExtraction:
    """Plain data from a processed doc; offsets index `abstract` (same length as the doc text)."""
    mentions = []
    # Sentence of each token, computed once (Span.sent walks the doc on every call).
    sentences = list(doc.sents) if doc.has_annotation("SENT_START") or doc.has_annotation("DEP") else [doc[:]]
    sent_starts = [s.start for s in sentences]
    masked = doc.text
    for span in doc.spans.get("kg", []):
        start, end = span.start_char, span.end_char
        if abstract[start:end] != masked[start:end]:
            continue  # markup inside the span (masked for spaCy): its text would carry the markup
        sent = sentences[bisect_right(sent_starts, span.start) - 1]
        last = sentences[bisect_right(sent_starts, span.end - 1) - 1]  # a span may cross a boundary
        mentions.append(
            LocalMention(
                start=start,
                end=end,
                text=abstract[start:end],
                label=span.label_,
                key=span._.kg_key,
                vocab=span._.kg_vocab,
                role=span._.kg_role,
                source=span._.kg_source,
                score=round(float(span._.kg_score), 4),
                sent_start=sent.start_char,
                sent_end=last.end_char,
            )
        )
    definitions = tuple(sorted({Definition(short, long, lab) for short, long, lab in doc._.kg_definitions}, key=lambda d: (d.short, d.long)))
    return PaperExtraction(paper_id, tuple(mentions), definitions)


def extract_text(text: str, *, paper_id: str = "", nlp: Language | None = None) -> PaperExtraction:
    """Extract from one text (convenience for tests and the REPL)."""
    return next(extract_papers([Paper(id=paper_id, title="", abstract=text)], nlp=nlp))


def extract_papers(
    papers: Iterable[Paper],
    *,
    nlp: Language | None = None,
    recognizer: str | None = DEFAULT_RECOGNIZER,
    batch_size: int = 64,
    n_process: int = 1,
) -> Iterator[PaperExtraction]:
    """Extract mentions from each paper's abstract, in input order, one result per paper.

    Without `nlp`, kg's pipeline with `recognizer` (a model folder; the shipped one by
    default, None for rules alone)."""
    if nlp is None:
        from kg.extract.pipeline import load_pipeline

        nlp = load_pipeline(recognizer=recognizer)
    # Generator of (masked text, paper) so papers stream through nlp.pipe without a list.
    stream = ((mask_markup(paper.abstract), paper) for paper in papers)
    for doc, paper in nlp.pipe(stream, as_tuples=True, batch_size=batch_size, n_process=n_process):
        yield doc_to_extraction(paper.id, paper.abstract, doc)
