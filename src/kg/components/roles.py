"""`kg_roles`: marks entities the paper itself introduces as ``proposed`` (others stay ``used``).

Cues: "we propose/introduce/present … X" (the first name after the verb), "called /
named / dubbed X", "(i.e., X)" in such a sentence, "our X", "X, a novel …", "X is a new …".
A concept proposed once is proposed everywhere in the abstract (same key). Only names
count — coined names, acronyms, curated proper names — not generic terms ("a transformer").
"""

from __future__ import annotations

from spacy.language import Language
from spacy.tokens import Doc, Span

from kg.components.entities import SPAN_KEY
from kg.components.heads import NAMING_WORDS, PROPOSE_VERBS, SELF_SUBJECTS
from kg.vocab import Vocabulary, load_vocabulary

_NOVEL = {"novel", "new", "first", "simple", "general", "unified", "scalable", "lightweight", "principled"}


class RoleDetector:
    def __init__(self, nlp: Language, name: str, vocabulary: Vocabulary | None = None) -> None:
        self.name = name
        self.vocabulary = vocabulary or load_vocabulary()

    def _nameable(self, span: Span) -> bool:
        if span._.kg_source == "vocab":
            entry = self.vocabulary.get(span._.kg_vocab or "")
            return entry is not None and entry.named
        if span._.kg_source in ("coinage", "acronym"):
            return any(ch.isupper() for ch in span.text) or any(ch.isdigit() for ch in span.text)
        return any(sum(ch.isupper() for ch in tok.text) > 1 for tok in span)

    def _triggers(self, doc: Doc) -> list[int]:
        """Token indices of "we propose"-like verbs (not "propose to")."""
        found = []
        has_dep = doc.has_annotation("DEP")
        for token in doc:
            lemma = token.lemma_.lower() if token.lemma_ else token.lower_
            if lemma not in PROPOSE_VERBS and token.lower_.rstrip("sd") not in PROPOSE_VERBS and token.lower_ not in PROPOSE_VERBS:
                continue
            if token.i + 1 < len(doc) and doc[token.i + 1].lower_ == "to":
                continue
            if has_dep:
                subject = [c for c in token.children if c.dep_ in ("nsubj", "nsubjpass")]
                heads = [token.head] if token.dep_ in ("conj", "xcomp") else []
                subjects = subject + [c for h in heads for c in h.children if c.dep_ == "nsubj"]
                if not any(s.lower_ in SELF_SUBJECTS for s in subjects):
                    continue
            elif not any(t.lower_ == "we" for t in doc[max(0, token.i - 4) : token.i]):
                continue
            found.append(token.i)
        return found

    def __call__(self, doc: Doc) -> Doc:
        entities = list(doc.spans.get(SPAN_KEY, []))
        proposed: set[int] = set()
        sent_of = {}
        for index, span in enumerate(entities):
            sent_of[index] = span.sent.start if doc.has_annotation("SENT_START") or doc.has_annotation("DEP") else 0
        for trigger in self._triggers(doc):
            trigger_sent = doc[trigger].sent.start if doc.has_annotation("SENT_START") or doc.has_annotation("DEP") else 0
            after = [i for i, s in enumerate(entities) if s.start > trigger and sent_of[i] == trigger_sent]
            for i in after:
                if self._nameable(entities[i]):
                    proposed.add(i)
                    break
            for i in after:
                # "(i.e., X)" and "called X" in a sentence about the paper's own contribution.
                before = doc[max(0, entities[i].start - 3) : entities[i].start]
                if any(t.lower_ in ("i.e.", "ie", "i.e") for t in before) and self._nameable(entities[i]):
                    proposed.add(i)
        for i, span in enumerate(entities):
            if not self._nameable(span):
                continue
            prev = doc[span.start - 1] if span.start > 0 else None
            if prev is not None and (prev.lower_ in NAMING_WORDS or prev.lower_ == "our"):
                proposed.add(i)
                continue
            tail = [t.lower_ for t in doc[span.end : span.end + 4]]
            if (tail[:1] == [","] and len(tail) > 2 and tail[1] in ("a", "an") and tail[2] in _NOVEL) or (
                tail[:1] == ["is"] and len(tail) > 2 and tail[1] in ("a", "an") and tail[2] in _NOVEL
            ):
                proposed.add(i)
        keys = {entities[i]._.kg_key for i in proposed}
        for span in entities:
            span._.kg_role = "proposed" if span._.kg_key in keys else "used"
        return doc


@Language.factory("kg_roles", default_config={})
def make_role_detector(nlp: Language, name: str) -> RoleDetector:
    return RoleDetector(nlp, name)
