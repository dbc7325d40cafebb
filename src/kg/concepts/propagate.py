"""Lexicon propagation: find every concept again wherever the corpus names it (no spaCy, fast).

Extraction is per paper and misses things: it finds "graph neural network" in one abstract
and not in another that says the same words. After `kg.concepts.resolve.resolve`, every concept's
preferred and alternative labels form a corpus-wide lexicon; this stage looks each abstract
(and each title extraction reads) up in it and adds a `Mention` (role "used", source "lexicon") for every further occurrence,
scored as its concept's extracted mentions are on average (or `LEXICON_SCORE` without scores). That gives the graph the links extraction missed, so papers that
name the same concept share it.

Matching follows `kg.text.vocab.normalize_key`: case-insensitive, hyphen = space, the last word's
plural folded ("Graph Neural Networks" finds "graph neural network"). Acronyms (LLM, GPT-4)
and camel-case names (ReAct, PageRank) match only in their exact case (a plural "s" allowed:
LLMs). An acronym that is not a curated alias is looked for only in papers that already have
its concept: resolve gives each acronym its majority meaning, and "DP" is differential privacy
in one paper, dynamic programming in another. A match never:

* overlaps a mention extraction already found (or another lexicon match: longest first),
* starts inside a hyphenated word ("shot algorithm" is not in "one-shot algorithm"),
* spans sentence punctuation, a URL, LaTeX or HTML (masked as in extraction).

Left out of the lexicon: labels of fewer than four letters (acronyms: two), labels that
start or end with a function word or a generic modifier, or are made only of generic words
("real-world datasets", "proposed method", "specific task"), one-word labels that are not
acronyms or curated terms, alternative labels that are another key's long form (merged in by
an acronym), and labels that name more than one concept (e.g. an acronym that is a method in
one paper and a metric in another). A paper's own acronym definitions win over the lexicon: if it already resolved
"RL" to some concept, more "RL"s there go to the same concept.

The abstract is tokenised once; from each word a candidate grows only while the lexicon has
an entry starting with those words (a set of prefixes), so 35,000 abstracts take seconds
(``bench/propagate.py``).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from operator import add, itemgetter

from kg.ingest.titles import read_title
from kg.model import Concept, EntityType, Mention, Paper, PaperEntities, Resolution, Where, in_text_order
from kg.text.markup import mask_markup
from kg.text.vocab import Vocabulary, is_acronym, load_vocabulary, normalize_key, singularize
from kg.text.words import ADVERB_ENDINGS, EDGE_WORDS, FIRST_WORD_STOP, GENERIC_WORDS, NAME_SUFFIXES
from kg.util.gcpause import gc_paused
from kg.util.stages import REPORT_EVERY

LEXICON_SOURCE = "lexicon"
LEXICON_SCORE = 0.5  # below every extractor's score: found by string match alone, no context
MIN_LETTERS = 4  # shorter non-acronym labels are too often other words
MIN_ACRONYM_LETTERS = 2  # "3D", "X" are no names
MAX_WORDS = 8  # longer labels practically never recur verbatim

# A word and what follows it. Inner dots and apostrophes stay in the word (Llama 3.1, BERT's);
# one hyphen or only spaces may join it to the next word of the same name.
_WORD = re.compile(r"(\w+(?:[.'’]\w+)*)([-\u2010-\u2013\u2212]|\s+)?")
# The same, with the text skipped before the word (no word characters) captured first.
_WORD_RUN = re.compile(r"(\W*)" + _WORD.pattern)
_HYPHENS = "-\u2010\u2011\u2012\u2013\u2212"
_POSSESSIVE = ("'s", "’s", "'S", "’S")
_SENTENCE_END = re.compile(r"[.!?](?=\s+[\"'(\[]?[A-Z0-9])")

@dataclass(frozen=True, slots=True)
class Lexicon:
    """Normalised word sequences → concept ids, one table per case policy.

    ``phrases`` keys are lower case with the last word singular (as `normalize_key` folds);
    ``exact`` keys keep their case (acronyms and camel-case names; a plural "s" removed from
    an acronym: LLMs → LLM). The prefix sets hold every key's leading words (all but the
    last), so a lookup extends a candidate only while some entry still fits.

    Acronyms mean different things in different papers ("DP": differential privacy or dynamic
    programming) and resolve gives each the majority meaning; so an acronym that is not a
    curated alias is ``guarded``: it is looked for only where the paper already has its concept.
    """

    phrases: dict[str, str]
    exact: dict[str, str]
    phrase_prefixes: frozenset[str]
    exact_prefixes: frozenset[str]
    phrase_starts: frozenset[str]  # every key's first word: where a match can begin
    exact_starts: frozenset[str]
    guarded: frozenset[str] = frozenset()  # exact keys found only in papers already linked to their concept

    def __len__(self) -> int:
        return len(self.phrases) + len(self.exact)


@functools.lru_cache(maxsize=65536)
def _singular(lower: str) -> str:
    return singularize(lower)


@functools.lru_cache(maxsize=65536)  # called for most words of every abstract
def _exact(text: str) -> str:
    """An acronym without its plural "s" (LLMs → LLM); other words unchanged."""
    return text[:-1] if len(text) > 1 and text[-1] == "s" and not any(ch.islower() for ch in text[:-1]) else text


class _Words:
    """The words of a text, tokenised once: offsets, surfaces, lower-case forms, and how each
    word is joined to the next (part of one name, and by a hyphen or not)."""

    __slots__ = ("starts", "ends", "texts", "lowers", "joined", "hyphened")

    def __init__(self, text: str) -> None:
        # (skipped, word, gap) triples from one C-level findall; offsets come from running sums
        # of their lengths (the skipped text holds no word character, so each word starts
        # right after it, exactly where `_WORD` alone would find it).
        found = _WORD_RUN.findall(text)
        skipped = list(map(itemgetter(0), found))
        texts = list(map(itemgetter(1), found))
        gaps = list(map(itemgetter(2), found))  # "" where no gap follows
        follows = list(accumulate(map(len, map("".join, found))))  # where each word and its gap end
        starts = list(map(add, [0, *follows[:-1]], map(len, skipped)))
        if "'" in text or "’" in text:
            for k, word in enumerate(texts):
                if ("'" in word or "’" in word) and word.endswith(_POSSESSIVE) and len(word) > 2:
                    texts[k], gaps[k] = word[:-2], ""  # "BERT's model": BERT, and no name runs on
        # Joined to the next word: a gap of spaces or one hyphen, and the next word right after it.
        joined = [gap != "" and not skip and "\n\n" not in gap for gap, skip in zip(gaps, skipped[1:], strict=False)]
        joined.append(False)
        self.starts = starts
        self.ends = list(map(add, starts, map(len, texts)))
        self.texts = texts
        self.lowers = list(map(str.lower, texts)) if text.isascii() else [unicodedata.normalize("NFKC", w).lower() for w in texts]
        self.joined = joined
        self.hyphened = [j and gap in _HYPHENS for j, gap in zip(joined, gaps, strict=False)]

    def __len__(self) -> int:
        return len(self.texts)

    def phrase_key(self, i: int, j: int) -> str:
        """Key of words i..j-1: lower case, the last word singular."""
        return " ".join([*self.lowers[i : j - 1], _singular(self.lowers[j - 1])])

    def acronym_key(self, i: int, j: int) -> str:
        return " ".join([*self.texts[i : j - 1], _exact(self.texts[j - 1])])


def _label_words(label: str) -> _Words | None:
    """The words of a label when they make up all of it as one name, else None."""
    text = " ".join(label.split())
    words = _Words(text)
    if not len(words) or words.starts[0] != 0 or words.ends[-1] != len(text) or not all(words.joined[:-1]):
        return None
    return words


def _worth_looking_for(words: _Words, *, exact: bool, curated: bool) -> bool:
    lowers = words.lowers
    letters = sum(ch.isalpha() for word in lowers for ch in word)
    if lowers[0] in EDGE_WORDS or lowers[-1] in EDGE_WORDS:  # also acronyms that spell a word: IS, ON, WE
        return False
    if exact:
        return letters >= MIN_ACRONYM_LETTERS and len(lowers) <= MAX_WORDS
    if len(lowers) > MAX_WORDS or letters < MIN_LETTERS or lowers[0].endswith(ADVERB_ENDINGS):
        return False
    if not curated and (lowers[0] in FIRST_WORD_STOP or _first_word(words) in FIRST_WORD_STOP):
        return False
    if all(w in GENERIC_WORDS or w in EDGE_WORDS or _singular(w) in GENERIC_WORDS or w.isdigit() for w in lowers):
        return False
    spaced = any(joined and not hyphened for joined, hyphened in zip(words.joined[:-1], words.hyphened[:-1], strict=True))
    return spaced or curated  # one ordinary word ("pre-trained" too) is too often not the concept


def _first_word(words: _Words) -> str:
    """The first word with the words hyphened to it: "top-down" in "top-down approach"."""
    end = 0
    while words.hyphened[end]:
        end += 1
    return "-".join(words.lowers[: end + 1])


def _camel_case(label: str) -> bool:
    """One word with a capital past its first letter (ReAct, PageRank): a name, matched in its case."""
    return " " not in label and any(ch.isupper() for ch in label[1:])


def build_lexicon(concepts: Iterable[Concept], *, vocabulary: Vocabulary | None = None) -> Lexicon:
    """The lexicon of `concepts`' labels.

    A concept's labels are its preferred label, its alternative labels that are acronyms or
    spell the same key (plural, case, hyphen variants) and, for curated concepts, the
    vocabulary's aliases. Other alternative labels are long forms that resolve merged in
    through an acronym and may belong to another concept that shares it ("linear discriminant
    analysis" under LDA = latent Dirichlet allocation); they are not looked for.
    Curated concepts may have one-word labels; others need two words or more.
    """
    vocabulary = vocabulary or load_vocabulary()
    phrases: dict[str, set[str]] = defaultdict(set)
    exact: dict[str, set[str]] = defaultdict(set)
    trusted: set[str] = set()  # exact keys of curated labels and camel-case names
    for concept in sorted(concepts, key=lambda c: c.id):
        entry = vocabulary.get(concept.id)
        own_key = normalize_key(concept.pref_label)
        curated = {concept.pref_label, *entry.aliases} if entry else set()
        labels = [concept.pref_label, *sorted(curated - {concept.pref_label})]
        labels += [a for a in concept.alt_labels if is_acronym(a) or normalize_key(a) == own_key]
        for label in labels:
            words = _label_words(label)
            if words is None:
                continue
            case_exact = is_acronym(label) or _camel_case(label)
            if not _worth_looking_for(words, exact=case_exact, curated=entry is not None):
                continue
            if case_exact:
                key = words.acronym_key(0, len(words))
                exact[key].add(concept.id)
                if label in curated or not is_acronym(label):
                    trusted.add(key)
            else:
                phrases[words.phrase_key(0, len(words))].add(concept.id)
    # A key naming several concepts is ambiguous (across types or not): it is left out.
    unique_phrases = {key: min(ids) for key, ids in sorted(phrases.items()) if len(ids) == 1}
    unique_exact = {key: min(ids) for key, ids in sorted(exact.items()) if len(ids) == 1}
    return Lexicon(
        unique_phrases,
        unique_exact,
        _prefixes(unique_phrases),
        _prefixes(unique_exact),
        frozenset(key.split(" ", 1)[0] for key in unique_phrases),
        frozenset(key.split(" ", 1)[0] for key in unique_exact),
        frozenset(unique_exact) - trusted,
    )


def _prefixes(keys: Iterable[str]) -> frozenset[str]:
    """Every key's leading words: "a b c" → "a", "a b"."""
    found = set()
    for key in keys:
        words = key.split(" ")
        for k in range(1, len(words)):
            found.add(" ".join(words[:k]))
    return frozenset(found)


@dataclass(frozen=True, slots=True)
class LexiconMatch:
    start: int
    end: int
    concept: str


def find_matches(
    text: str,
    lexicon: Lexicon,
    *,
    taken: Sequence[tuple[int, int]] = (),
    linked: Collection[str] = (),
    acronyms: Mapping[str, str] | None = None,
) -> list[LexiconMatch]:
    """Lexicon occurrences in `text`, leftmost-longest, none overlapping `taken` spans or each other.

    `linked` are the concepts the paper already has (where guarded acronyms may be found);
    `acronyms` maps the paper's own acronyms (exact keys) to the concepts extraction resolved
    them to here: a paper's own definitions win over the lexicon.
    """
    masked = mask_markup(text)
    words = _Words(masked)
    phrase_starts, exact_starts = lexicon.phrase_starts, lexicon.exact_starts
    hyphened, lowers, texts = words.hyphened, words.lowers, words.texts
    found: list[LexiconMatch] = []
    free = 0  # the first word not inside an earlier match
    acronyms = acronyms or {}
    # Words some entry starts with (or with their singular); one pass, most words drop out here.
    starting = [
        i
        for i, (lower, word) in enumerate(zip(lowers, texts, strict=True))
        if lower in phrase_starts
        or word in exact_starts
        or (lower[-1] == "s" and (_singular(lower) in phrase_starts or _exact(word) in exact_starts))
    ]
    for i in starting:
        if i < free:
            continue
        if i and hyphened[i - 1]:  # never from the middle of a hyphenated word
            continue
        for size, concept in _candidates(words, i, lexicon, linked, acronyms):  # longest first
            j = i + size
            if hyphened[j - 1] and lowers[j] not in NAME_SUFFIXES:
                continue  # the hyphenated word goes on: "model-free" is not "model"
            start, end = words.starts[i], words.ends[j - 1]
            if start and text[start - 1] in _HYPHENS:
                break  # after a hyphen that masked markup hid: "$k$-NN" is no neural network
            if text[start:end] != masked[start:end]:
                break  # markup inside ("\\emph{evidence} approach"): not the label as written
            if not _overlaps(taken, start, end):
                found.append(LexiconMatch(start, end, concept))
                free = j
                break
    return found


def _candidates(words: _Words, i: int, lexicon: Lexicon, linked: Collection[str], acronyms: Mapping[str, str]) -> list[tuple[int, str]]:
    """(length in words, concept) of every entry that starts at word i, longest first
    (an exact-case entry before a phrase of the same length)."""
    found: list[tuple[int, str]] = []
    exact, guarded = lexicon.exact, lexicon.guarded
    for size, key in _runs(words.texts, words.joined, i, lexicon.exact_prefixes, _exact):
        own = acronyms.get(key)  # the paper's own acronym: always its meaning here
        concept = own or exact.get(key)
        if concept is not None and (own is not None or key not in guarded or concept in linked):
            found.append((size, concept))
    phrases = lexicon.phrases
    for size, key in _runs(words.lowers, words.joined, i, lexicon.phrase_prefixes, _singular):
        concept = phrases.get(key)
        if concept is not None:
            found.append((size, concept))
    if len(found) > 1:
        found.sort(key=lambda item: -item[0])  # stable: an exact entry stays before a phrase as long
    return found


def _runs(tokens: Sequence[str], joined: Sequence[bool], i: int, prefixes: Collection[str], fold: Callable[[str], str]) -> list[tuple[int, str]]:
    """(length in words, key) of each run of words from word i that an entry may be: the word,
    then one word more while the words are joined and the run so far starts some entry
    (`prefixes`). A key is the run as written with its last word folded by `fold` (an exact
    entry's acronym plural, a phrase's plural noun). A list, not a generator: this runs for
    every word that starts an entry, and resuming a generator cost propagation 13 % more CPU."""
    head = tokens[i]  # words i..k, as a prefix key
    runs = [(1, fold(head))]
    k = i
    while joined[k] and head in prefixes and k + 1 < len(tokens):
        k += 1
        runs.append((k + 1 - i, f"{head} {fold(tokens[k])}"))
        head = f"{head} {tokens[k]}"
    return runs


def _overlaps(spans: Sequence[tuple[int, int]], start: int, end: int) -> bool:
    for s, e in spans:  # few mentions per abstract: a scan is enough
        if s < end and start < e:
            return True
    return False


def _sentence(text: str, start: int, end: int, known: Sequence[tuple[int, int]]) -> tuple[int, int]:
    """The sentence span around [start, end): a sentence extraction reported if one holds it,
    else the stretch between sentence-ending punctuation, kept clear of the known sentences."""
    for s, e in known:
        if s <= start and end <= e:
            return s, e
    left = max((m.end() for m in _SENTENCE_END.finditer(text, 0, start)), default=0)
    following = _SENTENCE_END.search(text, end)
    right = following.end() if following else len(text)
    left = max([left] + [e for _, e in known if e <= start])
    right = min([right] + [s for s, _ in known if s >= end])
    while left < start and text[left].isspace():
        left += 1
    while right > end and text[right - 1].isspace():
        right -= 1
    return left, right


@functools.lru_cache(maxsize=65536)
def _mention_acronym_key(text: str) -> str | None:
    """The exact key a mention's text gives when it is an acronym written as one name, else None."""
    words = _label_words(text) if is_acronym(text) else None
    return words.acronym_key(0, len(words)) if words is not None else None


def propagate_paper(
    paper: Paper, entities: PaperEntities, lexicon: Lexicon, *, types: dict[str, EntityType], scores: dict[str, float] | None = None
) -> PaperEntities:
    """`entities` plus a lexicon mention for every further occurrence of a known concept in the
    abstract, and in the title where extraction reads it (`kg.ingest.titles.read_title`), scored as
    the concept's extracted mentions are on average (`scores`; else `LEXICON_SCORE`)."""
    acronyms: dict[str, str] = {}  # this paper's acronyms, as extraction resolved them here
    for mention in entities.mentions:
        key = _mention_acronym_key(mention.text)
        if key is not None:
            acronyms.setdefault(key, mention.concept)
    linked = {mention.concept for mention in entities.mentions}
    title = read_title(paper)
    parts: tuple[tuple[Where, str], ...] = (("abstract", paper.abstract),) if title is None else (("abstract", paper.abstract), ("title", title))
    added = []
    for where, text in parts:
        own = [m for m in entities.mentions if m.where == where]
        matches = find_matches(text, lexicon, taken=[(m.start, m.end) for m in own], linked=linked, acronyms=acronyms)
        known = sorted({(m.sent_start, m.sent_end) for m in own if m.sent_end > m.sent_start})
        for match in matches:
            if match.concept not in types or (scores is not None and match.concept not in scores):
                continue  # with scores, only concepts some kept mention names spread (not bare curated broader ones)
            sent_start, sent_end = _sentence(text, match.start, match.end, known)
            added.append(
                Mention(
                    start=match.start,
                    end=match.end,
                    text=text[match.start : match.end],
                    label=types[match.concept],
                    concept=match.concept,
                    role="used",
                    source=LEXICON_SOURCE,
                    score=scores.get(match.concept, LEXICON_SCORE) if scores else LEXICON_SCORE,
                    sent_start=sent_start,
                    sent_end=sent_end,
                    where=where,
                )
            )
    if not added:
        return entities
    mentions = sorted((*entities.mentions, *added), key=lambda m: (*in_text_order(m), m.concept))
    return PaperEntities(entities.paper_id, tuple(mentions))


def _mean_scores(resolution: Resolution) -> dict[str, float]:
    sums: dict[str, list[float]] = {}
    for found in resolution.entities:
        for mention in found.mentions:
            total = sums.setdefault(mention.concept, [0.0, 0.0])
            total[0] += mention.score
            total[1] += 1
    return {concept: round(total / count, 4) for concept, (total, count) in sums.items()}


@gc_paused()
def propagate(
    papers: Sequence[Paper], resolution: Resolution, *, lexicon: Lexicon | None = None, report: Callable[[int], None] | None = None,
    concept_scores: bool = False,
) -> Resolution:
    """`resolution` with every paper's further lexicon occurrences added (concepts unchanged).
    With `concept_scores`, a lexicon mention is scored as its concept's extracted mentions are on
    average (calibrated scores: the chance a reader accepts it); else `LEXICON_SCORE`.

    `papers` and ``resolution.entities`` are parallel (as `kg build` makes them); `report` is
    told how many papers are done, every `REPORT_EVERY`.
    """
    if len(papers) != len(resolution.entities):
        raise ValueError(f"{len(papers)} papers but {len(resolution.entities)} entity records")
    if lexicon is None:
        lexicon = build_lexicon(resolution.concepts)
    types = {concept.id: concept.type for concept in resolution.concepts}
    scores = _mean_scores(resolution) if concept_scores else None
    entities = []
    for done, (paper, found) in enumerate(zip(papers, resolution.entities, strict=True), start=1):
        entities.append(propagate_paper(paper, found, lexicon, types=types, scores=scores))
        if report is not None and done % REPORT_EVERY == 0:
            report(done)
    return Resolution(tuple(entities), resolution.concepts)

