"""The words of a paper for related work: terms of its title and abstract, weighted as Okapi BM25.

A paper's terms are its words (lower case, two characters or more, not a stop word nor a bare
number, plural folded as `kg.text.vocab.singularize` folds it; URLs, HTML and LaTeX masked
first by `kg.text.markup.mask_markup`) and the pairs of words next to each other within a
clause once stop words are gone ("temporal difference", "policy gradient"; never across a full
stop, a comma or a bracket). A pair is kept only when at least two papers have it: a pair in
one paper can never be shared, and pairs are most of the terms. A paper's weight for a term is
BM25's

    tf (k1 + 1) / (tf + k1 (1 − b + b · length / mean length))

with k1 = 1.2, b = 0.75 (length in words), and a term's idf is ln(1 + (N − df + 0.5) / (df + 0.5))
(Lucene's, never negative). The lexical score of a candidate for a query paper is the sum of
idf × weight over the distinct terms of the query: BM25 with the query's terms counted once.
`kg.related_work.index` stores these postings in ``related.idx``, so this signal needs no
embedding model; `kg.related_work.rank` fuses it. `SIGNATURE` digests these rules: an index
made under others is rebuilt. The keys by which `kg related --text` finds concepts
(`label_keys`) are here too.
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from kg.text.markup import mask_markup  # URLs, HTML and LaTeX are no shared topic ("github com", "script")
from kg.text.vocab import normalize_key, singularize

K1 = 1.2
B = 0.75
MIN_PAIR_PAPERS = 2

# English function words, and the words every abstract uses to talk about itself; the second
# group has a low idf anyway, but as a reason ("shared words: propose, show") it explains nothing.
STOP_WORDS = frozenset(
    """a about above across after afterwards again against all almost alone along already also although
    always am among amongst an and another any anyhow anyone anything anyway anywhere are around as at be
    became because become becomes becoming been before beforehand behind being below beside besides between
    beyond both but by can cannot could did do does doing done down due during each eg either else
    elsewhere enough etc even ever every everyone everything everywhere except few for former formerly from
    further had has have having he hence her here hereafter hereby herein hereupon hers herself him himself
    his how however i ie if in indeed into is it its itself just last latter latterly least less many may
    me meanwhile might mine more moreover most mostly much must my myself namely neither never nevertheless
    next no nobody none noone nor not nothing now nowhere of off often on once one only onto or other others
    otherwise our ours ourselves out over own per perhaps please quite rather re same seem seemed seeming
    seems several she should since so some somehow someone something sometime sometimes somewhere still such
    than that the their theirs them themselves then thence there thereafter thereby therefore therein
    thereupon these they this those though through throughout thru thus to together too toward towards
    under until up upon us very via was we well were what whatever when whence whenever where whereafter
    whereas whereby wherein whereupon wherever whether which while whither who whoever whole whom whose why
    will with within without would yet you your yours yourself yourselves
    abstract achieve achieves achieved approach approaches based demonstrate demonstrates experiment
    experiments method methods novel outperform outperforms paper propose proposed proposes result results
    show shows shown significantly state art existing work works using use used""".split()
)

_WORD = re.compile(r"\b\w\w+\b")
_CLAUSE_BREAK = re.compile(r"[.,;:!?()\[\]{}\"]+(?:\s|$)|[()\[\]{}]")


def _signature() -> str:
    """What makes a paper's terms and weights, and the concept keys: an index written under other rules is stale."""
    rules = [sorted(STOP_WORDS), K1, B, MIN_PAIR_PAPERS, _WORD.pattern, _CLAUSE_BREAK.pattern, "mask_markup, then clauses, singularize", KEY_WORD.pattern, MIN_KEY_LETTERS]
    return hashlib.sha256(repr(rules).encode("utf-8")).hexdigest()[:16]


def words(text: str) -> list[str]:
    """The words of `text` that count: lower case, not stop words, plural folded; not bare
    numbers; nothing from URLs, HTML or LaTeX."""
    return _words(mask_markup(text))


def _words(text: str) -> list[str]:
    return [_singular(word) for word in _WORD.findall(text.lower()) if word not in STOP_WORDS and not word.isdigit()]


