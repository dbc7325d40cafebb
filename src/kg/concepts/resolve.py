"""Corpus-wide resolution: per-paper mentions → concepts with stable ids (no spaCy, cheap).

Variants merge on `kg.text.vocab.normalize_key` (case, plural, hyphen/space). Acronyms merge
with their long form, learnt from any paper's definitions ("large language models (LLMs)")
and from the curated vocabulary, so "LLM", "LLMs" and "large language models" become one
concept. A concept's type is the majority type of its mentions; ids look like
``method/large-language-model``. Broader concepts come from the vocabulary, from a model
size or version suffix, a curated term ending the name, a shorter concept ending it and a
shared head noun (`kg.concepts.hierarchy`); they are emitted as concepts even if never mentioned.
"""

from __future__ import annotations

import functools
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from kg.concepts.acronyms import WORD_RUN, AcronymTable
from kg.concepts.hierarchy import infer_broader
from kg.model import ENTITY_TYPES, Concept, LocalMention, Mention, PaperEntities, PaperExtraction, Resolution
from kg.text.clean import clean_text
from kg.text.markup import EMPHASIS
from kg.text.vocab import VocabEntry, Vocabulary, concept_id, is_acronym, load_vocabulary, normalize_key
from kg.util.gcpause import gc_paused
from kg.util.stages import REPORT_EVERY

MAX_ALT_LABELS = 25


@functools.lru_cache(maxsize=1 << 16)
def readable(text: str) -> str:
    """A mention's text as a reader reads it (PDF debris repaired): labels never carry "(cid:173)"."""
    return clean_text(text).text


@functools.lru_cache(maxsize=1 << 18)
def _own_keys(text: str) -> tuple[str, ...]:
    """The keys of a paper's own acronyms that `_group_of` may read for a mention of `text`:
    the text's own key if it is an acronym, and those of the acronyms inside a multi-word name
    (as `AcronymTable.expand` reads them). Its result depends on the paper only through these."""
    keys = [normalize_key(text)] if is_acronym(text) else []
    words = WORD_RUN.findall(text)
    if len(words) >= 2:
        keys += [normalize_key(w) for w in words if is_acronym(w) and w[:1].isalnum() and w[-1:].isalnum()]
    return tuple(keys)


def _group_of(mention: LocalMention, text: str, vocabulary: Vocabulary, acronyms: AcronymTable, defined_here: dict[str, str]) -> str:
    """The merge group of a mention: a curated concept id, or ``key:<normalised key>``.

    `defined_here` maps this paper's own acronyms to their long-form keys: a paper that
    writes "adversarial examples (AEs)" means that, not the curated AE (autoencoder). `text`
    is the mention's text as read (`readable`: PDF debris repaired).
    Acronyms inside a name are spelled out first ("Wasserstein GAN"), so variants merge.
    """
    key = mention.key
    defined = is_acronym(text) and normalize_key(text) in defined_here
    if defined:
        key = defined_here[normalize_key(text)]
    elif key == normalize_key(text):
        key = acronyms.expand(text, defined_here)
    key = acronyms.spelling(key)
    if mention.vocab:
        entry = vocabulary.get(mention.vocab)
        own_definition = defined or mention.source == "acronym"
        if entry is None or not own_definition or _names(entry, key):
            return mention.vocab
        return _curated_or_key(key, vocabulary, acronyms)
    if is_acronym(text) and normalize_key(text) == key:
        borrowed = acronyms.borrowed(key)  # an acronym this paper did not define, defined elsewhere
        if borrowed is not None:
            key = borrowed[0]
    entry = vocabulary.lookup(text) if key == normalize_key(text) else None
    return entry.id if entry is not None else _curated_or_key(key, vocabulary, acronyms)


def _names(entry: VocabEntry, key: str) -> bool:
    """Whether a curated entry's label or an alias is, or contains, the long form `key`
    ("noisy intermediate-scale quantum" in "noisy intermediate-scale quantum device")."""
    padded = f" {key} "
    return any(padded in f" {normalize_key(name)} " for name in (entry.label, *entry.aliases))


def _curated_or_key(key: str, vocabulary: Vocabulary, acronyms: AcronymTable) -> str:
    for type_ in ENTITY_TYPES:
        entry = vocabulary.by_key.get((type_, key)) or acronyms.curated(type_, key)
        if entry is not None:
            return entry.id
    return f"key:{key}"


def _pick_label(surfaces: Counter[str]) -> str:
    """Most frequent spelled-out surface form; lower-case first letters win sentence-initial ties."""
    folded: Counter[str] = Counter()
    for text, count in surfaces.items():
        folded[text] += count
        lowered = text[:1].lower() + text[1:]
        if text != lowered and lowered in surfaces:
            folded[lowered] += count
            del folded[text]
    long_forms = {t: c for t, c in folded.items() if not is_acronym(t)} or dict(folded)
    best = max(long_forms.items(), key=lambda kv: (kv[1], normalize_key(kv[0]) == kv[0].lower(), -len(kv[0]), kv[0]))[0]
    return _display(best)


@functools.lru_cache(maxsize=1 << 16)
def _display(label: str) -> str:
    """A label fit for display: markup emphasis removed; "Latent generative models" → "latent generative models"."""
    label = " ".join(EMPHASIS.sub("", label).split())
    words = label.split(" ")
    if len(words) > 1 and words[0][:1].isupper() and words[0][1:].islower() and all(w.islower() for w in words[1:]):
        label = label[:1].lower() + label[1:]
    return label


