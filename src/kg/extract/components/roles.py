"""`kg_roles`: marks entities the paper itself introduces as ``proposed`` (others stay ``used``).

Cues: the clause after "we propose / introduce / present …" (up to "which", "that", "to",
"for", ";" …), "called / named / dubbed X", "our X", "X, a novel …", "X is a new …".
Only names count — coined names, acronyms, curated proper names — not generic terms
("a transformer"), and not tasks. A curated concept (MNIST, MCMC, Gaussian process) is
known work: it is proposed only when the text says the paper makes a new one ("a new X",
"called X", "X, a novel …"), not because a proposing clause or "our" mentions it. In "our X"
only the name that ends the phrase is the paper's ("our MNIST BNN": the BNN, not MNIST). A name followed by a generic head that is itself
followed by another name is a modifier ("a novel MCTS algorithm, Stochastic-Power-HOOT").
A concept proposed once is proposed everywhere in the abstract (same key).
"""

from __future__ import annotations

from spacy.language import Language
from spacy.tokens import Doc, Span

from kg.extract.components.entities import SPAN_KEY
from kg.extract.components.spans import has_dep
from kg.text.vocab import Vocabulary, load_vocabulary, singularize
from kg.text.words import NAMING_WORDS, NOVELTY_WORDS, PROPOSE_VERBS, SELF_SUBJECTS, WRAPPER_HEADS

_NOVEL = {"novel", "new", "first", "simple", "general", "unified", "scalable", "lightweight", "principled", "large-scale"}
# Words that end the clause naming what a paper proposes.
_CLAUSE_STOP = {";", ":", ".", "which", "that", "to", "for", "by", "based", "using", "via", "with", "on", "in", "where",
                "while", "whose", "than", "over", "against", "from", "when", "if", "because", "since"}
_FINITE_VERB_TAGS = {"VBZ", "VBD", "VBP"}  # "…, and show that", "which achieves": the clause has ended
_PROPOSABLE = {"METHOD", "DATASET", "METRIC", "HARDWARE"}
MAX_CLAUSE_TOKENS = 40


