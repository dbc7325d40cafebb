"""Broader concepts (skos:broader), inferred over the corpus's concepts (no spaCy, cheap).

A concept without a curated broader concept gets one, tried in this order:

1. a model size or version suffix: "xLSTM 7B", "GPT-4 v2" → xLSTM, GPT-4;
2. a curated term ending its name: "Personalized PageRank" → PageRank;
3. the longest shorter concept of the corpus ending its name: "graph neural network" →
   neural network, "multi-agent optimal stopping" → optimal stopping;
4. its head noun, when at least `MIN_NARROWER` concepts share it and a reader would name it:
   "semantic segmentation", "instance segmentation" → segmentation; never a generic word
   ("model", "learning", "analysis": `kg.text.words`), which would tie unrelated work together.

One such link per concept; chains ("multi-agent optimal stopping" → "optimal stopping" →
"stopping"?) arise when the shorter concept has its own. Besides, a **family** of concepts that
share their first word (a modifier: "adversarial perturbation", "adversarial attack", "adversarial
training") gets that word as a broader concept ("adversarial") when the corpus supports one: at
least `MIN_FAMILY` concepts with at least two different last words, named together in at least
`MIN_FAMILY_PAPERS` papers, and a modifier a reader would name (a word of letters, hyphenated
ones whole: "self-supervised"; not a generic one such as "novel", "deep" or "large"). Broader concepts that no paper
mentions are emitted as concepts too, typed by the majority of their narrower concepts.
`kg related` counts a shared broader concept at a lower weight (`kg.related_work.rank`).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Collection, Mapping

from kg.model import ENTITY_TYPES, Concept, EntityType
from kg.text.vocab import Vocabulary, concept_id, concept_type
from kg.text.words import FIRST_WORD_STOP, GENERIC_MODIFIERS, GENERIC_WORDS, NON_ENTITY_HEADS, NOT_FAMILY_MODIFIERS, STOP_WORDS, VAGUE_HEADS

_HYPHENATED = re.compile(r"[-\u2010\u2011\u2013]")
_SIZE_SUFFIX = re.compile(r"^(.+?) (?:\d+(?:\.\d+)?[bmkt]?|v\d+(?:\.\d+)*)$")
MIN_NARROWER = 2  # a head noun becomes a broader concept only when this many concepts end in it
_NOT_HEADS = GENERIC_WORDS | NON_ENTITY_HEADS | STOP_WORDS | VAGUE_HEADS
# A modifier family: at least this many concepts (two last words at least), named in this many papers.
MIN_FAMILY = 3
MIN_FAMILY_PAPERS = 5
_NOT_MODIFIERS = _NOT_HEADS | GENERIC_MODIFIERS | FIRST_WORD_STOP | NOT_FAMILY_MODIFIERS | frozenset(
    "deep large small neural based using via towards multi self semi non cross pre post inter intra sub meta".split()
)


def _key(cid: str) -> str:
    return cid.split("/", 1)[1].replace("-", " ")


def _namable_head(word: str) -> bool:
    """A head a reader would name on its own: a word of letters, not generic, not a stop word."""
    return len(word) >= 4 and word.isalpha() and word not in _NOT_HEADS


def infer_broader(concepts: dict[str, Concept], vocabulary: Vocabulary, papers: Mapping[str, Collection[int]] | None = None) -> None:
    """Add broader links and the broader concepts themselves to `concepts` (in place). `papers`:
    the papers (any ids) naming each concept, for the families' support (None: no families)."""
    by_key: dict[str, list[str]] = defaultdict(list)  # key → concept ids of any type
    for cid in sorted(concepts):
        by_key[_key(cid)].append(cid)
    heads: dict[str, Counter[EntityType]] = defaultdict(Counter)  # head noun → types of concepts ending in it
    for key, cids in by_key.items():  # a key typed two ways (`kg.concepts.resolve.TypeVote`) is one name
        words = key.split(" ")
        if len(words) > 1 and _namable_head(words[-1]):
            votes: Counter[EntityType] = Counter(concepts[cid].type for cid in cids)
            heads[words[-1]][max(ENTITY_TYPES, key=lambda t: (votes.get(t, 0), -ENTITY_TYPES.index(t)))] += 1

    for cid in sorted(concepts):
        concept = concepts[cid]
        if concept.broader or vocabulary.get(cid) is not None:
            continue
        broader = _broader_of(cid, concept, concepts, vocabulary, by_key, heads)
        if broader and broader != cid:
            concepts[cid] = Concept(concept.id, concept.type, concept.pref_label, concept.alt_labels, (broader,))
    if papers is not None:
        _add_families(concepts, papers)

    # Every broader id is a concept record: curated ones (transitively) from the vocabulary,
    # head nouns typed by their narrower concepts' majority.
    pending = [b for c in list(concepts.values()) for b in c.broader]
    while pending:
        bid = pending.pop()
        if bid in concepts:
            continue
        entry = vocabulary.get(bid)
        if entry is not None:
            concepts[bid] = Concept(bid, entry.type, entry.label, tuple(sorted(entry.aliases)), entry.broader)
            pending.extend(entry.broader)
        else:
            concepts[bid] = Concept(bid, concept_type(bid), _key(bid), ())


