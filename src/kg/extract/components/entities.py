"""`kg_entities`: merges the candidates of kg's other components into typed entities.

Inputs: ``doc.spans`` groups ``kg_vocab`` (curated terms), ``kg_acronym`` (acronym
definitions), ``kg_coinage`` (coined names) and ``kg_phrase`` (head-typed noun phrases).
Each candidate gets a type, a normalised key (acronyms take their long form's key) and a
score; overlaps are settled longest-first. The result is ``doc.spans["kg"]`` (label = type)
with ``span._.kg_source``, ``kg_score``, ``kg_key``, ``kg_vocab`` (curated concept id or
None), ``kg_role`` (set by `kg_roles`) and ``kg_model_confidence`` (how much a transformer
recognizer believes the span and its type, whatever source found it; None without one),
``kg_type_confidence`` (the finding source's confidence in the type; it weighs the mention's vote for
its concept's type), and ``doc._.kg_definitions``: the (short form, long form, type) triples this doc defines, for
corpus-wide resolution.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import chain

from spacy.language import Language
from spacy.tokens import Doc, Span

from kg.extract.components.abbreviations import SPAN_KEY as ACRONYM_KEY
from kg.extract.components.coinages import SPAN_KEY as COINAGE_KEY
from kg.extract.components.hygiene import tidy
from kg.extract.components.recognizer import SPAN_KEY as MODEL_KEY
from kg.extract.components.spans import has_dep, has_pos
from kg.extract.components.typed_phrases import SPAN_KEY as PHRASE_KEY
from kg.extract.components.vocab_ruler import SPAN_KEY as VOCAB_KEY
from kg.model import GUESSED_CONFIDENCE
from kg.text.vocab import Vocabulary, load_vocabulary, normalize_key, singularize
from kg.text.words import (
    EDGE_WORDS,
    FIRST_WORD_STOP,
    GENERIC_MODIFIERS,
    GENERIC_WORDS,
    HEAD_TYPES,
    NON_ENTITY_HEADS,
    RESEARCH_FIELDS,
    STOP_WORDS,
    WRAPPER_HEADS,
)

SPAN_KEY = "kg"
FIELD_KEYS = frozenset(normalize_key(field) for field in RESEARCH_FIELDS)  # never a mention

_EXTENSIONS = (
    ("kg_source", None),
    ("kg_score", 0.0),
    ("kg_key", None),
    ("kg_vocab", None),
    ("kg_role", "used"),
    ("kg_model_confidence", None),
    ("kg_type_confidence", 1.0),
)
for _name, _default in _EXTENSIONS:
    if not Span.has_extension(_name):
        Span.set_extension(_name, default=_default)
if not Doc.has_extension("kg_definitions"):
    Doc.set_extension("kg_definitions", default=())

# Candidate sources, most trusted first (ties in length go to the earlier one).
PRIORITY = {"vocab": 0, "acronym": 1, "coinage": 2, "model": 3, "noun_chunk": 4}
SCORES = {"vocab": 0.9, "acronym": 0.85, "coinage": 0.7, "model": 0.65, "noun_chunk": 0.6}
RULES = ("vocab", "acronym", "coinage")  # the sources a recognizer's span never overrides
# How the trained recognizer's spans combine with the rules' (measured with `kg eval`): tiers
# of sources, each choosing longest-first where the earlier tiers left room.
# "tiers": rules, then the recognizer, then noun phrases; "fill": rules and noun phrases as
# without a recognizer, then the recognizer where they left room; "longest": all at once.
COMBINE_MODES: dict[str, tuple[tuple[str, ...], ...]] = {
    "tiers": (RULES, ("model",), ("noun_chunk",)),
    "fill": ((*RULES, "noun_chunk"), ("model",)),
    "longest": ((*RULES, "model", "noun_chunk"),),
}
DEFAULT_COINAGE_SCORE = 0.5  # a coined name whose type is only a guess (METHOD)


@dataclass
class Candidate:
    start: int
    end: int
    label: str
    source: str
    score: float
    key: str
    vocab: str | None = None
    guessed: bool = False  # type guessed (coinage with no evidence)
    confidence: float = 1.0  # in its type: GUESSED_CONFIDENCE when the type is a guess


def _long_form_label(long: Span, short: Span, vocabulary: Vocabulary) -> tuple[str | None, str | None, bool]:
    """(type, vocab id, whether the type is a guess) of a defined acronym, from the vocabulary or
    the long form's head word."""
    for text in (long.text, short.text):
        entry = vocabulary.lookup(text)
        if entry is not None:
            return entry.type, entry.id, False
    if _generic(long):
        return None, None, False  # "state-of-the-art (SOTA)": generic words name nothing
    last = singularize(long[-1].lower_)
    if last in NON_ENTITY_HEADS:
        return None, None, False
    label = HEAD_TYPES.get(last)
    if label is not None:
        return label, None, False
    doc = short.doc
    after = short.end + 1 if short.end < len(doc) and doc[short.end].text == ")" else short.end
    following = doc[after] if after < len(doc) and doc[after].pos_ in ("NOUN", "PROPN") else None
    if following is not None and HEAD_TYPES.get(singularize(following.lower_)):
        # "mean-field optimal stopping (MFOS) problem", "(QNPG) algorithm": the noun types the pair.
        return HEAD_TYPES[singularize(following.lower_)], None, False
    if any(t.text[:1].isupper() for t in long[1:]) or any(sum(c.isupper() for c in t.text) > 1 for t in long):
        return "METHOD", None, True  # a capitalised name defined with an acronym: most often a method
    return None, None, False