class RoleDetector:
    def __init__(self, nlp: Language, name: str, vocabulary: Vocabulary | None = None) -> None:
        self.name = name
        self.vocabulary = vocabulary or load_vocabulary()

    def _nameable(self, span: Span) -> bool:
        if span.label_ not in _PROPOSABLE:
            return False
        if span._.kg_source == "vocab":
            entry = self.vocabulary.get(span._.kg_vocab or "")
            return entry is not None and entry.named
        if span._.kg_source in ("coinage", "acronym"):
            return any(ch.isupper() for ch in span.text) or any(ch.isdigit() for ch in span.text)
        # A phrase carrying a name: "Virtual-Fourier layer" (not "Deep learning" at a sentence start).
        return any(sum(ch.isupper() for ch in tok.text) > 1 or (tok.text[:1].isupper() and not tok.is_sent_start) for tok in span)

    def _triggers(self, doc: Doc) -> list[int]:
        """Token indices of "we propose"-like verbs (not "propose to")."""
        found = []
        parsed = has_dep(doc)
        for token in doc:
            lemma = token.lemma_.lower() if token.lemma_ else token.lower_
            if lemma not in PROPOSE_VERBS and token.lower_ not in PROPOSE_VERBS:
                continue
            if token.i + 1 < len(doc) and doc[token.i + 1].lower_ == "to":
                continue
            if parsed:
                subjects = [c for c in token.children if c.dep_ == "nsubj"]
                node = token
                for _ in range(3):  # "we address X and propose Y", "this paper extends …, introducing Y"
                    if node.dep_ not in ("conj", "xcomp", "advcl") or node.head is node:
                        break
                    node = node.head
                    subjects += [c for c in node.children if c.dep_ == "nsubj"]
                if not any(s.lower_ in SELF_SUBJECTS for s in subjects):
                    continue
            elif not any(t.lower_ == "we" for t in doc[max(0, token.i - 4) : token.i]):
                continue
            found.append(token.i)
        return found

    def _clause_end(self, doc: Doc, trigger: int) -> int:
        sent_end = doc[trigger].sent.end
        limit = min(sent_end, trigger + MAX_CLAUSE_TOKENS)
        depth = 0
        for i in range(trigger + 1, limit):
            text = doc[i].lower_
            depth += text == "("
            depth -= text == ")"
            if depth <= 0 and (text in _CLAUSE_STOP or doc[i].tag_ in _FINITE_VERB_TAGS):
                return i
        return limit

    def __call__(self, doc: Doc) -> Doc:
        entities = sorted(doc.spans.get(SPAN_KEY, []), key=lambda s: s.start)
        proposed: set[int] = set()
        for trigger in self._triggers(doc):
            end = self._clause_end(doc, trigger)
            inside = [i for i, s in enumerate(entities) if trigger < s.start and s.end <= end and self._nameable(s)]
            for n, i in enumerate(inside):
                span = entities[i]
                if span.start > 0 and doc[span.start - 1].lower_ in ("of", "to", "than", "like"):
                    continue  # "a generalization of QAOA": the paper's thing is built on it, not it
                if span._.kg_source == "vocab" and not _said_new(doc, span):
                    continue  # known work named in the clause ("we propose an MCMC sampler for …")
                following = doc[span.end] if span.end < len(doc) else None
                is_modifier = following is not None and singularize(following.lower_) in WRAPPER_HEADS and n + 1 < len(inside)
                # "a novel MCTS algorithm, Stochastic-Power-HOOT": the description before the name is not the name.
                described = singularize(span[-1].lower_) in WRAPPER_HEADS and n + 1 < len(inside) and entities[inside[n + 1]].start <= span.end + 1
                is_modifier = is_modifier or described
                if not is_modifier:
                    proposed.add(i)
        for i, span in enumerate(entities):
            prev = doc[span.start - 1] if span.start > 0 else None
            naming = _naming_word_before(doc, span.start)
            if naming and (span._.kg_source != "vocab" or self._nameable(span)):
                proposed.add(i)  # "named multi-agent optimal stopping (MAOS)": any type, even a task
                continue
            if not self._nameable(span):
                continue
            if prev is not None and prev.lower_ == "our":
                modifier = i + 1 < len(entities) and entities[i + 1].start == span.end  # "our MNIST BNN": another name follows
                if not modifier and (span._.kg_source != "vocab" or _said_new(doc, span)):
                    proposed.add(i)
                continue
            tail = [t.lower_ for t in doc[span.end : span.end + 4]]
            if len(tail) > 2 and tail[0] in (",", "is") and tail[1] in ("a", "an", "the") and tail[2] in _NOVEL:
                proposed.add(i)
        keys = {entities[i]._.kg_key for i in proposed}
        for span in entities:
            span._.kg_role = "proposed" if span._.kg_key in keys else "used"
        return doc


def _naming_word_before(doc: Doc, start: int) -> bool:
    """ "called X", "named the X", "which we call X", "what we term X": the text names X here."""
    i = start - 1
    while i >= 0 and doc[i].lower_ in ("the", "a", "an", "it", "them", "this"):
        i -= 1
    if i < 0:
        return False
    word = doc[i].lower_
    return word in NAMING_WORDS or (word in ("call", "term", "name", "dub") and i > 0 and doc[i - 1].lower_ == "we")


def _said_new(doc: Doc, span: Span) -> bool:
    """The text calls this mention new: "a new/novel X" right before it (a few modifiers
    allowed), or a naming word ("called X")."""
    for token in reversed(doc[max(0, span.start - 4) : span.start]):
        if token.lower_ in NOVELTY_WORDS or token.lower_ in NAMING_WORDS:
            return True
        if token.pos_ not in ("ADJ", "NOUN", "PROPN", "PUNCT") or token.text in (",", ";", "."):
            return False
    return False



@Language.factory("kg_roles", default_config={})
def make_role_detector(nlp: Language, name: str) -> RoleDetector:
    return RoleDetector(nlp, name)
