"""A title that opens with a name ("Glow: Generative Flow with Invertible 1x1 Convolutions",
"HippoRAG 2: …") names what the paper proposes. Runs on per-paper extractions before
resolution (no spaCy: it reads the title's words).

The name before the colon must look like one: one to four words with a capital or digit
in each of them past a plain first word, not a generic opener ("Towards", "On", "Beyond",
"Rethinking"…) and not a question or a phrase of common words. In the abstract, mentions
of that name become ``proposed``; if extraction missed it, each occurrence of the name (a
whole word, exact case) becomes a mention of source ``title`` (type METHOD unless the title
calls it a dataset or benchmark). The name's mentions in the title itself, where extraction read it
(`kg.ingest.titles.read_title`), are proposed too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from kg.model import GUESSED_CONFIDENCE, EntityType, LocalMention, Paper, PaperExtraction
from kg.text.markup import mask_markup
from kg.text.vocab import normalize_key
from kg.text.words import HEAD_TYPES, TITLE_OPENERS

TITLE_SOURCE = "title"
TITLE_SCORE = 0.7
_HEAD = re.compile(r"^\s*(?P<name>[^:?!.;,]{2,40}?)\s*:\s+\S")
_SENTENCE_END = re.compile(r"[.!?](?=\s+[A-Z0-9])")


def title_name(title: str) -> str | None:
    """The name a title opens with ("Glow" in "Glow: Generative Flow …"), or None."""
    match = _HEAD.match(title or "")
    if match is None:
        return None
    name = match.group("name")
    words = name.split()
    if not 1 <= len(words) <= 4 or words[0].lower() in TITLE_OPENERS:
        return None
    # A name: a coined first word (KAN-AD, xLSTM, GPT-4, HippoRAG), or one capitalised word
    # (Glow); the words after a coined one are capitalised or numbers ("HippoRAG 2").
    first = words[0]
    coined = any(ch.isupper() for ch in first[1:]) or any(ch.isdigit() for ch in first)
    if not (coined or (len(words) == 1 and first[:1].isupper() and first[1:].isalpha())):
        return None
    if not all(w[:1].isupper() or w[:1].isdigit() for w in words[1:]):
        return None
    return name


def _label_from_title(title: str) -> EntityType:
    rest = title.split(":", 1)[1].lower() if ":" in title else ""
    if any(HEAD_TYPES.get(word.rstrip("s")) == "DATASET" for word in re.findall(r"[a-z\-]+", rest)):
        return "DATASET"  # "DiffNet: A Benchmark of …"
    return "METHOD"


def _sentence(text: str, start: int, end: int) -> tuple[int, int]:
    left = max((m.end() for m in _SENTENCE_END.finditer(text, 0, start)), default=0)
    following = _SENTENCE_END.search(text, end)
    right = following.end() if following else len(text)
    while left < start and text[left].isspace():
        left += 1
    return left, right


def mark_title_names(papers: Sequence[Paper], extractions: Sequence[PaperExtraction]) -> list[PaperExtraction]:
    """`extractions` with each paper's title name proposed (parallel to `papers`)."""
    marked = []
    for paper, extraction in zip(papers, extractions, strict=True):
        name = title_name(paper.title)
        if name is None:
            marked.append(extraction)
            continue
        key = normalize_key(name)
        mentions = [replace(m, role="proposed") if m.text == name or m.key == key else m for m in extraction.mentions]
        if not any(m.role == "proposed" and (m.text == name or m.key == key) and m.where == "abstract" for m in mentions):
            text = mask_markup(paper.abstract)
            label = _label_from_title(paper.title)
            for found in re.finditer(rf"(?<![\w\-]){re.escape(name)}(?![\w\-])", text):
                start, end = found.span()
                if any(m.start < end and start < m.end and m.where == "abstract" for m in mentions):
                    continue
                sent_start, sent_end = _sentence(text, start, end)
                confidence = 1.0 if label == "DATASET" else GUESSED_CONFIDENCE  # a method unless the title says otherwise: a guess
                mentions.append(
                    LocalMention(start, end, paper.abstract[start:end], label, key, None, "proposed", TITLE_SOURCE, TITLE_SCORE, sent_start, sent_end, confidence)
                )
            mentions.sort(key=lambda m: (m.where != "abstract", m.start, m.end))  # the title's after, as extraction gives them
        marked.append(replace(extraction, mentions=tuple(mentions)))
    return marked