@gc_paused()
def resolve(
    extractions: Iterable[PaperExtraction], *, vocabulary: Vocabulary | None = None, report: Callable[[int], None] | None = None
) -> Resolution:
    """Merge every paper's mentions into concepts; mentions get the concept id and its type.
    `report` is told how many papers' mentions are grouped (the bulk of the work), every `REPORT_EVERY`."""
    vocabulary = vocabulary or load_vocabulary()
    extractions = list(extractions)
    acronyms = AcronymTable(extractions, vocabulary)
    groups = _group_mentions(extractions, vocabulary, acronyms, report)
    group_ids = _concept_ids(groups, vocabulary)
    concepts = _concepts(groups.surfaces, group_ids, vocabulary)
    infer_broader(concepts, vocabulary)
    entities = _resolved_entities(extractions, groups.per_paper, group_ids, concepts)
    return Resolution(tuple(entities), tuple(concepts[cid] for cid in sorted(concepts)))


@dataclass
class _Groups:
    """Every mention's merge group (`_group_of`), and what the mentions of each group say."""

    per_paper: list[list[str]] = field(default_factory=list)  # per paper, each mention's group
    label_votes: defaultdict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))  # group → its mentions' types
    surfaces: defaultdict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))  # group → its mentions' texts, as read


def _group_mentions(extractions: list[PaperExtraction], vocabulary: Vocabulary, acronyms: AcronymTable, report: Callable[[int], None] | None) -> _Groups:
    """Each paper's mentions into merge groups, with the paper's own acronym definitions."""
    groups = _Groups()
    long_keys: dict[str, str] = {}  # a definition's long form → its key, spelled out (per call: the table is this corpus's)
    memo: dict[tuple[object, ...], str] = {}  # `_group_of` for one mention's fields and what it reads of its paper
    for done, extraction in enumerate(extractions, start=1):
        if report is not None and done % REPORT_EVERY == 0:
            report(done)
        defined_here = {}
        for d in extraction.definitions:
            long_key = long_keys.get(d.long)
            if long_key is None:
                long_key = long_keys[d.long] = acronyms.spelling(acronyms.expand(d.long))
            defined_here[normalize_key(d.short)] = long_key
        paper_groups: list[str] = []
        groups.per_paper.append(paper_groups)
        for mention in extraction.mentions:
            text = readable(mention.text)
            own = tuple(defined_here.get(k) for k in _own_keys(text)) if defined_here else ()
            fields = (mention.key, text, mention.vocab, mention.source == "acronym", own)
            group = memo.get(fields)
            if group is None:
                group = memo[fields] = _group_of(mention, text, vocabulary, acronyms, defined_here)
            paper_groups.append(group)
            groups.label_votes[group][mention.label] += 1
            groups.surfaces[group][text] += 1
        for definition in extraction.definitions:
            key = defined_here[normalize_key(definition.short)]
            if f"key:{key}" in groups.surfaces:
                groups.surfaces[f"key:{key}"][definition.long] += 0  # known spelling, no extra weight
    return groups


def _concept_ids(groups: _Groups, vocabulary: Vocabulary) -> dict[str, str]:
    """Each group's concept id: the curated concept's, else one made of its majority type and key."""
    group_ids: dict[str, str] = {}
    for group in sorted(groups.surfaces):
        entry = vocabulary.get(group)
        if entry is not None:
            group_ids[group] = entry.id
            continue
        votes = groups.label_votes[group]
        label = max(ENTITY_TYPES, key=lambda t: (votes.get(t, 0), -ENTITY_TYPES.index(t)))
        group_ids[group] = concept_id(label, group.split(":", 1)[1])
    return group_ids


def _concepts(surfaces: dict[str, Counter[str]], group_ids: dict[str, str], vocabulary: Vocabulary) -> dict[str, Concept]:
    """The concept records, by id (groups that landed on the same id merged): labels from the
    vocabulary or the mentions' surfaces, curated broader concepts (the inferred ones come later)."""
    by_id: dict[str, Counter[str]] = defaultdict(Counter)
    for group, cid in group_ids.items():
        by_id[cid].update(surfaces[group])
    concepts: dict[str, Concept] = {}
    for cid in sorted(by_id):
        entry = vocabulary.get(cid)
        seen = by_id[cid]
        type_ = entry.type if entry else cid.split("/", 1)[0].upper()
        pref = entry.label if entry else _pick_label(seen)
        alts = {_display(a) if "*" in a else a for a in set(seen) | (set(entry.aliases) if entry else set())}
        alts.discard(pref)
        concepts[cid] = Concept(
            id=cid,
            type=type_,  # type: ignore[arg-type]
            pref_label=pref,
            alt_labels=tuple(sorted(alts, key=lambda s: (s.lower(), s))[:MAX_ALT_LABELS]),
            broader=entry.broader if entry else (),
        )
    return concepts


def _resolved_entities(
    extractions: list[PaperExtraction], per_paper: list[list[str]], group_ids: dict[str, str], concepts: dict[str, Concept]
) -> list[PaperEntities]:
    """Each paper's mentions with their concept and its type, in text order."""
    entities = []
    for extraction, paper_groups in zip(extractions, per_paper, strict=True):
        mentions = []
        for local, group in zip(extraction.mentions, paper_groups, strict=True):
            cid = group_ids[group]
            mentions.append(
                Mention(
                    start=local.start,
                    end=local.end,
                    text=local.text,
                    label=concepts[cid].type,
                    concept=cid,
                    role=local.role,
                    source=local.source,
                    score=local.score,
                    sent_start=local.sent_start,
                    sent_end=local.sent_end,
                )
            )
        entities.append(PaperEntities(extraction.paper_id, tuple(sorted(mentions, key=lambda x: (x.start, x.end)))))
    return entities