def _context_label(doc: Doc, span: Span) -> str | None:
    """Type of a coined name from its context: "X dataset", "X, a new benchmark", "X, an efficient GPU"."""
    following = doc[span.end] if span.end < len(doc) else None
    if following is None:
        return None
    label = HEAD_TYPES.get(singularize(following.lower_))
    if label is not None:
        return label
    if following.text == "," and span.end + 2 < len(doc) and doc[span.end + 1].lower_ in ("a", "an"):
        # Appositive: the first noun after "X, a …" names what X is.
        for token in doc[span.end + 2 : min(len(doc), span.end + 7)]:
            if token.pos_ in ("NOUN", "PROPN") or not has_pos(doc):
                head = HEAD_TYPES.get(singularize(token.lower_))
                if head is not None:
                    return head
            if token.text in (",", ";", ".", "that", "which", "for", "of"):
                break
    return None


class EntityMerger:
    def __init__(self, nlp: Language, name: str, vocabulary: Vocabulary | None = None, combine: str = "longest") -> None:
        if combine not in COMBINE_MODES:
            raise ValueError(f"combine must be one of {', '.join(COMBINE_MODES)}, not {combine!r}")
        self.name = name
        self.vocabulary = vocabulary or load_vocabulary()
        self.combine = combine

    def __call__(self, doc: Doc) -> Doc:
        """Every source's candidates (in this order: ties in length and trust go to the earlier),
        then the chosen ones as ``doc.spans["kg"]``."""
        vocabulary = self.vocabulary
        doc_text = doc.text  # read once: spaCy rebuilds it on every access
        vocab_spans = list(doc.spans.get(VOCAB_KEY, []))
        candidates = _vocab_candidates(vocab_spans)
        acronyms = _acronym_definitions(doc, vocabulary, doc_text)
        candidates += acronyms.candidates
        candidates += _coinage_candidates(doc, vocabulary, acronyms)
        candidates += _model_candidates(doc, vocabulary, acronyms)
        candidates += _phrase_candidates(doc, candidates, vocab_spans)
        candidates = [cand for cand in (_tidied(doc, cand, doc_text) for cand in candidates) if cand is not None]
        chosen = _select_in_tiers(candidates, COMBINE_MODES[self.combine])
        _type_evaluation_targets(chosen, doc)
        _adopt_list_types(chosen, doc)
        doc.spans[SPAN_KEY] = _mention_spans(doc, chosen)
        doc._.kg_model_tags = None  # read: its arrays need not live on (nor travel with a Doc spaCy pickles)
        doc._.kg_definitions = tuple(acronyms.triples)
        return doc



