"""Why a paper is related, in words: which shared concepts are generic, and which shared words
and phrases carried the lexical score (`kg.related_work.rank` shows them as reasons)."""

from __future__ import annotations

import math
from collections.abc import Iterable

from kg.related_work import lexical
from kg.related_work.index import WEIGHT_SCALE, RelatedIndex, find_string, is_broader
from kg.text.vocab import normalize_key
from kg.text.words import GENERIC_WORDS

PHRASE_STRENGTH = math.log(4)  # a pair shown as a phrase occurs at least 4 times as often as chance has it
GENERIC_SHARE = 0.02
GENERIC_MIN_PAPERS = 200
# Words too vague to explain a relation: the generic words of propagation, and a few words of
# the field's name that qualify nearly every paper's concepts.
VAGUE_WORDS = GENERIC_WORDS | frozenset("neural deep machine artificial intelligence rule".split())


def shared_words(index: RelatedIndex, candidate: int, words: Iterable[int], *, limit: int = 4) -> list[str]:
    """The query's terms that carried most of `candidate`'s lexical score, strongest first:
    pairs of words first, since "policy gradient" says more than "policy" and "gradient"
    (overlapping pairs joined: "retrieval augmented generation"), and a word already inside
    a chosen pair left out. Common words are left out too, unless they are all it shares."""
    wanted = set(words)
    weighted = [(weight / WEIGHT_SCALE, index.terms[number], number) for number, weight in index.paper_terms.row(candidate) if number in wanted]
    telling_ones = [item for item in weighted if (phrase(index, item[1], item[2]) if lexical.is_pair(item[1]) else telling(index, item[1], item[2]))]
    # Only common words in common: say which (the strongest words), rather than seem to share none.
    weighted = telling_ones or [item for item in weighted if not lexical.is_pair(item[1])]
    weighted.sort(key=lambda item: (not lexical.is_pair(item[1]), -item[0], item[1]))
    chosen: list[tuple[str, float]] = []
    covered: set[str] = set()
    for weight, text, _ in weighted:
        if len(chosen) == limit:
            break
        if lexical.is_pair(text):
            if weight < 0.5 * weighted[0][0]:  # a weak pair is no phrase worth showing
                continue
            covered.update(text.split(" "))
        elif text in covered:
            continue
        chosen.append((text, weight))
    chosen.sort(key=lambda item: -item[1])
    return lexical.joined([text for text, _ in chosen])


def papers_with(index: RelatedIndex, number: int) -> int:
    return index.term_papers.count(number)


def term_number(index: RelatedIndex, word: str) -> int | None:
    """`find_string` in the vocabulary, remembered per index: the page asks for the same words often."""
    cache: dict[str, int | None] = index.__dict__.setdefault("_term_numbers", {})
    if word not in cache:
        cache[word] = find_string(index.terms, word)
    return cache[word]


def telling(index: RelatedIndex, word: str, number: int) -> bool:
    """Whether one word (term `number`) says something as a reason: three letters or more, and in
    a corpus of `GENERIC_MIN_PAPERS` or more, on at most `GENERIC_SHARE` of the papers ("deploy",
    "difficult" are on many and explain nothing)."""
    if len(word) < 3:
        return False
    papers = len(index.paper_ids)
    return papers < GENERIC_MIN_PAPERS or papers_with(index, number) <= GENERIC_SHARE * papers


def phrase(index: RelatedIndex, pair: str, number: int) -> bool:
    """Whether a pair of words (term `number`) reads as a phrase worth showing as a reason
    (`lexical.phrase_strength`), and, in a corpus of `GENERIC_MIN_PAPERS` or more, is on at most
    `GENERIC_SHARE` of the papers."""
    first, second = (term_number(index, word) for word in pair.split(" "))
    if first is None or second is None:
        return False
    papers, pair_df = len(index.paper_ids), papers_with(index, number)
    if papers >= GENERIC_MIN_PAPERS and pair_df > GENERIC_SHARE * papers:
        return False  # a collocation on many papers ("wide range") explains nothing
    return lexical.phrase_strength(papers, pair_df, papers_with(index, first), papers_with(index, second)) >= PHRASE_STRENGTH


def is_generic_concept(index: RelatedIndex, concept: int) -> bool:
    """A concept too common or too vague to explain a relation ("neural network", "learning
    rule"): in a corpus of `GENERIC_MIN_PAPERS` or more, on more than `GENERIC_SHARE` of the
    papers; or, written in lower case (not a name), every word of its label vague
    (`VAGUE_WORDS`)."""
    papers = len(index.paper_ids)
    df = index.concept_papers.count(concept)
    if papers >= GENERIC_MIN_PAPERS and df > GENERIC_SHARE * papers:
        return True
    label = index.concept_labels[concept]
    if any(ch.isupper() for ch in label):
        return False  # a name ("Natural Questions", "Neural Processes"), whatever its words
    return all(word in VAGUE_WORDS for word in normalize_key(label).split())


def near_concepts(index: RelatedIndex, query_concepts: Iterable[int], candidate: int, *, limit: int = 2) -> list[tuple[int, int, str]]:
    """Concepts of the query and of `candidate` that are not the same but whose labels share a
    telling word ("graph attention network" ≈ "graph convolutional network" share "graph"
    only if "graph" is on few papers; "monocular depth estimation" ≈ "depth completion"): as
    (query concept, candidate concept, the word), rarest word first, each concept once. A head
    word both labels end with does not count: it names the kind of thing, not which."""
    theirs = [concept for concept, code in index.paper_concepts.row(candidate) if not is_broader(code)]
    mine = [c for c in query_concepts]
    exact = set(mine) & set(theirs)
    label_words = {c: lexical.words(index.concept_labels[c]) for c in {*mine, *theirs} - exact}
    words_of = {c: set(words) - VAGUE_WORDS for c, words in label_words.items()}
    head = {c: words[-1] if words else "" for c, words in label_words.items()}
    found = []
    for q in mine:
        if q in exact:
            continue
        for c in theirs:
            if c in exact:
                continue
            for word in words_of[q] & words_of[c]:
                if word == head[q] == head[c]:
                    continue  # the head alone: "code generation" is no kind of "retrieval-augmented generation"
                number = term_number(index, word)
                if number is not None and telling(index, word, number):
                    found.append((papers_with(index, number), word, q, c))
    found.sort()
    chosen: list[tuple[int, int, str]] = []
    used: set[int] = set()
    for _, word, q, c in found:
        if q in used or c in used:
            continue
        used.update((q, c))
        chosen.append((q, c, word))
        if len(chosen) == limit:
            break
    return chosen
