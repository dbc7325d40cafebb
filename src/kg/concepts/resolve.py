"""Corpus-wide resolution: per-paper mentions → concepts with stable ids (no spaCy, cheap).

Variants merge on `kg.text.vocab.normalize_key` (case, plural, hyphen/space). Acronyms merge
with their long form, learnt from any paper's definitions ("large language models (LLMs)")
and from the curated vocabulary, so "LLM", "LLMs" and "large language models" become one
concept. A concept's type is its mentions' vote, each weighted by its score and its source's
confidence in the type (`Ballot`; guesses count once), and every mention takes it where the vote
is clear (`CLEAR_SHARE`); where the corpus splits, each paper keeps the type its own mentions
vote for, as a concept of that type. Ids look like ``method/large-language-model``. Broader
concepts come from the vocabulary, from a model size or version suffix, a curated term ending
the name, a shorter concept ending it and a shared head noun (`kg.concepts.hierarchy`); they are
emitted as concepts even if never mentioned.
"""

from __future__ import annotations

import functools
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from kg.concepts.acronyms import WORD_RUN, AcronymTable
from kg.concepts.hierarchy import infer_broader
from kg.model import ENTITY_TYPES, Concept, EntityType, LocalMention, Mention, PaperEntities, PaperExtraction, Resolution, in_text_order
from kg.text.clean import clean_text
from kg.text.markup import EMPHASIS
from kg.text.vocab import VocabEntry, Vocabulary, concept_id, is_acronym, load_vocabulary, normalize_key
from kg.util.gcpause import gc_paused
from kg.util.stages import REPORT_EVERY

MAX_ALT_LABELS = 25
CLEAR_SHARE = 0.6  # a concept's type is clear when the vote's winner has this share of it (`TypeVote`; chosen on kg's gold training data, bench/type_vote.py)


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
        if entry is None or not own_definition or _names(entry, key, acronyms):
            return mention.vocab
        return _curated_or_key(key, vocabulary, acronyms)
    if is_acronym(text) and normalize_key(text) == key:
        borrowed = acronyms.borrowed(key)  # an acronym this paper did not define, defined elsewhere
        if borrowed is not None:
            key = borrowed[0]
    entry = vocabulary.lookup(text) if key == normalize_key(text) else None
    return entry.id if entry is not None else _curated_or_key(key, vocabulary, acronyms)


def _names(entry: VocabEntry, key: str, acronyms: AcronymTable) -> bool:
    """Whether a curated entry's label or an alias is, or contains, the long form `key`
    ("noisy intermediate-scale quantum" in "noisy intermediate-scale quantum device"), in the
    corpus's usual spelling as `key` is: "mean squared error (MSE)" names the curated MSE where
    the corpus writes "mean square error" more often."""
    padded = f" {key} "
    return any(padded in f" {acronyms.spelling(normalize_key(name))} " for name in (entry.label, *entry.aliases))


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
    typings = _typings(groups, vocabulary)
    per_paper = _concept_ids(extractions, groups, typings)
    concepts = _concepts(_surfaces(extractions, groups, per_paper), vocabulary)
    named_in: defaultdict[str, set[int]] = defaultdict(set)  # concept → the papers naming it (the families' support)
    for index, paper_ids in enumerate(per_paper):
        for cid in paper_ids:
            named_in[cid].add(index)
    infer_broader(concepts, vocabulary, named_in)
    entities = _resolved_entities(extractions, per_paper, concepts)
    return Resolution(tuple(entities), tuple(concepts[cid] for cid in sorted(concepts)))


def vote_weight(mention: LocalMention) -> float:
    """A mention's say in its concept's type: its score (the chance that a reader accepts it with
    its type, `kg.extract.scoring`) times its source's confidence in the type (a recognizer's
    per-mention probability belongs there too). A guessed type (confidence 0) is no evidence: see `Ballot`."""
    return mention.score * mention.confidence


@dataclass(frozen=True)
class TypeVote:
    """The types a concept's mentions give it, each with its weight (`Ballot`)."""

    weights: tuple[tuple[EntityType, float], ...]

    @property
    def winner(self) -> EntityType:
        """The type with the most weight (ties: the earlier of `ENTITY_TYPES`)."""
        return max(self.weights, key=lambda tw: (tw[1], -ENTITY_TYPES.index(tw[0])))[0] if self.weights else "TERM"

    @property
    def share(self) -> float:
        """The winner's share of the whole vote (1.0 when every mention agrees)."""
        total = sum(w for _, w in self.weights)
        return dict(self.weights)[self.winner] / total if total > 0 else 1.0

    @property
    def clear(self) -> bool:
        return self.share >= CLEAR_SHARE