@dataclass
class _Definitions:
    """The acronyms a doc defines, and the candidates their definitions make."""

    by_short: dict[str, tuple[str, str, str | None]] = field(default_factory=dict)  # short text → (label, key, vocab id)
    guessed: set[str] = field(default_factory=set)  # short forms whose type is a guess (`_long_form_label`)
    rejected: set[str] = field(default_factory=set)  # short forms whose long form is no entity ("Random Matrix Theory (RMT)")
    triples: list[tuple[str, str, str]] = field(default_factory=list)  # (short form, long form, type): `doc._.kg_definitions`
    candidates: list[Candidate] = field(default_factory=list)

    def define(self, short: str, long: Span, label: str, key: str, vocab_id: str | None, guessed: bool = False) -> None:
        self.by_short[short] = (label, key, vocab_id)
        if guessed:
            self.guessed.add(short)
        self.triples.append((short, long.text, label))
        self.candidates.append(Candidate(long.start, long.end, label, "acronym", SCORES["acronym"], key, vocab_id, confidence=self.confidence(short)))

    def confidence(self, short: str) -> float:
        return GUESSED_CONFIDENCE if short in self.guessed else 1.0


def _vocab_candidates(vocab_spans: list[Span]) -> list[Candidate]:
    """Curated terms (`kg_vocab`), typed and keyed by the vocabulary."""
    return [Candidate(span.start, span.end, span.label_, "vocab", SCORES["vocab"], normalize_key(span.text), span.kb_id_) for span in vocab_spans]


def _acronym_definitions(doc: Doc, vocabulary: Vocabulary, doc_text: str) -> _Definitions:
    """Acronym definitions (`kg_abbreviations`): short and long form share the long form's key
    and type; a long form that is no entity leaves its short form rejected."""
    found = _Definitions()
    pairs = doc._.kg_abbreviations or ()
    for short, long in pairs:
        label, vocab_id, guessed = _long_form_label(long, short, vocabulary)
        if tidy(doc, long.start, long.end, doc_text) is None:
            continue  # the long form runs over markup ("T**ruthfulness **S**eparator"): no definition
        if label is None:
            found.rejected.add(short.text)
            continue
        found.define(short.text, long, label, normalize_key(long.text), vocab_id, guessed)
    # "multi-agent optimal stopping (MAOS)" next to "mean-field optimal stopping (MFOS) problem":
    # a long form with an unknown head takes the type of another long form with the same head.
    head_labels = {long[-1].lower_: (found.by_short[short.text][0], short.text in found.guessed) for short, long in pairs if short.text in found.by_short}
    for short, long in pairs:
        if short.text in found.rejected and long[-1].lower_ in head_labels and singularize(long[-1].lower_) not in NON_ENTITY_HEADS:
            found.rejected.discard(short.text)
            head_label, head_guessed = head_labels[long[-1].lower_]
            found.define(short.text, long, head_label, normalize_key(long.text), None, head_guessed)
    # Every use of a defined short form (`kg_acronym`) is a mention of the long form's concept.
    for span in doc.spans.get(ACRONYM_KEY, []):
        if span.label_ == "SHORT" and span.text in found.by_short:
            label, key, vocab_id = found.by_short[span.text]
            found.candidates.append(Candidate(span.start, span.end, label, "acronym", SCORES["acronym"], key, vocab_id, confidence=found.confidence(span.text)))
    return found


def _coinage_candidates(doc: Doc, vocabulary: Vocabulary, acronyms: _Definitions) -> list[Candidate]:
    """Coined names (`kg_coinage`), typed by a definition, the vocabulary or their context, else
    guessed to be methods at a lower score."""
    found = []
    for span in doc.spans.get(COINAGE_KEY, []):
        text = span.text
        entry = vocabulary.lookup(text)
        guessed = False
        if text in acronyms.rejected and entry is None:
            continue
        label: str | None
        if text in acronyms.by_short:
            label, key, vocab_id = acronyms.by_short[text]
        elif entry is not None:
            label, key, vocab_id = entry.type, normalize_key(text), entry.id
        else:
            key, vocab_id = normalize_key(text), None
            if len(text) <= 2 and text.isupper():
                continue  # an undefined two-letter acronym ("VC", "NP", "MR"): too ambiguous to keep
            label = _context_label(doc, span)
            if label is None:
                label, guessed = "METHOD", True
        score = DEFAULT_COINAGE_SCORE if guessed else SCORES["coinage"]
        confidence = GUESSED_CONFIDENCE if guessed else acronyms.confidence(text)
        found.append(Candidate(span.start, span.end, label, "coinage", score, key, vocab_id, guessed, confidence))
    return found


