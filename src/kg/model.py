"""kg's domain model: the frozen, typed records passed between pipeline stages.

Every stage reads and returns these, so no stage imports another to learn a record's
shape: ingest → `Paper`; extract → `PaperExtraction` (`LocalMention`s, `Definition`s);
resolve and propagate → `Resolution` (`PaperEntities` of `Mention`s, `Concept`s).
The JSON shapes of the published ones are documented in ``schemas/*.schema.json``
(paper, entities, concept). `to_dict` / `from_dict` give plain JSON-ready dicts with the
same field names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal, get_args, overload

EntityType = Literal["METHOD", "DATASET", "HARDWARE", "METRIC", "TASK", "TERM"]
ENTITY_TYPES: tuple[EntityType, ...] = get_args(EntityType)
Role = Literal["proposed", "used"]
ROLES: tuple[Role, ...] = get_args(Role)
# Which text of a paper a mention's offsets index: its abstract, or its title (`kg.ingest.titles.read_title`).
Where = Literal["abstract", "title"]
WHERE: tuple[Where, ...] = get_args(Where)
# A result claim states a level reached ("28.4 BLEU") or a gain over something ("+2.3 points").
ClaimKind = Literal["absolute", "improvement"]
CLAIM_KINDS: tuple[ClaimKind, ...] = get_args(ClaimKind)
# Which extraction step found a mention (`LocalMention.source`; kg.extract.components.entities).
MENTION_SOURCES: tuple[str, ...] = ("vocab", "acronym", "coinage", "model", "noun_chunk")
# `LocalMention.confidence` of a mention whose type is a guess (a coined name, or a capitalised long
# form, taken for a method for want of evidence): no evidence for the type. In its concept's type
# vote the guesses count once (`kg.concepts.resolve.Ballot`), so a mention that its context types
# ("X benchmark") outweighs them.
GUESSED_CONFIDENCE = 0.0
# The recognizer a pipeline uses unless told otherwise: the one shipped inside kg.
DEFAULT_RECOGNIZER = "<shipped>"
# How a stage reports progress: (stage description, items done, items total or None).
Progress = Callable[[str, int, "int | None"], None]


@overload
def parse_types(values: None) -> None: ...
@overload
def parse_types(values: str | Iterable[str]) -> tuple[str, ...]: ...
def parse_types(values: str | Iterable[str] | None) -> tuple[str, ...] | None:
    """Concept types as users write them: "method, task" or ["METHOD", "task"] → ("METHOD", "TASK").

    Commas separate, case and spaces do not matter, repeats are dropped; None stays None
    (no filter). The one parser behind every ``--types``; ValueError names an unknown type.
    """
    if values is None:
        return None
    if isinstance(values, str):
        values = (values,)
    names = [part.strip().upper() for value in values for part in value.split(",") if part.strip()]
    unknown = [name for name in names if name not in ENTITY_TYPES]
    if unknown:
        raise ValueError(f"unknown concept type {unknown[0]!r}; choose from {', '.join(ENTITY_TYPES)}")
    return tuple(dict.fromkeys(names))


def _tuples(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    """Keep only known fields; lists from JSON become tuples so records stay hashable."""
    names = {f.name for f in fields(cls)}
    return {k: tuple(v) if isinstance(v, list) else v for k, v in data.items() if k in names}


@dataclass(frozen=True, slots=True)
class Paper:
    """One paper as read from the corpus, after identity and de-duplication."""

    id: str
    title: str
    abstract: str
    authors: tuple[str, ...] = ()
    year: int | None = None
    venue: str | None = None
    url: str | None = None
    doi: str | None = None
    arxiv_id: str | None = None
    keywords: tuple[str, ...] = ()
    title_derived: bool = False  # True when the corpus gave no title and kg made one up
    source: str = ""  # "file:line" (or "file:record N") where the record was read
    duplicate_sources: tuple[str, ...] = ()  # other records with the same abstract, merged here
    alt_ids: tuple[str, ...] = ()  # ids those merged records had (or a given id made unique), for look-up

    def to_dict(self) -> dict[str, Any]:
        # Every field is a str, int, bool, None or a tuple of str: a shallow copy is what
        # dataclasses.asdict would return, without its recursive deep copy (a fifth of writing papers.jsonl).
        return {name: getattr(self, name) for name in _PAPER_FIELDS}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Paper:
        return cls(**_tuples(cls, data))


_PAPER_FIELDS = tuple(f.name for f in fields(Paper))


@dataclass(frozen=True, slots=True)
class Mention:
    """One entity mention in a paper's abstract or title. Invariant: ``abstract[start:end] == text``
    (``title[start:end]`` for a mention in the title)."""

    start: int
    end: int
    text: str
    label: EntityType
    concept: str  # id of the Concept this mention resolves to
    role: Role
    source: str  # the component that found it ("vocab", "acronym", "pattern", "noun_chunk", ...)
    score: float  # confidence in [0, 1]
    sent_start: int  # character span of the sentence holding the mention
    sent_end: int
    where: Where = "abstract"  # the text its offsets index

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Mention:
        return cls(**_tuples(cls, data))


def in_text_order(mention: Mention) -> tuple[bool, int, int]:
    """A paper's mentions as a reader meets them: the title's first, then the abstract's, by offset."""
    return mention.where != "title", mention.start, mention.end


