"""`kg_typed_phrases`: noun phrases typed by their head word ("… dataset", "… GPU", "… detection").

With a parser, candidates are the doc's noun chunks; on a blank pipeline, a window of
content words before a head word. Generic modifiers ("novel", "the", "our", "existing")
are trimmed from the left; a phrase needs at least one specific modifier left, so
"the method" or "several datasets" never become entities. Results go to
``doc.spans["kg_phrase"]`` with the type as label.
"""

from __future__ import annotations

from collections.abc import Iterable

from spacy.language import Language
from spacy.tokens import Doc, Span

from kg.extract.components.spans import has_dep, has_pos
from kg.text.vocab import singularize
from kg.text.words import GENERIC_HEADS, GENERIC_MODIFIERS, HEAD_TYPES, NON_ENTITY_HEADS, STOP_WORDS

SPAN_KEY = "kg_phrase"
_WRAPPER_PLURALS = frozenset("methods approaches techniques strategies schemes".split())
MAX_TOKENS = 6
_SKIP_POS = {"DET", "PRON", "NUM", "PUNCT", "SYM", "SPACE", "CCONJ", "ADP", "PART", "AUX", "VERB", "ADV", "SCONJ"}
_INNER_PUNCT = {"-", "/", "'", "’", "'s"}  # punctuation that may sit inside a name


def head_type(word: str) -> str | None:
    """The entity type a head word gives its phrase, if any."""
    return HEAD_TYPES.get(singularize(word.lower()))


def _trim(doc: Doc, start: int, end: int) -> tuple[int, int]:
    """Drop generic modifiers, numbers and punctuation from the left of [start, end)."""
    tagged = has_pos(doc)
    # Start after the last bracket, comma or conjunction: "(i.e., X) method", "A and B datasets".
    for i in range(end - 2, start - 1, -1):
        token = doc[i]
        if (token.is_punct and token.text not in _INNER_PUNCT) or token.lower_ in ("and", "or", "&", "nor", "but") or token.tag_ == "POS":
            start = i + 1
            break
    while start < end - 1:
        token = doc[start]
        if start + 3 < end and doc[start + 1].text == "-":
            if token.lower_ in GENERIC_MODIFIERS or token.like_num:
                start += 3  # a generic compound: "high-quality", "real-time", "one-step", "long-range"
                continue
            break  # a specific compound stays whole: "text-guided …", "PDE-constrained …"
        if (
            not any(ch.isalpha() for ch in token.text)
            or token.lower_ in GENERIC_MODIFIERS
            or token.lower_ in STOP_WORDS
            or token.is_punct
            or token.is_space
            or token.like_num
            or (tagged and token.pos_ in _SKIP_POS)
        ):
            start += 1
        else:
            break
    return max(start, end - MAX_TOKENS), end


def _chunks(doc: Doc) -> Iterable[tuple[int, int]]:
    if has_dep(doc):
        for chunk in doc.noun_chunks:
            yield chunk.start, chunk.end
        return
    # Blank pipeline: head word plus up to MAX_TOKENS - 1 content words before it.
    for token in doc:
        if head_type(token.text) is None:
            continue
        start = token.i
        while start > 0 and token.i - start < MAX_TOKENS - 1:
            prev = doc[start - 1]
            if prev.is_space or prev.is_stop or prev.lower_ in STOP_WORDS or prev.is_punct or prev.like_num:
                break
            start -= 1
        yield start, token.i + 1


class TypedPhraseDetector:
    def __init__(self, nlp: Language, name: str) -> None:
        self.name = name

    def __call__(self, doc: Doc) -> Doc:
        spans = []
        tagged = has_pos(doc)
        for chunk_start, chunk_end in _chunks(doc):
            head = doc[chunk_end - 1]
            label = head_type(head.text)
            if label is None or singularize(head.lower_) in NON_ENTITY_HEADS:
                continue
            start, end = _trim(doc, chunk_start, chunk_end)
            modifiers = doc[start : end - 1]
            if not len(modifiers) or all(t.lower_ in GENERIC_MODIFIERS or t.is_punct or t.is_space for t in modifiers):
                continue
            if any(t.lower_ in STOP_WORDS for t in modifiers):
                continue
            if head.lower_ != singularize(head.lower_) and head.lower_ in _WRAPPER_PLURALS and not any(t.pos_ == "PROPN" for t in modifiers):
                continue  # "feature-based methods", "removal methods": a class of others' work, not a concept
            if singularize(head.lower_) in GENERIC_HEADS and tagged and not any(t.pos_ in ("NOUN", "PROPN") for t in modifiers):
                continue  # "hybrid approach", "larger models", "offline dataset": adjectives alone say too little
            spans.append(Span(doc, start, end, label=label))
        doc.spans[SPAN_KEY] = spans
        return doc


@Language.factory("kg_typed_phrases", default_config={})
def make_typed_phrase_detector(nlp: Language, name: str) -> TypedPhraseDetector:
    return TypedPhraseDetector(nlp, name)