def _model_candidates(doc: Doc, vocabulary: Vocabulary, acronyms: _Definitions) -> list[Candidate]:
    """The trained recognizer's spans (`kg_recognizer`), less the generic ones; a definition or
    the vocabulary types them first, then a typed head noun."""
    found = []
    for span in doc.spans.get(MODEL_KEY, []):
        text = span.text
        if text in acronyms.rejected or _generic(span):
            continue
        if text in acronyms.by_short:  # an acronym this doc defines: its definition decides
            label, key, vocab_id = acronyms.by_short[text]
        else:
            entry = vocabulary.lookup(text)
            label, key, vocab_id = (entry.type, normalize_key(text), entry.id) if entry is not None else (span.label_, normalize_key(text), None)
            head = HEAD_TYPES.get(singularize(span[-1].lower_)) if entry is None and label != "TERM" else None
            if head is not None and head != "HARDWARE":
                label = head  # the head noun types the phrase: "… detection" is a task, "… accuracy" a metric
        model_confidence = span._.kg_confidence  # a transformer's; the CNN gives none
        score = SCORES["model"] if model_confidence is None or label != span.label_ else model_confidence
        found.append(Candidate(span.start, span.end, label, "model", score, key, vocab_id, confidence=acronyms.confidence(text)))
    return found


def _phrase_candidates(doc: Doc, named: list[Candidate], vocab_spans: list[Span]) -> list[Candidate]:
    """Head-typed noun phrases (`kg_phrase`), less those that only wrap a better entity: one of
    `named`, or a phrase kept before."""
    found: list[Candidate] = []
    for span in doc.spans.get(PHRASE_KEY, []):
        head = singularize(span[-1].lower_)
        if _covered_by_name(span, head, chain(named, found), vocab_spans, doc):
            continue
        found.append(Candidate(span.start, span.end, span.label_, "noun_chunk", SCORES["noun_chunk"], normalize_key(span.text)))
    return found


def _covered_by_name(span: Span, head: str, named: Iterable[Candidate], vocab_spans: list[Span], doc: Doc) -> bool:
    """True when a phrase only wraps a better entity: "the xLSTM architecture", "deep neural networks"."""
    for cand in named:
        # [modifiers] NAME head, where the head adds nothing (generic) or repeats the name's type.
        if span.start <= cand.start and cand.end == span.end - 1 and (head in WRAPPER_HEADS or cand.label == span.label_):
            return True
        # A curated or coined name of the same type inside: "Intel Loihi 2 neuromorphic chip".
        if span.start <= cand.start and cand.end < span.end and cand.label == span.label_ and cand.source != "noun_chunk" and any(
            ch.isupper() for ch in doc[cand.start : cand.end].text
        ):
            return True
    if has_pos(doc):
        for vspan in vocab_spans:
            # Adjectives around a curated term of the same type: keep the curated term.
            if vspan.end == span.end and span.start < vspan.start and vspan.label_ == span.label_:
                # Unless the extra words are nouns naming a kind ("edge GPU"): keep the curated term.
                if not all(t.pos_ in ("NOUN", "PROPN") or t.text == "-" for t in doc[span.start : vspan.start]):
                    return True
    return False


def _mention_spans(doc: Doc, chosen: list[Candidate]) -> list[Span]:
    """The chosen candidates as spans with their extensions set, less those that name nothing:
    no letter, a pronoun, one character, no key, or a research field."""
    spans = []
    tags = doc._.kg_model_tags  # a transformer recognizer's reading of the doc, or None
    for cand in chosen:
        span = Span(doc, cand.start, cand.end, label=cand.label)
        text = span.text
        pronoun_like = text.lower() in STOP_WORDS and not text.isupper()  # "it", "This"; not "IS"
        if not any(ch.isalpha() for ch in text) or pronoun_like or len(text) < 2 or not cand.key or cand.key in FIELD_KEYS:
            continue
        span._.kg_source = cand.source
        span._.kg_score = cand.score
        span._.kg_key = cand.key
        span._.kg_vocab = cand.vocab
        span._.kg_role = "used"
        span._.kg_model_confidence = tags.confidence(span.start_char, span.end_char, cand.label) if tags is not None else None
        span._.kg_type_confidence = cand.confidence
        spans.append(span)
    return spans


