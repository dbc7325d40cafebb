"""`kg_abbreviations`: acronym definitions, both directions (Schwartz & Hearst, 2003).

"Personalized PageRank (PPR)" and "PPR (Personalized PageRank)" both give the pair
(short "PPR", long "Personalized PageRank"). Pairs are ``doc._.kg_abbreviations``
(spans); a short form's ``span._.long_form`` is its long form; the short forms, their later uses in the
doc and the long forms go to ``doc.spans["kg_acronym"]`` for the entity merger.
"""

from __future__ import annotations

import re

from spacy.language import Language
from spacy.tokens import Doc, Span, Token

from kg.extract.components.spans import CharIndex, has_pos
from kg.text.words import LONG_FORM_EDGE_WORDS

SPAN_KEY = "kg_acronym"

def _pairs(doc: Doc) -> list[tuple[Span, Span]]:
    return [(doc[s0:s1], doc[l0:l1]) for s0, s1, l0, l1 in doc._.kg_abbreviation_tokens]


def _long_form(span: Span) -> Span | None:
    for short, long in _pairs(span.doc):
        if (short.start, short.end) == (span.start, span.end):
            return long
    return None


# Stored as token offsets (plain ints), so docs serialise for nlp.pipe(n_process > 1);
# `doc._.kg_abbreviations` and `span._.long_form` give them back as spans.
if not Doc.has_extension("kg_abbreviation_tokens"):
    Doc.set_extension("kg_abbreviation_tokens", default=())
if not Doc.has_extension("kg_abbreviations"):
    Doc.set_extension("kg_abbreviations", getter=_pairs)
if not Span.has_extension("long_form"):
    Span.set_extension("long_form", getter=_long_form)

_PAREN = re.compile(r"\(([^()]{1,60})\)")
_WORD = re.compile(r"[^\s]+")
_CLAUSE_END = re.compile(r"[.;:!?]\s|[()\[\]]")
_DEFINITION_PREFIX = re.compile(r"^(?:a\.k\.a\.|aka|abbreviated|short for|or)\s*,?\s*", re.I)
_RESTATEMENT = re.compile(r"^(?:i\.\s?e\.|e\.\s?g\.|cf\.|see)", re.I)  # "(i.e., PNGBiO)" names, not defines


def looks_like_short_form(text: str) -> bool:
    """An acronym candidate: 2–12 characters, one or two words, starts alphanumeric, has a capital."""
    return (
        2 <= len(text) <= 12
        and len(text.split()) <= 2
        and text[0].isalnum()
        and any(ch.isupper() for ch in text)
        and any(ch.isalpha() for ch in text)
        and not text.isdigit()
    )


def best_long_form(short: str, long: str) -> int | None:
    """Schwartz–Hearst: the start offset in `long` of the shortest matching long form, or None.

    Every letter/digit of `short` must appear in order in `long`, the first one at a word start.
    """
    s_index = len(short) - 1
    l_index = len(long) - 1
    while s_index >= 0:
        char = short[s_index].lower()
        if not char.isalnum():
            s_index -= 1
            continue
        while l_index >= 0 and (
            long[l_index].lower() != char or (s_index == 0 and l_index > 0 and long[l_index - 1].isalnum())
        ):
            l_index -= 1
        if l_index < 0:
            return None
        l_index -= 1
        s_index -= 1
    return long.rfind(" ", 0, l_index + 1) + 1


def _window_before(text: str, end: int, max_words: int) -> int:
    """Start offset of at most `max_words` words before `end`, not crossing a clause boundary."""
    start = end
    words = list(_WORD.finditer(text, max(0, end - 400), end))
    for match in reversed(words[-max_words:]):
        clause_end = _CLAUSE_END.search(text, match.start(), end)
        if clause_end and clause_end.start() < end - 1:
            break
        start = match.start()
    return start


def _valid_long(long: str, short: str) -> bool:
    words = long.split()
    return (
        len(long) > len(short)
        and len(words) >= 2 - (len(long) > 2 * len(short))
        and words[0].lower() not in LONG_FORM_EDGE_WORDS
        and words[-1].lower() not in LONG_FORM_EDGE_WORDS
        and len(words) <= min(len(short) + 5, 2 * len(short))
    )


