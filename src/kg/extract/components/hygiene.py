"""Span hygiene for entity candidates: edges on whole words, no markup inside, no junk names.

Every candidate the entity merger considers (rules' and the recognizer's alike) passes
`tidy` first, which trims or rejects it:

* a long form with its acronym in brackets keeps the long form ("Differential Privacy (DP)");
* edges: leading articles and demonstratives ("this passive domain adaptation"),
  punctuation or hyphens at either end ("extended Kalman filter (", "feature extraction-")
  and trailing function words ("calculation of") are trimmed; a span ending on a verb is no
  name ("approach fine-tunes");
* a span that would start or end inside a hyphenated word grows to the whole word
  ("key-value-free inference algorithm", not "free inference algorithm");
* rejected: spans over masked markup (LaTeX, HTML, URLs and emphasis are masked to spaces
  before spaCy runs, so a run of spaces or a line break inside means markup or a layout
  break), spans that start or end on a symbol ("-uniform", "GEL-", "^n"), spans with an
  unbalanced bracket, inside a token too ("models(LVLMs"), or a comma outside brackets (a list, not a name), spans starting on
  "art" of "state of the art", citation keys (devlin2018bert) and PDF residue ("(cid:173");
* a unit glued to a number is trimmed from the start ("K preference pairs" in "200K preference pairs").

`kg.extract.papers` makes the last check against the abstract as given: a mention whose text
differs from the masked text it was found in (markup inside it) is dropped.
"""

from __future__ import annotations

import re

from spacy.tokens import Doc

from kg.text.vocab import is_acronym
from kg.text.words import NAMING_WORDS, SPAN_LEADING_WORDS

LEADING_WORDS = SPAN_LEADING_WORDS | NAMING_WORDS  # "named X": X
EDGE_PUNCT = frozenset("( [ { ) ] } , ; : . ! ? - – — ‐ ‑ ' \" “ ” ‘ ’ / | & + = * # ~ ^".split())
HYPHENS = frozenset("- ‐ ‑ ‒ –".split())
_CITATION_KEY = re.compile(r"^[a-z]{2,}(?:19|20)\d\d[a-z]+\d*$")
TRAILING_POS = frozenset({"CCONJ", "ADP", "DET", "SCONJ", "PART", "PRON"})
_BROKEN = re.compile(r"\s{2,}|\n")  # masked markup, or a line break, inside a span


def _glued_before(doc: Doc, i: int) -> bool:
    """Token i is joined to the one before it without a space (part of one written word)."""
    return i > 0 and not doc[i - 1].whitespace_


def tidy(doc: Doc, start: int, end: int, text: str) -> tuple[int, int] | None:
    """The cleaned token span [start, end) of a candidate, or None when it is junk.
    `text` is ``doc.text``, read once by the caller (spaCy rebuilds it on every access)."""
    while start < end and (doc[start].lower_ in LEADING_WORDS or doc[start].text in EDGE_PUNCT or doc[start].is_space):
        start += 1
    while end > start and (doc[end - 1].text in EDGE_PUNCT or doc[end - 1].is_space):
        if doc[end - 1].text == ")" and any(t.text == "(" for t in doc[start : end - 1]):
            break  # "(SLAM)" closes what the span opened
        end -= 1
    # A unit glued to its number starts no name: "200K preference pairs", "24GB" (spaCy splits "200K").
    while start < end and _glued_before(doc, start) and doc[start - 1].like_num and doc[start].is_alpha:
        start += 1
    if start >= end:
        return None
    # "Differential Privacy (DP)": the long form; the acronym is a mention of its own.
    if end - start >= 4 and doc[end - 1].text == ")" and doc[end - 3].text == "(" and is_acronym(doc[end - 2].text):
        end -= 3
    # "Quantum Natural Policy Gradient (QNPG) algorithm": a definition inside, two mentions.
    if any(doc[i].text == "(" and doc[i + 2].text == ")" and is_acronym(doc[i + 1].text) for i in range(start, end - 2)):
        return None
    # Grow to whole hyphenated words: "key-value-free inference", "multi-armed bandit".
    while start > 0 and _glued_before(doc, start) and (doc[start - 1].text in HYPHENS or doc[start].text in HYPHENS or doc[start - 1].is_alpha):
        start -= 1
    while end < len(doc) and _glued_before(doc, end) and (doc[end].text in HYPHENS and end + 1 < len(doc) and _glued_before(doc, end + 1) and doc[end + 1].is_alpha):
        end += 2
    if doc[start].text in HYPHENS or doc[end - 1].text in HYPHENS:
        return None
    if doc.has_annotation("TAG"):
        # A phrase does not end on a function word or a verb: "NeRF-based and", "calculation of".
        while end > start + 1 and doc[end - 1].pos_ in TRAILING_POS:
            end -= 1
        if doc[end - 1].pos_ in ("VERB", "AUX") and end - start > 1:
            return None
    depth = 0
    for token in doc[start:end]:
        for char in token.text:  # inside a token too: spaCy keeps "models(LVLMs" and "CNN)-based" whole
            depth += char in "([{"
            depth -= char in ")]}"
            if depth < 0:
                return None  # an unbalanced bracket: "ODE)-inspired", "CNN)-based models"
        if depth == 0 and token.text in (",", ";"):
            return None  # a list: "activation, enhancing"
    if depth:
        return None  # "vision language models(LVLMs", "O(logN"
    text = text[doc[start].idx : doc[end - 1].idx + len(doc[end - 1])]
    if _BROKEN.search(text) or _CITATION_KEY.match(text) or "(cid:" in text:
        return None
    if not (text[0].isalnum() or text[0] in "(") or not (text[-1].isalnum() or text[-1] in ")+'"):
        return None  # a piece of a word or of notation: "-uniform", "GEL-", "^n"
    if doc[start].lower_ == "art" and start >= 2 and doc[start - 2].lower_ == "of" and doc[start - 1].lower_ == "the":
        return None
    return start, end