def _generic(span: Span) -> bool:
    """A recognizer span made only of generic words ("prior models", "loss function", "deep
    models"): it names nothing in particular. (Dropping lone lower-case words as well — "training",
    "convergence" — costs 1.6 points of SciERC dev partial F1; not done.)"""
    words = [t.lower_ for t in span if not t.is_punct]
    return all(w in GENERIC_WORDS or w in EDGE_WORDS or w in GENERIC_MODIFIERS or w in FIRST_WORD_STOP or singularize(w) in GENERIC_WORDS for w in words)


def _tidied(doc: Doc, cand: Candidate, text: str) -> Candidate | None:
    """The candidate on clean edges (`kg.extract.components.hygiene`), None when it is junk. A phrase
    whose edges moved is keyed on its new text; a curated term or acronym that only matched
    part of a word ("KAN" in "KAN-AD") is no mention of that term."""
    span = tidy(doc, cand.start, cand.end, text)
    if span is None:
        return None
    if span != (cand.start, cand.end):
        grew = span[0] < cand.start or span[1] > cand.end
        if grew and cand.source in ("vocab", "acronym"):
            return None
        cand.start, cand.end = span
        if cand.source == "model" and _generic(doc[cand.start : cand.end]):
            return None  # "systems" left of "6G systems": generic once trimmed
        if cand.source not in ("vocab", "acronym"):
            cand.key = normalize_key(doc[cand.start : cand.end].text)
    return cand


def _select_in_tiers(candidates: list[Candidate], tiers: tuple[tuple[str, ...], ...]) -> list[Candidate]:
    """Each tier's candidates, longest first, where the earlier tiers left room."""
    chosen: list[Candidate] = []
    for tier in tiers:
        taken = {i for cand in chosen for i in range(cand.start, cand.end)}
        free = [c for c in candidates if c.source in tier and not any(i in taken for i in range(c.start, c.end))]
        chosen.extend(_select(free))
    return sorted(chosen, key=lambda c: c.start)


def _select(candidates: list[Candidate]) -> list[Candidate]:
    """Non-overlapping candidates, longest first, then the most trusted source."""
    ordered = sorted(candidates, key=lambda c: (-(c.end - c.start), PRIORITY[c.source], c.start))
    taken: set[int] = set()
    chosen = []
    for cand in ordered:
        tokens = range(cand.start, cand.end)
        if any(i in taken for i in tokens):
            continue
        taken.update(tokens)
        chosen.append(cand)
    return sorted(chosen, key=lambda c: c.start)


_LIST_GLUE = {",", "and", "or", "as", "well", "&", ";"}
_ON = {"on", "across", "including", "over"}
_EVALUATION_WORDS = {"experiment", "evaluate", "evaluation", "benchmark", "dataset", "result", "test", "achieve", "outperform"}


def _type_evaluation_targets(chosen: list[Candidate], doc: Doc) -> None:
    """A coined name right after "on"/"across" in a sentence about experiments is a dataset:
    "experiments on AWA2, CUB and SUN", "achieves state-of-the-art results on LongBench"."""
    if not has_dep(doc):
        return
    for cand in chosen:
        if not cand.guessed or cand.start == 0:
            continue
        before = doc[max(0, cand.start - 2) : cand.start]
        if not any(t.lower_ in _ON for t in before):
            continue
        sentence = doc[cand.start].sent
        if any(t.lemma_.lower() in _EVALUATION_WORDS for t in sentence):
            cand.label, cand.guessed, cand.score, cand.confidence = "DATASET", False, DEFAULT_COINAGE_SCORE, 1.0


def _adopt_list_types(chosen: list[Candidate], doc: Doc) -> None:
    """A coined name listed with datasets ("MIMIC-IV, EHRShot and eICU") is a dataset too."""
    for _ in range(2):  # spread along a list in both directions
        for i, cand in enumerate(chosen):
            if not cand.guessed:
                continue
            for j in (i - 1, i + 1):
                if not 0 <= j < len(chosen) or chosen[j].guessed or chosen[j].label == "METHOD":
                    continue
                other = chosen[j]
                gap = doc[min(cand.end, other.end) : max(cand.start, other.start)]
                if len(gap) and all(t.lower_ in _LIST_GLUE for t in gap):
                    cand.label, cand.guessed, cand.score, cand.confidence = other.label, False, SCORES["coinage"], 1.0
                    break


@Language.factory("kg_entities", default_config={"combine": "longest"})
def make_entity_merger(nlp: Language, name: str, combine: str) -> EntityMerger:
    return EntityMerger(nlp, name, combine=combine)