@dataclass
class Ballot:
    """Collects a concept's type vote. Each mention whose source has evidence for its type adds its
    `vote_weight`; guessed types (confidence 0: a coined name taken for a method for want of
    evidence) are one default, not evidence, so all the guesses of one type count once, at the best
    guess's score: one mention that its context types ("X benchmark") outweighs five guesses."""

    evidence: defaultdict[EntityType, float] = field(default_factory=lambda: defaultdict(float))
    guesses: dict[EntityType, float] = field(default_factory=dict)

    def add(self, mention: LocalMention) -> None:
        if mention.confidence > 0:
            self.evidence[mention.label] += vote_weight(mention)
        else:
            self.guesses[mention.label] = max(self.guesses.get(mention.label, 0.0), mention.score)

    def vote(self) -> TypeVote:
        """Every type some mention gives, with its weight (a type given at score 0 keeps its place)."""
        return TypeVote(tuple((t, self.evidence.get(t, 0.0) + self.guesses.get(t, 0.0)) for t in ENTITY_TYPES if t in self.evidence or t in self.guesses))


@dataclass
class _Groups:
    """Every mention's merge group (`_group_of`), and what the mentions of each group say."""

    per_paper: list[list[str]] = field(default_factory=list)  # per paper, each mention's group
    ballots: defaultdict[str, Ballot] = field(default_factory=lambda: defaultdict(Ballot))  # group → its mentions' type vote
    spellings: defaultdict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # group → long forms its papers define


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
            groups.ballots[group].add(mention)
        for definition in extraction.definitions:
            groups.spellings[f"key:{defined_here[normalize_key(definition.short)]}"].add(definition.long)
    return groups


def _typings(groups: _Groups, vocabulary: Vocabulary) -> dict[str, TypeVote | EntityType]:
    """Each group's type: a curated concept's own, else its mentions' vote (`TypeVote`)."""
    typings: dict[str, TypeVote | EntityType] = {}
    for group, ballot in groups.ballots.items():
        entry = vocabulary.get(group)
        typings[group] = entry.type if entry is not None else ballot.vote()
    return typings


def _concept_ids(extractions: list[PaperExtraction], groups: _Groups, typings: dict[str, TypeVote | EntityType]) -> list[list[str]]:
    """Each mention's concept id, per paper. A curated group's id is the curated concept's; another
    group's is made of its type and key: the vote's winner when the vote is clear, else (a word
    that readers type differently from paper to paper) the type this paper's own mentions of it
    vote for, so a paper's acronym and its long form keep one type; a paper that only guesses
    takes the winner."""
    ids: list[list[str]] = []
    for extraction, paper_groups in zip(extractions, groups.per_paper, strict=True):
        local: defaultdict[str, Ballot] = defaultdict(Ballot)
        for mention, group in zip(extraction.mentions, paper_groups, strict=True):
            typing = typings[group]
            if isinstance(typing, TypeVote) and not typing.clear:
                local[group].add(mention)
        paper_ids = []
        for group in paper_groups:
            typing = typings[group]
            if isinstance(typing, str):
                paper_ids.append(group)
                continue
            own = local.get(group)
            type_ = own.vote().winner if own is not None and own.evidence else typing.winner
            paper_ids.append(concept_id(type_, group.split(":", 1)[1]))
        ids.append(paper_ids)
    return ids


def _surfaces(extractions: list[PaperExtraction], groups: _Groups, per_paper: list[list[str]]) -> dict[str, Counter[str]]:
    """Each concept's surfaces as read, counted; the long forms its papers define count as known spellings."""
    surfaces: defaultdict[str, Counter[str]] = defaultdict(Counter)
    spelled: defaultdict[str, set[str]] = defaultdict(set)  # concept → the groups it comes from
    for extraction, paper_groups, paper_ids in zip(extractions, groups.per_paper, per_paper, strict=True):
        for mention, group, cid in zip(extraction.mentions, paper_groups, paper_ids, strict=True):
            surfaces[cid][readable(mention.text)] += 1
            spelled[cid].add(group)
    for cid, from_groups in spelled.items():
        for group in from_groups:
            for long in groups.spellings.get(group, ()):
                surfaces[cid][long] += 0  # known spelling, no extra weight
    return surfaces


def _concepts(surfaces: dict[str, Counter[str]], vocabulary: Vocabulary) -> dict[str, Concept]:
    """The concept records, by id: labels from the vocabulary or the mentions' surfaces, curated
    broader concepts (the inferred ones come later)."""
    concepts: dict[str, Concept] = {}
    for cid in sorted(surfaces):
        entry = vocabulary.get(cid)
        seen = surfaces[cid]
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


def _resolved_entities(extractions: list[PaperExtraction], per_paper: list[list[str]], concepts: dict[str, Concept]) -> list[PaperEntities]:
    """Each paper's mentions with their concept and its type, in text order."""
    entities = []
    for extraction, paper_ids in zip(extractions, per_paper, strict=True):
        mentions = []
        for local, cid in zip(extraction.mentions, paper_ids, strict=True):
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
                    where=local.where,
                )
            )
        entities.append(PaperEntities(extraction.paper_id, tuple(sorted(mentions, key=in_text_order))))
    return entities
