"""Curated vocabularies (``schemas/vocab/*.tsv``) and the normalisation of surface forms.

A vocabulary file holds one concept a line, tab-separated::

    preferred label <TAB> alias | alias | … <TAB> broader label | …

``#`` starts a comment. Broader labels name concepts of the same file (same type).
The file name gives the type: methods → METHOD, datasets → DATASET, hardware → HARDWARE,
metrics → METRIC, tasks → TASK. Files are read with `importlib.resources`, never from the
working directory.

`normalize_key` is the one place where surface variants (case, plural, hyphen/space) are
folded: extraction stores it on every mention and `resolve` merges on it.
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from dataclasses import dataclass, field
from importlib import resources

from kg.model import ENTITY_TYPES, EntityType

VOCAB_FILES: dict[str, EntityType] = {
    "methods.tsv": "METHOD",
    "datasets.tsv": "DATASET",
    "hardware.tsv": "HARDWARE",
    "metrics.tsv": "METRIC",
    "tasks.tsv": "TASK",
}

SENSES_FILE = "senses.tsv"  # surfaces whose concept depends on the words around them

# Words that end in "s" but are not plurals (or whose singular is the same word).
_NOT_PLURAL = {
    "analysis", "basis", "bias", "class", "gaussians", "lens", "loss", "mass", "process", "series",
    "species", "synthesis", "thesis", "diagnosis", "hypothesis", "axis", "chaos", "corpus", "calculus",
    "consensus", "status", "focus", "virus", "radius", "stimulus", "bus", "gas", "plus", "news", "lasso",
    "canvas", "atlas", "texas", "genesis", "kinesis", "prognosis", "emphasis", "paralysis", "is", "us",
    "this", "its", "has", "was", "does", "less", "mos", "sts", "glass", "access", "express", "cross",
    "success", "progress", "address", "boss", "chess", "dress", "stress", "pass", "miss", "kiss",
}
_ICS = re.compile(r"ics$")  # physics, statistics, dynamics, robotics: not plurals
_DASHES = re.compile(r"[\u2010\u2011\u2012\u2013\u2014\u2212_\-]+")
_SPACES = re.compile(r"\s+")
_EDGE_PUNCT = " \t\n.,;:!?\"'`()[]{}<>"


def singularize(word: str) -> str:
    """Fold the plural of one lower-case word: networks → network, LLMs → llm, queries → query."""
    if len(word) <= 3 or not word.endswith("s") or word in _NOT_PLURAL or _ICS.search(word):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]  # classes, boxes, patches
    if word.endswith("zzes"):
        return word[:-3]  # quizzes
    if word.endswith("zes"):
        return word[:-1]  # sizes, stepsizes: the singular keeps its "e"
    if word.endswith(("ss", "us", "is", "os")) and not word[:-1].isupper():
        return word
    if word.endswith("corpora"):
        return word[:-6] + "corpus"
    return word[:-1]


@functools.lru_cache(maxsize=1 << 18)  # many mentions share a surface form
def normalize_key(text: str) -> str:
    """The merge key of a surface form: lower case, hyphens as spaces, last word singular.

    "Large Language Models" → "large language model"; "LLMs" → "llm";
    "retrieval-augmented generation" → "retrieval augmented generation".
    """
    text = unicodedata.normalize("NFKC", text)
    text = text.replace("’", "'").replace("'s ", " ")
    text = _DASHES.sub(" ", text)
    text = _SPACES.sub(" ", text).strip(_EDGE_PUNCT).lower()
    if not text:
        return ""
    words = text.split(" ")
    if words[-1] == "corpora":
        words[-1] = "corpus"
    elif words[-1] == "data":
        pass
    else:
        words[-1] = singularize(words[-1])
    return " ".join(words)


def slugify(key: str) -> str:
    """A URL- and IRI-safe slug of a normalised key: "large language model" → "large-language-model"."""
    slug = re.sub(r"[^a-z0-9]+", "-", unicodedata.normalize("NFKD", key).encode("ascii", "ignore").decode().lower())
    slug = slug.strip("-")
    if not slug:  # a key with no ASCII letters at all: keep it stable and unique
        slug = "x" + hashlib.sha1(key.encode("utf-8")).hexdigest()[:10]
    return slug


def concept_id(label: EntityType, key: str) -> str:
    """The stable concept id of a key under a type, e.g. ``method/large-language-model``."""
    return f"{label.lower()}/{slugify(key)}"


def concept_type(cid: str) -> EntityType:
    """The type a concept id was made under (see `concept_id`): ``method/…`` → ``METHOD``."""
    prefix = cid.split("/", 1)[0].upper()
    for type_ in ENTITY_TYPES:
        if type_ == prefix:
            return type_
    raise ValueError(f"not a concept id: {cid!r}")


@dataclass(frozen=True, slots=True)
class VocabEntry:
    """One curated concept."""

    id: str
    type: EntityType
    label: str
    aliases: tuple[str, ...]
    broader: tuple[str, ...]  # concept ids

    @property
    def named(self) -> bool:
        """A proper name (BERT, ImageNet) rather than a generic term (transformer, accuracy)."""
        return any(ch.isupper() for ch in self.label)


@dataclass(frozen=True, slots=True)
class Sense:
    """One sense of an ambiguous surface: the curated concept it names where a cue word is present."""

    concept: str  # concept id
    cues: frozenset[str]  # lower-case words or phrases


@dataclass(frozen=True)
class Vocabulary:
    entries: tuple[VocabEntry, ...]
    by_key: dict[tuple[str, str], VocabEntry]  # (type, normalised alias) → entry
    by_surface: dict[str, VocabEntry]  # exact-case alias of acronyms → entry
    by_id: dict[str, VocabEntry]
    digest: str  # hash of the files, part of the pipeline version
    senses: dict[str, tuple[Sense, ...]] = field(default_factory=dict)  # ambiguous surface → its senses, in order

    def sense(self, surface: str, text: str) -> VocabEntry | None:
        """The curated concept an ambiguous `surface` names in `text` (an abstract): the first sense
        one of whose cues appears there as whole words, any case; None when none does."""
        senses = self.senses.get(surface) or self.senses.get(surface.lower()) or ()
        if not senses:
            return None
        words = _words_of(text)
        for sense in senses:
            if any(cue in words if " " not in cue else re.search(rf"(?<!\w){re.escape(cue)}(?!\w)", text.lower()) for cue in sense.cues):
                return self.by_id.get(sense.concept)
        return None

    def lookup(self, text: str, label: str | None = None) -> VocabEntry | None:
        """The entry a surface form names (exact case for acronyms), optionally of one type."""
        entry = self.by_surface.get(text) or self.by_surface.get(text[:-1] if text.endswith("s") else text)
        if entry is not None and (label is None or entry.type == label):
            return entry
        key = normalize_key(text)
        if label is not None:
            return self.by_key.get((label, key))
        for type_ in VOCAB_FILES.values():
            found = self.by_key.get((type_, key))
            if found is not None:
                return found
        return None

    def get(self, concept: str) -> VocabEntry | None:
        return self.by_id.get(concept)


@functools.lru_cache(maxsize=1 << 18)
def is_acronym(text: str) -> bool:
    """Short and without lower-case letters (LLM, GPU, F1, BLEU): matched with exact case."""
    core = text[:-1] if text.endswith("s") else text
    return len(core) <= 10 and any(ch.isupper() for ch in core) and not any(ch.islower() for ch in core)


def _split(field: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in field.split("|") if part.strip())


@functools.lru_cache(maxsize=4096)
def _words_of(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"[\w-]+", text.lower()))


def parse_senses(text: str, entries: dict[str, VocabEntry]) -> dict[str, tuple[Sense, ...]]:
    """Ambiguous surfaces (senses.tsv): surface → its senses, each naming an entry by its label."""
    by_label = {entry.label: entry for entry in entries.values()}
    senses: dict[str, list[Sense]] = {}
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        surface, label, cues = (part.strip() for part in line.split("\t")[:3])
        if label not in by_label:
            raise ValueError(f"senses.tsv: {label!r} is no concept of the vocabulary")
        senses.setdefault(surface, []).append(Sense(by_label[label].id, frozenset(c.lower() for c in _split(cues))))
    return {surface: tuple(found) for surface, found in senses.items()}


def parse_vocab(text: str, label: EntityType) -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    """Rows (label, aliases, broader labels) of one vocabulary file."""
    rows = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = line.split("\t")
        rows.append((fields[0].strip(), _split(fields[1]) if len(fields) > 1 else (), _split(fields[2]) if len(fields) > 2 else ()))
    return rows


@functools.lru_cache(maxsize=1)
def load_vocabulary() -> Vocabulary:
    """Read every vocabulary file shipped in ``kg.schemas/vocab`` (cached)."""
    folder = resources.files("kg.schemas") / "vocab"
    digest = hashlib.sha256()
    entries: list[VocabEntry] = []
    for filename, label in VOCAB_FILES.items():
        resource = folder / filename
        if not resource.is_file():
            continue
        text = resource.read_text(encoding="utf-8")
        digest.update(filename.encode() + b"\0" + text.encode("utf-8"))
        rows = parse_vocab(text, label)
        ids = {normalize_key(name): concept_id(label, normalize_key(name)) for name, _, _ in rows}
        for name, aliases, broader in rows:
            broader_ids = tuple(ids.get(normalize_key(b), concept_id(label, normalize_key(b))) for b in broader)
            entries.append(VocabEntry(ids[normalize_key(name)], label, name, aliases, broader_ids))
    # Broader concepts named but not listed as rows of their own become entries too.
    known = {entry.id for entry in entries}
    for entry in list(entries):
        for broader_id in entry.broader:
            if broader_id not in known:
                known.add(broader_id)
                words = broader_id.split("/", 1)[1].replace("-", " ")
                entries.append(VocabEntry(broader_id, entry.type, words, (), ()))
    by_key: dict[tuple[str, str], VocabEntry] = {}
    by_surface: dict[str, VocabEntry] = {}
    for entry in entries:
        for surface in (entry.label, *entry.aliases):
            if is_acronym(surface):
                by_surface.setdefault(surface, entry)
            else:
                by_key.setdefault((entry.type, normalize_key(surface)), entry)
    by_id = {entry.id: entry for entry in entries}
    senses_file = folder / SENSES_FILE
    senses = {}
    if senses_file.is_file():
        text = senses_file.read_text(encoding="utf-8")
        digest.update(SENSES_FILE.encode() + b"\0" + text.encode("utf-8"))
        senses = parse_senses(text, by_id)
    return Vocabulary(tuple(entries), by_key, by_surface, by_id, digest.hexdigest(), senses)
