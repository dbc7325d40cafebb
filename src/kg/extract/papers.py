"""Per-paper entity extraction: abstract text → mentions with local keys (no corpus state).

`extract_papers` depends only on each paper's abstract and the pipeline version, so its
results can be cached per paper and computed in parallel; `kg.concepts.resolve.resolve` then
merges them across the corpus into concepts.

spaCy reads the abstract as a reader would: PDF debris repaired and citations dropped
(`kg.text.clean.clean_text`), then markup masked (`kg.text.markup.mask_markup`, same length).
Every span found is mapped back through the clean text's character origins, so offsets point
into the abstract as given (``abstract[start:end] == text``, debris included).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from kg.model import DEFAULT_RECOGNIZER, Definition, LocalClaim, LocalMention, Paper, PaperExtraction
from kg.text.clean import CleanText, clean_text
from kg.text.markup import mask_markup

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc


def doc_to_extraction(paper_id: str, abstract: str, doc: Doc, clean: CleanText | None = None) -> PaperExtraction:
    """Plain data from a doc of `clean` (the abstract's clean text, masked); offsets index `abstract`."""
    clean = clean if clean is not None else clean_text(abstract)
    mentions = []
    # Sentence of each token, computed once (Span.sent walks the doc on every call).
    sentences = list(doc.sents) if doc.has_annotation("SENT_START") or doc.has_annotation("DEP") else [doc[:]]
    sent_starts = [s.start for s in sentences]
    masked = doc.text
    for span in doc.spans.get("kg", []):
        if clean.text[span.start_char : span.end_char] != masked[span.start_char : span.end_char]:
            continue  # markup inside the span (masked for spaCy): its text would carry the markup
        start, end = clean.span(span.start_char, span.end_char)
        sent = sentences[bisect_right(sent_starts, span.start) - 1]
        last = sentences[bisect_right(sent_starts, span.end - 1) - 1]  # a span may cross a boundary
        sent_start, sent_end = clean.span(sent.start_char, last.end_char)
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
                sent_start=sent_start,
                sent_end=sent_end,
                model_confidence=span._.kg_model_confidence,
                confidence=round(float(span._.kg_type_confidence), 4),
            )
        )
    definitions = tuple(sorted({Definition(short, long, lab) for short, long, lab in doc._.kg_definitions}, key=lambda d: (d.short, d.long)))
    return PaperExtraction(paper_id, tuple(mentions), definitions, _claims(abstract, doc, clean))


def _claims(abstract: str, doc: Doc, clean: CleanText) -> tuple[LocalClaim, ...]:
    """The doc's result claims (kg.results.find), their spans mapped onto the abstract."""
    from kg.results.find import find_claims

    def onto(span: tuple[int, int] | None) -> tuple[int, int] | None:
        return None if span is None else clean.span(*span)

    claims = []
    for claim in find_claims(doc):
        start, end = clean.span(claim.value.start, claim.value.end)
        sent_start, sent_end = clean.span(*claim.sentence)
        claims.append(
            LocalClaim(
                start=start, end=end, value=abstract[start:end], unit=claim.value.unit, kind=claim.kind,
                metric=onto(claim.metric), dataset=onto(claim.dataset), task=onto(claim.task), method=onto(claim.method),
                proposed=claim.proposed, baseline=onto(claim.baseline), score=claim.score, sent_start=sent_start, sent_end=sent_end,
            )
        )
    return tuple(claims)


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
    cleaned = ((clean_text(paper.abstract), paper) for paper in papers)
    stream = ((mask_markup(clean.text), (paper, clean)) for clean, paper in cleaned)
    for doc, (paper, clean) in nlp.pipe(stream, as_tuples=True, batch_size=batch_size, n_process=n_process):
        yield doc_to_extraction(paper.id, paper.abstract, doc, clean)