@functools.lru_cache(maxsize=1 << 18)  # a corpus repeats its words: fold each once
def _singular(word: str) -> str:
    return singularize(word)


def terms(text: str) -> Counter[str]:
    """Every term of `text` with its count: words, and pairs of words next to each other within
    a clause ("policy gradient"; never across a full stop, a comma or a bracket)."""
    return _counted(text)[0]


def _counted(text: str) -> tuple[Counter[str], int]:
    """`terms(text)`, and how many words it has (BM25's length)."""
    counts: Counter[str] = Counter()
    length = 0
    for clause in _CLAUSE_BREAK.split(mask_markup(text)):  # masked first: a URL's dots are no clause breaks
        found = _words(clause)
        length += len(found)
        counts.update(found)
        if len(found) > 1:
            counts.update(map(" ".join, zip(found, found[1:], strict=False)))
    return counts, length


def is_pair(term: str) -> bool:
    return " " in term


def idf(papers: int, df: int) -> float:
    return math.log(1.0 + (papers - df + 0.5) / (df + 0.5))


def paper_text(title: str | None, abstract: str | None) -> str:
    return f"{title or ''}. {abstract or ''}"


def postings(texts: Sequence[str]) -> tuple[list[str], list[list[tuple[int, float]]], list[float]]:
    """BM25 postings of the papers' texts: the sorted vocabulary, each paper's (term, weight)
    row sorted by term number, and each term's idf."""
    counted, lengths = zip(*map(_counted, texts), strict=True) if texts else ((), ())
    mean = (sum(lengths) / len(lengths)) if lengths else 1.0
    df: Counter[str] = Counter()
    for row in counted:
        df.update(row.keys())
    vocabulary = sorted(term for term, n in df.items() if n >= MIN_PAIR_PAPERS or not is_pair(term))
    number = {term: i for i, term in enumerate(vocabulary)}
    rows = []
    for row, length in zip(counted, lengths, strict=True):
        norm = K1 * (1.0 - B + B * length / (mean or 1.0))
        rows.append(sorted((number[term], count * (K1 + 1) / (count + norm)) for term, count in row.items() if term in number))
    return vocabulary, rows, [idf(len(texts), df[term]) for term in vocabulary]


def joined(phrases: Sequence[str]) -> list[str]:
    """Pairs that overlap by a word joined into one phrase, in the order given:
    ["retrieval augmented", "augmented generation"] → ["retrieval augmented generation"]."""
    result: list[list[str]] = []
    for phrase in phrases:
        words_ = phrase.split(" ")
        for i, done in enumerate(result):
            if len(words_) == 2 and len(done) >= 2 and done[-1] == words_[0]:
                result[i] = [*done, words_[1]]
                break
            if len(words_) == 2 and len(done) >= 2 and done[0] == words_[1]:
                result[i] = [words_[0], *done]
                break
        else:
            result.append(words_)
    return [" ".join(words_) for words_ in result]


def phrase_strength(papers: int, pair_df: int, first_df: int, second_df: int) -> float:
    """How much more often two words occur as a pair than chance would have them (pointwise
    mutual information of the papers having them): "model free" is a phrase, "provide
    substantial" is not."""
    return math.log(papers * pair_df / max(first_df * second_df, 1))


# The words of a label or a text as `kg related --text` matches them: a hyphen separates
# ("LLM-based" holds "LLM"; "retrieval-augmented" is keyed "retrieval augmented" anyway).
KEY_WORD = re.compile(r"\w+(?:['’.]\w+)*")
MIN_KEY_LETTERS = 4  # shorter labels ("RL", "GAN") are matched in a text only in their own case


def label_keys(data: dict[str, Any]) -> set[str]:
    """The keys a text names a concept by (`kg related --text`): its labels as
    `kg.text.vocab.normalize_key` folds them; a short one (an acronym) keeps its case."""
    keys = set()
    for label in [data.get("label") or "", *(data.get("alt_labels") or ())]:
        key = normalize_key(label)
        if sum(ch.isalpha() for ch in key) >= MIN_KEY_LETTERS:
            keys.add(key)
        elif key and label.strip():
            keys.add(" ".join(KEY_WORD.findall(label)))  # exact case: "RL", "GAN", "GPT 4"
    return keys


SIGNATURE = _signature()
