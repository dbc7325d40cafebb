"""Per-paper entity extraction: abstract text → mentions with local keys (no corpus state).

`extract_papers` depends only on each paper's abstract and the pipeline version, so its
results can be cached per paper and computed in parallel; `kg.resolve.resolve` then
merges them across the corpus into concepts.

Markup is masked before spaCy sees the text: LaTeX math and commands, HTML tags and URLs
become spaces of the same length, so every offset still points into the abstract as
given (``abstract[start:end] == text``), while ``$\\texttt{GD-LS}$`` still yields GD-LS.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from kg.model import EntityType, Paper, PaperEntities, Role

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

    from kg.resolve import Resolution

# LaTeX commands whose argument is text worth reading (\texttt{GD-LS}, \textsc{Foo}).
_TEXT_COMMANDS = r"(?:text(?:tt|sc|bf|it|rm|sf)?|math(?:rm|tt|sf|bf|it)|emph|textnormal|operatorname)"
_URL = re.compile(r"(?:https?://|www\.)[^\s<>\"')\]]+", re.I)
_HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9]*(?:\s[^<>]{0,200})?/?>")
_HTML_ENTITY = re.compile(r"&(?:[a-zA-Z]{2,8}|#\d{1,6});")
_MATH = re.compile(r"\$\$?([^$]{0,400}?)\$\$?")
_TEXT_ARG = re.compile(r"\\" + _TEXT_COMMANDS + r"\s*\{([^{}]*)\}")
_COMMAND = re.compile(r"\\[A-Za-z]+\*?|\\.")
_MARKDOWN_EMPHASIS = re.compile(r"\*\*|__|(?<![\w*])\*(?=\w)|(?<=\w)\*(?![\w*])")  # "**Virtual-Fourier** layer", "*EF-Landing*"


def _blank(match: re.Match[str]) -> str:
    return " " * len(match.group())


def _mask_math(match: re.Match[str]) -> str:
    """Inside $…$ keep only the arguments of text commands; everything else becomes spaces."""
    body = match.group()
    out = [" "] * len(body)
    for arg in _TEXT_ARG.finditer(body):
        out[arg.start(1) : arg.end(1)] = arg.group(1)
    return "".join(out)


def mask_markup(text: str) -> str:
    """`text` with URLs, HTML tags/entities and LaTeX replaced by spaces: same length, same offsets."""
    if not any(ch in text for ch in "$\\<&/*_"):
        return text
    text = _URL.sub(_blank, text)
    text = _HTML_TAG.sub(_blank, text)
    text = _HTML_ENTITY.sub(_blank, text)
    text = _MARKDOWN_EMPHASIS.sub(_blank, text)
    text = _MATH.sub(_mask_math, text)
    if "\\" in text:
        # Text-mode commands: keep the argument, blank the command and braces.
        text = _TEXT_ARG.sub(lambda m: " " * (m.start(1) - m.start()) + m.group(1) + " ", text)
        text = _COMMAND.sub(_blank, text)
    return text


@dataclass(frozen=True, slots=True)
class LocalMention:
    """A mention as one paper alone sees it; `key` is its normalised surface form."""

    start: int
    end: int
    text: str
    label: EntityType
    key: str  # normalize_key of the surface (acronyms: of their long form)
    vocab: str | None  # curated concept id, when the vocabulary knows it
    role: Role
    source: str
    score: float
    sent_start: int
    sent_end: int


@dataclass(frozen=True, slots=True)
class Definition:
    """An acronym this paper defines: short ↔ long form, with their type."""

    short: str
    long: str
    label: EntityType


@dataclass(frozen=True, slots=True)
class PaperExtraction:
    """Everything extraction found in one paper, before corpus-wide resolution."""

    paper_id: str
    mentions: tuple[LocalMention, ...] = ()
    definitions: tuple[Definition, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "paper_id": self.paper_id,
            "mentions": [asdict(m) for m in self.mentions],
            "definitions": [asdict(d) for d in self.definitions],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PaperExtraction:
        return cls(
            data["paper_id"],
            tuple(LocalMention(**m) for m in data.get("mentions", ())),
            tuple(Definition(**d) for d in data.get("definitions", ())),
        )


def doc_to_extraction(paper_id: str, abstract: str, doc: Doc) -> PaperExtraction:
    """Plain data from a processed doc; offsets index `abstract` (same length as the doc text)."""
    mentions = []
    # Sentence of each token, computed once (Span.sent walks the doc on every call).
    sentences = list(doc.sents) if doc.has_annotation("SENT_START") or doc.has_annotation("DEP") else [doc[:]]
    sent_starts = [s.start for s in sentences]
    for span in doc.spans.get("kg", []):
        start, end = span.start_char, span.end_char
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
    definitions = tuple(sorted({Definition(s, l, lab) for s, l, lab in doc._.kg_definitions}, key=lambda d: (d.short, d.long)))
    return PaperExtraction(paper_id, tuple(mentions), definitions)


def extract_text(text: str, *, paper_id: str = "", nlp: Language | None = None) -> PaperExtraction:
    """Extract from one text (convenience for tests and the REPL)."""
    return next(extract_papers([Paper(id=paper_id, title="", abstract=text)], nlp=nlp))


def extract_papers(
    papers: Iterable[Paper],
    *,
    nlp: Language | None = None,
    batch_size: int = 64,
    n_process: int = 1,
) -> Iterator[PaperExtraction]:
    """Extract mentions from each paper's abstract, in input order, one result per paper."""
    if nlp is None:
        from kg.pipeline import load_pipeline

        nlp = load_pipeline()
    # Generator of (masked text, paper) so papers stream through nlp.pipe without a list.
    stream = ((mask_markup(paper.abstract), paper) for paper in papers)
    for doc, paper in nlp.pipe(stream, as_tuples=True, batch_size=batch_size, n_process=n_process):
        yield doc_to_extraction(paper.id, paper.abstract, doc)


def entities_record(paper: Paper, entities: PaperEntities) -> dict[str, Any]:
    """One line of `kg extract` / ``out/entities.jsonl``: the paper and its resolved mentions."""
    return {
        "id": paper.id,
        "title": paper.title,
        "entities": [
            {
                "start": m.start,
                "end": m.end,
                "text": m.text,
                "label": m.label,
                "concept": m.concept,
                "role": m.role,
                "source": m.source,
                "score": m.score,
            }
            for m in entities.mentions
        ],
    }


def extract_corpus(
    papers: Iterable[Paper],
    *,
    nlp: Language | None = None,
    batch_size: int = 64,
    n_process: int = 1,
) -> tuple[list[Paper], Resolution]:
    """Extract every paper, then resolve concepts across them: (papers, resolution)."""
    from kg.propagate import resolve_corpus

    papers = list(papers)
    extractions = list(extract_papers(papers, nlp=nlp, batch_size=batch_size, n_process=n_process))
    return papers, resolve_corpus(papers, extractions)