@dataclass(frozen=True, slots=True)
class PaperEntities:
    """Everything extraction found in one paper."""

    paper_id: str
    mentions: tuple[Mention, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"paper_id": self.paper_id, "mentions": [m.to_dict() for m in self.mentions]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PaperEntities:
        return cls(data["paper_id"], tuple(Mention.from_dict(m) for m in data.get("mentions", ())))


@dataclass(frozen=True, slots=True)
class Concept:
    """A corpus-wide concept: surface variants merged under one preferred label."""

    id: str  # stable, e.g. "method/retrieval-augmented-generation"
    type: EntityType
    pref_label: str
    alt_labels: tuple[str, ...] = ()
    broader: tuple[str, ...] = ()  # ids of broader concepts (skos:broader)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Concept:
        return cls(**_tuples(cls, data))


@dataclass(frozen=True, slots=True)
class Corpus:
    """The result of ingestion: unique papers plus what was merged or skipped on the way."""

    papers: tuple[Paper, ...]
    duplicates: int = 0  # records merged into an earlier paper with the same abstract
    skipped: tuple[str, ...] = field(default=())  # "file:line: reason" for each record skipped


# -- stage records: what extraction hands to resolution, and resolution to the graph --------


@dataclass(frozen=True, slots=True)
class LocalMention:
    """A mention as one paper alone sees it; `key` is its normalised surface form."""

    start: int
    end: int
    text: str
    label: EntityType
    key: str  # normalize_key of the surface (acronyms: of their long form)
    vocab: str | None  # curated concept id, when the vocabulary knows it
    role: Role
    source: str
    score: float
    sent_start: int
    sent_end: int
    # The finding source's own confidence in the mention's type, in [0, 1]: 1.0 where the source
    # gives none, GUESSED_CONFIDENCE where the type is a guess. It weighs the mention's say in its
    # concept's type (`kg.concepts.resolve.Ballot`); the score is the chance a reader accepts it.
    confidence: float = 1.0
    where: Where = "abstract"  # the text its offsets index: the paper's abstract or its title
    # The transformer recognizer's mean probability of `label` over the mention's tokens, whatever
    # source found it (a feature of kg.extract.scoring); None when no transformer recognizer ran.
    model_confidence: float | None = None


@dataclass(frozen=True, slots=True)
class Definition:
    """An acronym this paper defines: short ↔ long form, with their type."""

    short: str
    long: str
    label: EntityType


Span = tuple[int, int]  # character offsets into the abstract, end exclusive


@dataclass(frozen=True, slots=True)
class LocalClaim:
    """A result claim as one paper alone sees it (kg.results.find): a value and the spans of what
    it links, each the span of a mention (or of a metric name) in its sentence or the one before, None if none."""

    start: int  # the value's digits ("28.4"; a range "3-5" whole), without sign or unit
    end: int
    value: str
    unit: str | None  # "%", "points", "dB", "x", or None
    kind: ClaimKind
    metric: Span | None
    dataset: Span | None
    task: Span | None
    method: Span | None  # None: the paper's own method (proposed) or an unnamed baseline
    proposed: bool  # credited to the paper's own method
    baseline: Span | None  # the method it is compared against
    score: float
    sent_start: int
    sent_end: int

    def to_dict(self) -> dict[str, Any]:
        # spans as JSON gives them back (lists), so a cached claim equals a fresh one's dict
        return {name: list(value) if isinstance(value, tuple) else value for name, value in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LocalClaim:
        return cls(**_tuples(cls, data))


@dataclass(frozen=True, slots=True)
class PaperExtraction:
    """Everything extraction found in one paper, before corpus-wide resolution."""

    paper_id: str
    mentions: tuple[LocalMention, ...] = ()
    definitions: tuple[Definition, ...] = ()
    claims: tuple[LocalClaim, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "paper_id": self.paper_id,
            "mentions": [asdict(m) for m in self.mentions],
            "definitions": [asdict(d) for d in self.definitions],
            "claims": [c.to_dict() for c in self.claims],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PaperExtraction:
        return cls(
            data["paper_id"],
            tuple(LocalMention(**m) for m in data.get("mentions", ())),
            tuple(Definition(**d) for d in data.get("definitions", ())),
            tuple(LocalClaim.from_dict(c) for c in data.get("claims", ())),
        )


@dataclass(frozen=True)
class Resolution:
    """Corpus-wide concepts and every paper's mentions resolved to them (parallel to the papers)."""

    entities: tuple[PaperEntities, ...]
    concepts: tuple[Concept, ...]


@dataclass(frozen=True, slots=True)
class Result:
    """A result claim of one paper, its links resolved to the corpus's concepts (kg.results.link).

    Each link keeps the words the abstract uses and, where a mention of the right type stands
    there, its concept's id; ``method`` is "(proposed)" or "(baseline)" when the text names no method."""

    paper_id: str
    start: int  # the value in the abstract; its sentence is [sent_start, sent_end)
    end: int
    value: str
    number: float  # the value as a number (a range: its first end)
    unit: str | None
    kind: ClaimKind
    metric: str | None
    metric_concept: str | None
    dataset: str | None
    dataset_concept: str | None
    task: str | None
    task_concept: str | None
    method: str
    method_concept: str | None
    proposed: bool
    baseline: str | None
    baseline_concept: str | None
    score: float
    sent_start: int
    sent_end: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Result:
        return cls(**_tuples(cls, data))
