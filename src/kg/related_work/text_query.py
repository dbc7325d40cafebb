"""A text that is not in the corpus as a related-work query (`kg related --text`): its words,
found in the index's vocabulary, and the concepts its words name, found by the keys of the
corpus's concept labels."""

from __future__ import annotations

from collections.abc import Iterable

from kg.related_work import lexical
from kg.related_work.index import RelatedIndex, bisect_strings, find_string, idf_weight, posting_code, term
from kg.text.vocab import normalize_key

MAX_KEY_WORDS = 6

def text_words(index: RelatedIndex, text: str) -> list[int]:
    """The terms of a text (not one of the papers) that some paper has: found by bisection
    in the sorted vocabulary, so no look-up table of every term is built per query."""
    found = set()
    for term_ in lexical.terms(text):
        number = find_string(index.terms, term_)
        if number is not None:
            found.add(number)
    return sorted(found)


def text_concepts(index: RelatedIndex, text: str) -> dict[int, int]:
    """Concepts a text names (`kg related --text`), by their labels' keys: every run of up to
    `MAX_KEY_WORDS` words, longest first, not overlapping; concept → how many times."""
    words = lexical.KEY_WORD.findall(text)
    found: dict[int, int] = {}
    i = 0
    while i < len(words):
        for size in range(min(MAX_KEY_WORDS, len(words) - i), 0, -1):
            phrase = " ".join(words[i : i + size])
            numbers = key_concepts(index, normalize_key(phrase)) or key_concepts(index, phrase)
            if numbers:
                for number in numbers:
                    found[number] = found.get(number, 0) + 1
                i += size
                break
        else:
            i += 1
    return found


def key_concepts(index: RelatedIndex, key: str) -> list[int]:
    keys = index.concept_keys
    low, high = bisect_strings(keys, key), len(keys)
    numbers = []
    while low < high and keys[low] == key:
        numbers.append(index.key_concepts[low])
        low += 1
    return numbers


def text_terms(index: RelatedIndex, found: dict[int, int], types: Iterable[str] | None = None) -> dict[int, tuple[float, int, float]]:
    """`query_terms` for concepts found in a text: each used, with its number of mentions."""
    allowed = None if types is None else set(types)
    total, power = len(index.paper_ids), index.scoring["idf_power"]
    terms_ = {}
    for concept, mentions in found.items():
        df = index.concept_papers.count(concept)
        if not df or (allowed is not None and index.concept_types[concept] not in allowed):
            continue
        code = posting_code("used", mentions)
        idf = idf_weight(total, df, power)
        terms_[concept] = (term(code, idf, index.scoring), code, idf)
    return terms_
