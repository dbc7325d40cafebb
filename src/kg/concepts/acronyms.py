"""Acronyms across a corpus: which expansion an undefined acronym may borrow, and acronyms
spelled out inside names so that variants merge (no spaCy; used by `kg.concepts.resolve`).

* **Scoped borrowing.** A paper that defines an acronym keeps its own meaning. A paper that
  uses one without defining it borrows the corpus's expansion only when the corpus gives that
  acronym one expansion: "LDS" defined as linear dynamical system in one paper and as
  low-density separator in another is borrowed by neither reading. Spelling variants of one
  long form ("graph convolutional network" / "graph convolution network") count as one
  expansion: their words agree on their first `STEM` letters.
* **Expanded names.** Inside a multi-word name, an acronym is replaced by its long form (the
  paper's own definition, else the curated vocabulary, else the corpus's single expansion),
  so "Wasserstein GAN" and "Wasserstein Generative Adversarial Networks" get one key (a
  hyphenated coinage such as KAN-AD is one word and stays as it is).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping

from kg.model import EntityType, PaperExtraction
from kg.text.vocab import VocabEntry, Vocabulary, is_acronym, normalize_key

STEM = 5  # letters of each word that must agree for two long forms to be spellings of one
WORD_RUN = re.compile(r"\S+")  # words of a multi-word name; hyphenated coinages (KAN-AD) stay whole


def _stems(key: str) -> tuple[str, ...]:
    return tuple(word[:STEM] for word in key.split(" "))


class AcronymTable:
    """The corpus's acronym definitions, checked for ambiguity, plus the curated ones."""

    def __init__(self, extractions: Iterable[PaperExtraction], vocabulary: Vocabulary) -> None:
        # Curated acronyms that stand for a spelled-out label: GAN → generative adversarial network.
        self._curated = {surface: normalize_key(entry.label) for surface, entry in vocabulary.by_surface.items() if not is_acronym(entry.label)}
        self._borrowable: dict[str, tuple[str, EntityType]] = {}  # filled below; long forms expand with curated ones only
        self._spelling: dict[str, str] = {}  # a long form's key → the key of its most used spelling
        votes: dict[str, Counter[tuple[str, EntityType]]] = defaultdict(Counter)
        for extraction in extractions:
            for definition in extraction.definitions:
                votes[normalize_key(definition.short)][(self.expand(definition.long), definition.label)] += 1
        for short, counter in sorted(votes.items()):
            by_stems: dict[tuple[str, ...], Counter[tuple[str, EntityType]]] = defaultdict(Counter)
            for (long, label), count in counter.items():
                by_stems[_stems(long)][long, label] += count
            for spellings in by_stems.values():
                best_long = max(spellings.items(), key=lambda kv: (kv[1], kv[0]))[0][0]
                for long, _ in spellings:
                    if long != best_long:
                        self._spelling.setdefault(long, best_long)
            if len(by_stems) == 1:  # one expansion in the whole corpus: safe to borrow
                (spellings,) = by_stems.values()
                long, _ = max(spellings.items(), key=lambda kv: (kv[1], kv[0]))[0]
                labels: Counter[EntityType] = Counter()
                for (_, label), count in spellings.items():
                    labels[label] += count
                self._borrowable[short] = (long, max(labels.items(), key=lambda kv: (kv[1], kv[0]))[0])
        self._expanded_curated = _expanded_entries(vocabulary, self)

    def borrowed(self, short_key: str) -> tuple[str, EntityType] | None:
        """(long-form key, type) an undefined acronym takes, if the corpus gives it one expansion."""
        return self._borrowable.get(short_key)

    def spelling(self, key: str) -> str:
        """The key of the usual spelling of the long form `key` (itself when it has no variant)."""
        return self._spelling.get(key, key)

    def expand(self, text: str, own: Mapping[str, str] | None = None) -> str:
        """The key of `text` with the acronyms inside a multi-word name spelled out.

        `own` maps this paper's acronyms (keys) to its long-form keys; they win over the
        vocabulary and the corpus.
        """
        words = WORD_RUN.findall(text)
        if len(words) < 2:
            return normalize_key(text)
        spelled, changed = [], False
        for word in words:
            # Only a bare acronym: "(DP)" after its long form restates it, it is not a word of the name.
            long = self._long_form(word, own or {}) if is_acronym(word) and word[:1].isalnum() and word[-1:].isalnum() else None
            spelled.append(long or word)
            changed = changed or long is not None
        return normalize_key(" ".join(spelled)) if changed else normalize_key(text)

    def curated(self, label: EntityType | None, key: str) -> VocabEntry | None:
        """A curated entry whose label or alias, acronyms spelled out, has this key."""
        if label is not None:
            return self._expanded_curated.get((label, key))
        return next((entry for (_, k), entry in sorted(self._expanded_curated.items()) if k == key), None)

    def _long_form(self, word: str, own: Mapping[str, str]) -> str | None:
        key = normalize_key(word)
        core = word[:-1] if word.endswith("s") and len(word) > 2 else word
        if key in own:
            return own[key]
        if word in self._curated or core in self._curated:
            return self._curated.get(word) or self._curated[core]
        borrowed = self._borrowable.get(key)
        return borrowed[0] if borrowed else None


def _expanded_entries(vocabulary: Vocabulary, table: AcronymTable) -> dict[tuple[str, str], VocabEntry]:
    """(type, expanded key) of every curated label and alias that has an acronym inside."""
    found: dict[tuple[str, str], VocabEntry] = {}
    for entry in vocabulary.entries:
        for name in (entry.label, *entry.aliases):
            words = WORD_RUN.findall(name)
            if len(words) > 1 and any(is_acronym(word) for word in words):
                found.setdefault((entry.type, table.expand(name)), entry)
    return found