def find_definitions(text: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Character spans ((short), (long)) of acronym definitions in `text`, in order."""
    pairs = []
    for match in _PAREN.finditer(text):
        inside = match.group(1).strip()
        inside_start = match.start(1) + (len(match.group(1)) - len(match.group(1).lstrip()))
        if _RESTATEMENT.match(inside):
            continue
        prefix = _DEFINITION_PREFIX.match(inside)
        if prefix:
            inside_start += prefix.end()
            inside = inside[prefix.end():]
        # "(LLMs; Brown et al.)" → "LLMs"
        cut = re.split(r"[,;]", inside, maxsplit=1)[0].rstrip()
        if looks_like_short_form(cut):
            short_span = (inside_start, inside_start + len(cut))
            window_start = _window_before(text, match.start(), min(len(cut) + 5, 2 * len(cut)))
            long_text = text[window_start:match.start()].rstrip()
            offset = best_long_form(cut, long_text) if long_text else None
            if offset is not None:
                candidate = long_text[offset:]
                if _valid_long(candidate, cut):
                    pairs.append((short_span, (window_start + offset, window_start + len(long_text))))
                    continue
        # The other direction: "PPR (Personalized PageRank)".
        before = re.search(r"(\S+)\s*$", text[: match.start()])
        if before and looks_like_short_form(before.group(1)) and " " not in before.group(1):
            short = before.group(1)
            long_text = match.group(1).strip()
            long_start = match.start(1) + match.group(1).index(long_text[:1]) if long_text else match.start(1)
            offset = best_long_form(short, long_text)
            if offset == 0 and _valid_long(long_text, short):
                pairs.append(((before.start(1), before.end(1)), (long_start, long_start + len(long_text))))
    return pairs


_NOT_IN_LONG_FORM = {"AUX", "PRON", "DET", "SCONJ"}


def _ends_preamble(token: Token) -> bool:
    """A word that cannot be inside a long form: finite verbs, pronouns, determiners (not "Q-driven")."""
    if token.pos_ in _NOT_IN_LONG_FORM:
        return True
    return token.pos_ == "VERB" and token.tag_ in ("VB", "VBZ", "VBD", "VBP") and token.text[:1].islower()


class AbbreviationDetector:
    def __init__(self, nlp: Language, name: str) -> None:
        self.name = name

    def __call__(self, doc: Doc) -> Doc:
        pairs: list[tuple[Span, Span]] = []
        group: list[Span] = []
        definitions = find_definitions(doc.text)
        index = CharIndex(doc) if definitions else None
        tagged = has_pos(doc)
        for (s_start, s_end), (l_start, l_end) in definitions:
            assert index is not None  # made when there are definitions
            short = index.contract(s_start, s_end)
            long = index.contract(l_start, l_end)
            if short is None or long is None or len(short) == 0 or len(long) == 0:
                continue
            if tagged:
                # "we propose Personalized PageRank (PPR)": the long form starts after the last verb,
                # at a word's start: "the" inside "state-of-the-art (SOTA)" cuts nothing ("-art" is no long form).
                cut = max((t.i + 1 for t in long if _ends_preamble(t) and t.whitespace_), default=long.start)
                long = doc[cut : long.end]
                if len(long) == 0 or (len(long) == 1 and len(long.text) <= len(short.text)):
                    continue
            short = Span(doc, short.start, short.end, label="SHORT")
            long = Span(doc, long.start, long.end, label="LONG")
            pairs.append((short, long))
            group.extend((short, long))
        # Later (and earlier) uses of a defined short form, matched by exact token text.
        defined = {short.text: short for short, _ in pairs}
        if defined:
            taken = {(s.start, s.end) for s in group}
            for short_text, short in defined.items():
                n = len(short)
                for i in range(len(doc) - n + 1):
                    if doc[i].text == short[0].text and doc[i : i + n].text == short_text and (i, i + n) not in taken:
                        group.append(Span(doc, i, i + n, label="SHORT"))
                        taken.add((i, i + n))
        doc._.kg_abbreviation_tokens = tuple((short.start, short.end, long.start, long.end) for short, long in pairs)
        doc.spans[SPAN_KEY] = sorted(group, key=lambda s: (s.start, s.end))
        return doc


@Language.factory("kg_abbreviations", default_config={})
def make_abbreviation_detector(nlp: Language, name: str) -> AbbreviationDetector:
    return AbbreviationDetector(nlp, name)
