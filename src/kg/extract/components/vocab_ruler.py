"""`kg_vocab_ruler`: finds the curated vocabulary (``schemas/vocab``) in a doc.

Two PhraseMatchers: phrases match case-insensitively (LOWER), acronyms and capitalised
names with exact case (ORTH) so "IS" (Inception Score) never matches the verb "is".
Plural and hyphen/space variants are added as patterns. A surface with several senses
(``senses.tsv``: "EM" the algorithm or exact match) names the sense whose cue words the
abstract holds, or nothing. Results go to ``doc.spans["kg_vocab"]``: label = type,
``kb_id_`` = the vocabulary concept id.
"""

from __future__ import annotations

from spacy.language import Language
from spacy.matcher import PhraseMatcher
from spacy.tokens import Doc, Span
from spacy.util import filter_spans

from kg.text.vocab import VocabEntry, Vocabulary, is_acronym, load_vocabulary

SPAN_KEY = "kg_vocab"
SENSE_PREFIX = "sense:"  # match ids of ambiguous surfaces


def _plural(surface: str) -> str:
    if is_acronym(surface) or surface[-1:].isdigit():
        return surface + "s"
    if surface.endswith("y") and len(surface) > 3 and surface[-2] not in "aeiou":
        return surface[:-1] + "ies"
    if surface.endswith(("s", "x", "ch", "sh")):
        return surface + "es"
    return surface + "s"


def surface_variants(surface: str) -> set[str]:
    """The forms a vocabulary alias may take in text: plural, hyphen ↔ space."""
    forms = {surface}
    if "-" in surface and not is_acronym(surface):
        forms.add(surface.replace("-", " "))
    if " " not in surface and "-" not in surface and surface.islower():
        return forms  # "optimizations", "recommendations": plurals of one generic word change sense
    if surface[-1:].isalpha() or is_acronym(surface):
        forms |= {_plural(form) for form in list(forms)}
    return forms


class VocabRuler:
    def __init__(self, nlp: Language, name: str, vocabulary: Vocabulary | None = None) -> None:
        self.name = name
        self.vocabulary = vocabulary or load_vocabulary()
        self.exact = PhraseMatcher(nlp.vocab, attr="ORTH")
        self.folded = PhraseMatcher(nlp.vocab, attr="LOWER")
        self.entries: dict[str, VocabEntry] = {}
        exact: dict[str, set[str]] = {}
        folded: dict[str, set[str]] = {}
        for entry in self.vocabulary.entries:
            self.entries[entry.id] = entry
            aliases = [entry.label, *entry.aliases]
            if entry.type == "HARDWARE" and not entry.label.lower().endswith(("gpu", "tpu", "device", "chip")):
                # "NVIDIA A100 GPU", "Blackwell GPUs" name the same hardware as "NVIDIA A100".
                aliases += [f"{alias} GPU" for alias in aliases if any(ch.isupper() for ch in alias)]
            for alias in aliases:
                # Capitalised names and acronyms keep their case; lower-case terms match any case.
                target = exact if any(ch.isupper() for ch in alias) else folded
                target.setdefault(entry.id, set()).update(surface_variants(alias))
                if target is exact and not is_acronym(alias) and len(alias) >= 6:
                    # CamelCase names (ImageNet, PageRank) are also written in lower case.
                    folded.setdefault(entry.id, set()).update(surface_variants(alias.lower()))
        for surface in self.vocabulary.senses:
            target = exact if any(ch.isupper() for ch in surface) else folded
            target.setdefault(SENSE_PREFIX + surface, set()).add(surface)
        for matcher, table in ((self.exact, exact), (self.folded, folded)):
            for concept, forms in sorted(table.items()):
                matcher.add(concept, [nlp.tokenizer(form) for form in sorted(forms)])

    def __call__(self, doc: Doc) -> Doc:
        spans = []
        for matcher in (self.exact, self.folded):
            for match_id, start, end in matcher(doc):
                concept = doc.vocab.strings[match_id]
                if concept.startswith(SENSE_PREFIX):
                    entry = self.vocabulary.sense(concept[len(SENSE_PREFIX) :], doc.text)
                    if entry is None:
                        continue  # no cue for any sense here: the vocabulary does not say what it names
                else:
                    entry = self.entries[concept]
                spans.append(Span(doc, start, end, label=entry.type, kb_id=entry.id))
        doc.spans[SPAN_KEY] = filter_spans(spans)
        return doc


@Language.factory("kg_vocab_ruler", default_config={})
def make_vocab_ruler(nlp: Language, name: str) -> VocabRuler:
    return VocabRuler(nlp, name)
