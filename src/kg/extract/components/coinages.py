"""`kg_coinages`: newly coined names — KAN-AD, xLSTM 7B, S-PNGBiO, DiT-XL/2, RWKV-6-14B, HippoRAG 2.

A regular expression over the text finds word-like pieces (letters, digits and inner
``- / + .``); a piece is a coinage when one of its hyphen/slash parts has two capitals,
an inner capital after a lower-case letter (xLSTM, PageRank) or letters mixed with digits
(word2vec). A following size or version ("7B", "2", "v2") is kept with the name.
Results go to ``doc.spans["kg_coinage"]`` with label ``COINAGE``; the entity merger types them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from spacy.language import Language
from spacy.tokens import Doc, Span

from kg.extract.components.spans import CharIndex
from kg.text.words import NOT_COINAGES

SPAN_KEY = "kg_coinage"

_PIECE = re.compile(r"(?<![\w\-/+.])[A-Za-z0-9]+(?:(?:[-/+]|(?<=\d)\.(?=\d))[A-Za-z0-9]+)*\+*")
# Only pieces with a capital after their first character, or a digit, can be coined names;
# checking that with one regex first skips the ordinary words (most of the text) cheaply.
_CANDIDATE = re.compile(r".[A-Z]|\d")
# A size or version after a name ("xLSTM 7B", "Llama 3", "v2"); not a count of what follows ("BNN 7 times faster").
_SUFFIX = re.compile(
    r"[ \-](?:\d{1,3}(?:\.\d)?[BMKT]|\d{1,2}(?:\.\d)?|v\d{1,2}(?:\.\d+)*)"
    r"(?![\w%\-/+]|\.\d|\s*(?:×|\s(?:times|fold|faster|slower|fewer|more|less|orders?|percent|points?|layers?|steps?)\b))"
)
_CAMEL = re.compile(r"[a-z][A-Z]")
_ROMAN = re.compile(r"^(?:I{1,3}|IV|VI{0,3}|IX|XI{0,3})$")
_UNIT = re.compile(r"^\d+(?:\.\d+)?(?:[A-Za-z]{1,3}|[a-z]+)$")  # 3D, 10x, 4K, 5th, 100ms, 2nd

def _coinlike(part: str) -> bool:
    letters = sum(ch.isalpha() for ch in part)
    uppers = sum(ch.isupper() for ch in part)
    digits = sum(ch.isdigit() for ch in part)
    return (uppers >= 2 and letters >= 2) or bool(_CAMEL.search(part)) or (letters >= 2 and digits >= 1 and part[0].isalpha())


def is_coinage(piece: str) -> bool:
    """A coined name: KAN-AD, xLSTM, S-PNGBiO, DiT-XL/2, RWKV-6-14B, word2vec; not AI, II, 3D, Hessian/Jacobian."""
    if piece in NOT_COINAGES or piece.rstrip("s") in NOT_COINAGES or _ROMAN.match(piece) or _UNIT.match(piece):
        return False
    parts = re.split(r"[-/]", piece)
    if len(parts) > 1 and len(parts[0]) == 1 and parts[0].isupper() and parts[1][:1].isupper():
        return True  # "Q-Ramping", "S-PNGBiO": a one-letter prefix on a name
    return any(_coinlike(part) for part in parts)


_SLASH_WORDS = re.compile(r"/(?=[A-Za-z]{3})")  # "AdaGrad/Adam" is two names; "DiT-XL/2" one
_LOWER_TAIL = re.compile(r"(?:-[a-z]{3,})+$")  # "xLSTM-based", "LLM-driven", "AI-generated"


def _pieces(text: str) -> Iterator[tuple[int, str]]:
    for match in _PIECE.finditer(text):
        start = match.start()
        for part in _SLASH_WORDS.split(match.group()):
            yield start, part
            start += len(part) + 1


_CITATION_KEY = re.compile(r"^[a-z]{3,}\d{2}$")  # "[bats93]" reference keys in old abstracts
_WORD = re.compile(r"[A-Za-z]{4,}")


def _shouting(text: str) -> bool:
    """Text (or a long stretch of it) in capitals, as in some old abstracts: capitals mean nothing there."""
    words = _WORD.findall(text)
    return len(words) >= 8 and sum(w.isupper() for w in words) > 0.3 * len(words)


# A plain capitalised word the paper introduces as its own: "we propose Glow, a …",
# "a model called Sparrow", "we present Flamingo: …". Only right after the verb (or naming
# word) and before a comma, colon, parenthesis or an appositive, where a capital means a name.
_INTRODUCED = re.compile(
    r"\b(?:[Ww]e\s+(?:\w+ly\s+)?(?:propose|present|introduce|develop|release|name|call|dub|term)|"
    r"(?:called|named|dubbed|termed|coined))\s+(?:it\s+|them\s+)?"
    r"(?P<name>[A-Z][a-z]{2,}[A-Za-z]*)(?=\s*[,:(]|\s+(?:a|an|which|that|for|to)\s)"
)


def find_introduced_names(text: str) -> list[tuple[int, int]]:
    """Character spans of plain capitalised names the text introduces ("we propose Glow, …")."""
    return [m.span("name") for m in _INTRODUCED.finditer(text) if m.group("name") not in NOT_COINAGES]


def find_coinages(text: str) -> list[tuple[int, int]]:
    """Character spans of coined names in `text` (and of names it introduces, `find_introduced_names`)."""
    spans = []
    shouting = _shouting(text)
    for start, piece in _pieces(text):
        if not _CANDIDATE.search(piece) or _CITATION_KEY.match(piece):
            continue
        if shouting and piece.isupper():
            continue
        tail = _LOWER_TAIL.search(piece)
        if tail:
            piece = piece[: tail.start()]
        if not piece or not is_coinage(piece):
            continue
        end = start + len(piece)
        suffix = None if tail else _SUFFIX.match(text, end)
        if suffix:
            end = suffix.end()
        spans.append((start, end))
    taken = [(s, e) for s, e in spans]
    spans.extend(span for span in find_introduced_names(text) if not any(s < span[1] and span[0] < e for s, e in taken))
    return sorted(spans)


class CoinageDetector:
    def __init__(self, nlp: Language, name: str) -> None:
        self.name = name

    def __call__(self, doc: Doc) -> Doc:
        spans = []
        last_end = -1
        text = doc.text  # Doc.text is rebuilt from the tokens on every access
        found = find_coinages(text)
        index = CharIndex(doc) if found else None
        for start, end in found:
            assert index is not None  # made when something was found
            span = index.span(start, end, expand=True)
            if span is None or any(ch.isalnum() for ch in text[span.start_char : start] + text[end : span.end_char]):
                continue  # the tokenizer glued the name to more text ("GD(1"): not a clean name
            if span.start >= last_end:
                spans.append(Span(doc, span.start, span.end, label="COINAGE"))
                last_end = span.end
        doc.spans[SPAN_KEY] = spans
        return doc


@Language.factory("kg_coinages", default_config={})
def make_coinage_detector(nlp: Language, name: str) -> CoinageDetector:
    return CoinageDetector(nlp, name)