def _broader_of(
    cid: str,
    concept: Concept,
    concepts: dict[str, Concept],
    vocabulary: Vocabulary,
    by_key: dict[str, list[str]],
    heads: dict[str, Counter[EntityType]],
) -> str | None:
    key = _key(cid)
    size = _SIZE_SUFFIX.match(key)
    if size:
        base = vocabulary.by_key.get((concept.type, size.group(1)))
        if base is not None:
            return base.id
        if concept_id(concept.type, size.group(1)) in concepts:
            return concept_id(concept.type, size.group(1))
    words = key.split(" ")
    for cut in range(1, len(words)):
        entry = vocabulary.by_key.get((concept.type, " ".join(words[cut:])))
        if entry is not None:
            return entry.id
    for cut in range(1, len(words)):  # longest shorter concept first; the same type preferred
        found = by_key.get(" ".join(words[cut:]))
        single_generic_word = cut == len(words) - 1 and not _namable_head(words[-1])  # "model"
        if found and not single_generic_word:
            same = [other for other in found if concepts[other].type == concept.type]
            return (same or found)[0]
    head = words[-1]
    if len(words) > 1 and head in heads and sum(heads[head].values()) >= MIN_NARROWER:
        votes = heads[head]
        type_ = max(ENTITY_TYPES, key=lambda t: (votes.get(t, 0), -ENTITY_TYPES.index(t)))
        return concept_id(type_, head)
    return None


def _modifier(concept: Concept) -> tuple[str, str] | None:
    """(key, written form) of the first word a multi-word concept's label starts with, when a
    reader would name a family by it: "adversarial" of "adversarial training", "self-supervised"
    (key "self supervised") of "self-supervised learning"."""
    words = concept.pref_label.split()
    if len(words) < 2:
        return None
    written = words[0]
    parts = [part.lower() for part in _HYPHENATED.split(written)]
    # A compound's parts may be prefixes ("self-", "multi-"), not its last ("LLM-based").
    if not all(part.isalpha() for part in parts) or len("".join(parts)) < 4 or {written.lower(), parts[-1]} & _NOT_MODIFIERS:
        return None
    key = " ".join(parts)
    if not _key(concept.id).startswith(key + " "):
        return None  # the label and the id disagree (a curated label, an acronym spelled out)
    return key, written


def _add_families(concepts: dict[str, Concept], papers: Mapping[str, Collection[int]]) -> None:
    """Each supported modifier family's concept as a further broader concept of its members."""
    members: dict[str, list[str]] = defaultdict(list)  # modifier key → member concept ids
    written: dict[str, Counter[str]] = defaultdict(Counter)
    for cid in sorted(papers):
        concept = concepts.get(cid)
        found = _modifier(concept) if concept is not None else None
        if found is not None:
            members[found[0]].append(cid)
            written[found[0]][found[1]] += 1
    by_key = {_key(cid): cid for cid in sorted(concepts)}
    for modifier, family in sorted(members.items()):
        last_words = {_key(cid).rsplit(" ", 1)[1] for cid in family}
        named_in = set().union(*(papers[cid] for cid in family))
        if len(family) < MIN_FAMILY or len(last_words) < 2 or len(named_in) < MIN_FAMILY_PAPERS:
            continue
        votes = Counter(concepts[cid].type for cid in family)
        type_ = max(ENTITY_TYPES, key=lambda t: (votes.get(t, 0), -ENTITY_TYPES.index(t)))
        fid = by_key.get(modifier) or concept_id(type_, modifier)
        if fid not in concepts:
            forms = written[modifier]
            label = max(forms, key=lambda w: (forms[w], w.islower(), w))  # the usual spelling, lower case on ties
            concepts[fid] = Concept(fid, type_, label if not label[:1].isupper() or label[1:2].isupper() else label.lower(), ())
        for cid in family:
            concept = concepts[cid]
            if fid not in concept.broader:
                concepts[cid] = Concept(concept.id, concept.type, concept.pref_label, concept.alt_labels, (*concept.broader, fid))
