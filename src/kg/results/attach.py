"""Learned attachment: which numbers are results, and which metric, dataset and method each one
belongs to, chosen by small logistic models over value–candidate pairs.

`sites(doc)` lists every value of a parsed abstract (`kg.results.values`) with its candidates:
the abstract's METRIC spans (and the curated metric names the recognizer left unmarked), its
DATASET spans and its METHOD spans, each with named features of the pair: the same sentence or
how many before, the distance in the parse tree and in words, whether the candidate stands right
after the value ("92.3 % accuracy") or right before it ("an accuracy of 92.3 %"), how many other
values and candidates lie between, the preposition before a dataset ("on", "in"), whether the
values and candidates of a sentence pair up in order ("respectively"), the role and the
grammatical place of a method (the subject of the verb the value hangs from, the object of
"outperforms", after "over" or "than"). Each site also has a "no metric" / "no dataset" option
and, for the method, "the paper's own method" and "an unnamed baseline".

`AttachModel` scores each candidate with its part's weights (``kg/models/claim-attacher.json``,
fitted by ``bench/fit_claims.py`` on the train half of kg's gold claims): a value is a claim with
probability p(claim), and its metric, dataset and method are the candidates scored highest. A
claim's score is p(claim) × p(metric) × p(dataset): the chance that its value, metric and dataset
are all right, which is what `kg leaderboard`'s threshold (`kg.results.MIN_RESULT_SCORE`) reads.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from spacy.tokens import Doc, Span, Token

from kg.results import attacher_text
from kg.results.find import BASELINE_CUES, BETWEEN_METRIC_AND_VALUE, GAIN_WORDS, NOT_RESULT_METRICS, OWN_WORDS
from kg.results.metrics import direction, metric_names
from kg.results.values import Value, find_values

Part = Literal["claim", "metric", "dataset", "method"]
PARTS: tuple[Part, ...] = ("claim", "metric", "dataset", "method")
Option = Literal["span", "none", "proposed", "baseline"]

RESULT_VERBS = frozenset("achieve reach obtain attain outperform surpass improve yield boost reduce score set exceed record deliver gain".split())
DATASET_PREPOSITIONS = frozenset("on in for across over from".split())
DATASET_NOUNS = frozenset("dataset datasets benchmark benchmarks corpus corpora set sets split challenge suite".split())
UNIT_WORDS = frozenset(("%", "percent", "points", "point", "pp", "db", "x", "×"))
MAX_TREE = 12  # parse-tree distances are clipped here (and cross-sentence pairs count as this)


@dataclass(frozen=True, slots=True)
class Candidate:
    """One option for a site's metric, dataset or method: a span of the doc, or "none",
    "proposed" (the paper's own method) or "baseline" (an unnamed one)."""

    option: Option
    span: Span | None
    features: dict[str, float]

    @property
    def chars(self) -> tuple[int, int] | None:
        return None if self.span is None else (self.span.start_char, self.span.end_char)


@dataclass(frozen=True, slots=True)
class Site:
    """A value of the doc with what it could be tied to."""

    value: Value
    tokens: Span
    sentence: Span
    after: int  # the first token after the value and its unit
    features: dict[str, float]  # p(claim)'s
    metric: tuple[Candidate, ...]
    dataset: tuple[Candidate, ...]
    method: tuple[Candidate, ...]
    task: Span | None  # the nearest task (not scored: a leaderboard filter, not a key)


@dataclass(slots=True)
class _Option:
    """A span some site may take as its metric or dataset, with what it is whatever the site."""

    span: Span
    sentence: int
    features: dict[str, float]


@dataclass
class _Doc:
    """What every site of one doc shares: sentences, typed spans, candidate pools, parse distances."""

    doc: Doc
    parsed: bool
    sentences: list[Span]
    spans: list[Span]
    by_type: dict[str, list[Span]]
    sent_of: list[int] = field(default_factory=list)  # token index → sentence number
    values_by_sentence: dict[int, list[int]] = field(default_factory=dict)  # sentence → value root tokens
    keys: Counter[str] = field(default_factory=Counter)  # a span's folded text → times the abstract names it
    own: set[str] = field(default_factory=set)  # folded texts of the methods the paper proposes
    pools: dict[str, list[_Option]] = field(default_factory=dict)  # "METRIC" / "DATASET" → options

    def sentence(self, token: int) -> int:
        return self.sent_of[token]

    def distance(self, a: Token, b: Token) -> int:
        """Arcs between two tokens of one sentence in the parse (words without a parser)."""
        if not self.parsed:
            return min(abs(a.i - b.i), MAX_TREE)
        up = {t.i: n for n, t in enumerate([a, *a.ancestors])}
        for n, t in enumerate([b, *b.ancestors]):
            if t.i in up:
                return min(up[t.i] + n, MAX_TREE)
        return MAX_TREE


def fold(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.lower())


# Head words of metric names ("joint goal accuracy", "alignment rate", "strict F1"): a noun
# phrase with one of these as its last word can be a metric the recognizer left unmarked.
METRIC_HEADS = frozenset(
    """accuracy accuracies error errors rate rates score scores f1 f-score f-measure precision recall auc auroc iou miou
    map ap bleu rouge psnr ssim fid perplexity ppl wer cer latency speed throughput similarity correlation kappa
    coefficient ratio index distance loss return reward success usage cost costs consumption time gain gains
    improvement performance quality mae mse rmse dice ndcg mrr hits elo reliability coverage efficiency""".split()
)
_SKIP_FIRST = frozenset("DET PRON NUM PUNCT CCONJ ADP SYM".split())
# First words a reader drops from a metric's name ("average accuracy" is read as accuracy, mostly).
GENERIC_FIRST = frozenset("average mean median overall relative absolute best top higher lower improved new high low final total".split())


def _context(doc: Doc, spans: list[Span]) -> _Doc:
    parsed = doc.has_annotation("DEP")
    sentences = list(doc.sents) if parsed or doc.has_annotation("SENT_START") else [doc[:]]
    by_type: dict[str, list[Span]] = {label: sorted((s for s in spans if s.label_ == label), key=lambda s: (s.start, s.end)) for label in ("METRIC", "DATASET", "TASK", "METHOD")}
    ctx = _Doc(doc, parsed, sentences, spans, by_type)
    ctx.sent_of = [0] * len(doc)
    for n, sent in enumerate(sentences):
        for i in range(sent.start, sent.end):
            ctx.sent_of[i] = n
    ctx.keys = Counter(fold(s.text) for s in spans)
    ctx.own = {fold(s.text) for s in by_type["METHOD"] if s._.kg_role == "proposed"}
    chunks = list(doc.noun_chunks) if parsed else []
    ctx.pools = {"METRIC": _metric_pool(ctx, chunks), "DATASET": _dataset_pool(ctx, chunks)}
    return ctx


def _add(pool: dict[tuple[int, int], _Option], ctx: _Doc, span: Span, features: dict[str, float]) -> None:
    """Add a span to a pool, or its features to the same span's entry."""
    if not len(span) or not any(c.isalnum() for c in span.text):
        return
    key = (span.start, span.end)
    if key in pool:
        pool[key].features.update(features)
    else:
        pool[key] = _Option(span, ctx.sentence(span.start), dict(features))


def _kg_features(span: Span, label: str) -> dict[str, float]:
    source = span._.kg_source or "other"
    return {f"label={span.label_}": 1.0, f"source={source}": 1.0, "typed": float(span.label_ == label)}


def _chunk_variants(chunk: Span) -> Iterable[tuple[Span, dict[str, float]]]:
    """The noun phrase from each of its words up to its head, past determiners, numbers and units
    ("a top alignment rate" → "top alignment rate", "alignment rate", "rate")."""
    doc = chunk.doc
    first = chunk.start
    while first < chunk.end and (doc[first].pos_ in _SKIP_FIRST or doc[first].like_num or doc[first].lower_ in UNIT_WORDS):
        first += 1
    end = chunk.end
    if first >= end or doc[end - 1].pos_ == "PRON":
        return
    for start in range(first, min(end, chunk.root.i + 1)):
        span = doc[start:end]
        features = {"source=chunk": 1.0, _bucket("chunk_words", len(span), (1, 2, 3)): 1.0}
        if start == first:
            features["chunk_longest"] = 1.0
        if doc[start].pos_ == "ADJ":
            features["chunk_adjective_first"] = 1.0
        yield span, features


def _metric_pool(ctx: _Doc, chunks: list[Span]) -> list[_Option]:
    pool: dict[tuple[int, int], _Option] = {}
    taken = {i for s in ctx.spans for i in range(s.start, s.end)}
    for span in ctx.spans:
        _add(pool, ctx, span, _kg_features(span, "METRIC"))
    for match in metric_names().finditer(ctx.doc.text):  # curated metric names, marked or not
        extra = ctx.doc.char_span(match.start(), match.end(), alignment_mode="contract")
        if extra is not None and len(extra):
            _add(pool, ctx, extra, {"curated": 1.0, **({} if taken.intersection(range(extra.start, extra.end)) else {"source=list": 1.0})})
    import os
    for chunk in chunks if os.environ.get("KG_POOL") != "typed" else []:
        for span, features in _chunk_variants(chunk):
            head = span[-1].lower_
            if head in METRIC_HEADS or span[-1].lemma_.lower() in METRIC_HEADS:
                features["metric_head"] = 1.0
            elif not any(s.label_ == "METRIC" for s in ctx.spans if s.start >= span.start and s.end <= span.end):
                continue  # a noun phrase that neither ends in a metric word nor holds a metric
            _add(pool, ctx, span, features)
    typed = [o.span for o in pool.values() if o.features.get("typed", 0.0) > 0 or "curated" in o.features]
    for option in pool.values():
        span = option.span
        if any(t.start >= span.start and t.end <= span.end and (t.start, t.end) != (span.start, span.end) for t in typed):
            option.features["extends_typed"] = 1.0
        if any(t.lower_ in ("and", "or", ",", ";", "/") for t in span):
            option.features["list"] = 1.0
        if any(t.like_num for t in span):
            option.features["number_inside"] = 1.0
        if span[0].lower_ in GENERIC_FIRST:
            option.features["generic_first"] = 1.0
        words = " ".join(option.span.text.lower().split())
        if words in NOT_RESULT_METRICS:
            option.features["cost_metric"] = 1.0
        if direction(option.span.text) is not None:
            option.features["direction_known"] = 1.0
        if option.span[-1].lower_ in METRIC_HEADS:
            option.features["metric_head"] = 1.0
    return sorted(pool.values(), key=lambda o: (o.span.start, o.span.end))


_DATASET_NOUN_END = re.compile(r"(?i)\b(?:data\s?sets?|benchmarks?|corpus|corpora|challenge|test\s?sets?|splits?|suite)$")


def _dataset_pool(ctx: _Doc, chunks: list[Span]) -> list[_Option]:
    pool: dict[tuple[int, int], _Option] = {}
    doc = ctx.doc
    for span in ctx.spans:
        _add(pool, ctx, span, _kg_features(span, "DATASET"))
    import os
    for chunk in chunks if os.environ.get("KG_POOL") != "typed" else []:
        for span, features in _chunk_variants(chunk):
            end = span.end
            while end > span.start + 1 and doc[end - 1].lower_ in DATASET_NOUNS:
                end -= 1  # "the True-False dataset" → True-False
            trimmed = doc[span.start : end]
            if end == span.end and not any(c.isupper() or c.isdigit() for c in trimmed.text):
                continue  # dataset names are written with capitals or digits, or called a dataset
            if end < span.end:
                features = {**features, "dataset_noun_trimmed": 1.0}
            _add(pool, ctx, trimmed, features)
    for option in pool.values():
        span = option.span
        if span.end < len(doc) and doc[span.end].lower_ in DATASET_NOUNS or _DATASET_NOUN_END.search(span.text):
            option.features["dataset_noun"] = 1.0
        if any(t.lower_ in DATASET_PREPOSITIONS for t in doc[max(0, span.start - 2) : span.start]):
            option.features["preposition"] = 1.0
        if any(c.isdigit() for c in span.text):
            option.features["digit"] = 1.0
        if any(t.lower_ in ("and", "or", ",", ";") for t in span):
            option.features["list"] = 1.0
        if not any(c.isupper() for c in span.text):
            option.features["lower_case"] = 1.0
    return sorted(pool.values(), key=lambda o: (o.span.start, o.span.end))


def _bucket(name: str, value: int, edges: Iterable[int]) -> str:
    """``name=k`` for the first edge k ≥ value, ``name>last`` past them."""
    last = 0
    for edge in edges:
        if value <= edge:
            return f"{name}={edge}"
        last = edge
    return f"{name}>{last}"


def _word(token: Token | None) -> str:
    return "" if token is None else token.lower_


def sites(doc: Doc, spans: list[Span] | None = None) -> list[Site]:
    """Every value of `doc` that could be a result, with its candidates (kg's entities from
    ``doc.spans["kg"]`` unless `spans`)."""
    spans = list(doc.spans.get("kg", [])) if spans is None else spans
    named = {i for s in spans for i in range(s.start, s.end)}
    found: list[tuple[Value, Span]] = []
    for value in find_values(doc.text):
        tokens = doc.char_span(value.start, value.end, alignment_mode="expand")
        if tokens is None or not len(tokens) or any(t.i in named for t in tokens):
            continue  # part of a name ("ResNet-50", "CIFAR-10")
        found.append((value, tokens))
    if not found:
        return []
    ctx = _context(doc, spans)
    from kg.results.find import rule_claims

    ruled = {(c.value.start, c.value.end): c for c in rule_claims(doc, spans)}  # today's rules, as evidence
    for _, tokens in found:
        ctx.values_by_sentence.setdefault(ctx.sentence(tokens.start), []).append(tokens.root.i)
    out = []
    for value, tokens in found:
        after = _unit_end(doc, tokens, value)
        sent_n = ctx.sentence(tokens.start)
        rule = ruled.get((value.start, value.end))
        metric = _agreeing(tuple(_metric_candidates(ctx, value, tokens, after, sent_n)), None if rule is None else rule.metric, rule is not None)
        dataset = _agreeing(tuple(_dataset_candidates(ctx, tokens, sent_n)), None if rule is None else rule.dataset, rule is not None)
        method = tuple(_method_candidates(ctx, tokens, sent_n))
        if rule is not None:  # the rules' method: a span, else the paper's own or an unnamed baseline
            ruled_option = "span" if rule.method is not None else "proposed" if rule.proposed else "baseline"
            method = tuple(
                Candidate(c.option, c.span, {**c.features, "rule": 1.0}) if c.option == ruled_option and (c.span is None or c.chars == rule.method) else c
                for c in method
            )
        features = _claim_features(ctx, value, tokens, after, sent_n, metric, dataset)
        if rule is not None:
            features["rule_claim"] = 1.0
            features[_bucket("rule_score", int(rule.score * 20), (12, 14, 15, 16, 17))] = 1.0
        out.append(
            Site(
                value=value, tokens=tokens, sentence=ctx.sentences[sent_n], after=after,
                features=features,
                metric=metric, dataset=dataset, method=method, task=_nearest_task(ctx, tokens, sent_n),
            )
        )  # fmt: skip
    return out


def _agreeing(candidates: tuple[Candidate, ...], chosen: tuple[int, int] | None, ruled: bool) -> tuple[Candidate, ...]:
    """The candidates, the one today's rules chose (`kg.results.find.rule_claims`) marked "rule"."""
    if not ruled:
        return candidates
    return tuple(
        Candidate(c.option, c.span, {**c.features, "rule": 1.0}) if (c.option == "none" and chosen is None) or (c.span is not None and c.chars == chosen) else c
        for c in candidates
    )


def _unit_end(doc: Doc, tokens: Span, value: Value) -> int:
    end = tokens.end
    if value.unit and end < len(doc) and doc[end].lower_ in UNIT_WORDS:
        end += 1
    return end


def _adjacent_after(ctx: _Doc, after: int, span: Span) -> bool:
    """The span follows the value and its unit ("92.3 % accuracy", "28.4 BLEU", "3.1 (top-1 error)")."""
    return after <= span.start <= after + 1 and all(t.lower_ in ("of", "(", "the") for t in ctx.doc[after : span.start])


def _adjacent_before(ctx: _Doc, tokens: Span, span: Span) -> bool:
    """The span comes shortly before the value through words like "of", "to", "=" ("an accuracy of 92.3 %")."""
    return span.end <= tokens.start and tokens.start - span.end <= 5 and all(
        t.lower_ in BETWEEN_METRIC_AND_VALUE or t.is_punct for t in ctx.doc[span.end : tokens.start]
    )


def _relation(ctx: _Doc, tokens: Span, option: _Option, sent_n: int, same_type: list[_Option]) -> dict[str, float]:
    """Where a candidate stands relative to the value: sentence, side, distances, what lies between.
    `same_type`: the candidates of the same pool in the value's sentence."""
    span = option.span
    found: dict[str, float] = {}
    offset = option.sentence - sent_n
    found[_bucket("sent", offset, (-3, -2, -1, 0, 1))] = 1.0
    left = span.end <= tokens.start
    found["left" if left else "right"] = 1.0
    gap = (tokens.start - span.end) if left else max(0, span.start - tokens.end)
    if offset == 0:
        tree = ctx.distance(tokens.root, span.root)
        found[_bucket("tree", tree, (1, 2, 3, 4, 5, 6, 8, 11))] = 1.0
        found["tree"] = tree / MAX_TREE
        found[_bucket("gap", gap, (0, 1, 2, 4, 8, 16))] = 1.0
        lo, hi = (span.end, tokens.start) if left else (tokens.end, span.start)
        between_values = sum(1 for i in ctx.values_by_sentence.get(sent_n, ()) if lo <= i < hi)
        found[_bucket("values_between", between_values, (0, 1, 2))] = 1.0
        typed = [o for o in same_type if "typed" in o.features and o.features["typed"] > 0 or "curated" in o.features]
        between_typed = sum(1 for o in typed if o is not option and o.span.start >= lo and o.span.end <= hi)
        found[_bucket("typed_between", between_typed, (0, 1))] = 1.0
        # the n-th value of the sentence with the n-th typed candidate, when there are as many of each
        values = ctx.values_by_sentence.get(sent_n, [])
        if len(values) >= 2 and len(values) == len(typed) and option in typed:
            order = values.index(tokens.root.i) if tokens.root.i in values else -1
            found["respectively" if order >= 0 and typed[order] is option else "respectively_other"] = 1.0
        if typed and option in typed:
            nearest = min(typed, key=lambda o: (ctx.distance(tokens.root, o.span.root), abs(o.span.start - tokens.start)))
            if nearest is option:
                found["nearest_typed"] = 1.0
        root_distance = min((ctx.distance(tokens.root, o.span.root) for o in same_type), default=MAX_TREE)
        if tree == root_distance:
            found["nearest_tree"] = 1.0
        window = ctx.doc[min(span.start, tokens.start) : max(span.end, tokens.end)]
        if "(" in (t.text for t in window) and ")" not in (t.text for t in window):
            found["bracket_between"] = 1.0
    else:
        found["far"] = 1.0
    found[_bucket("named", ctx.keys[fold(span.text)], (0, 1, 2, 3))] = 1.0
    return found


def _metric_candidates(ctx: _Doc, value: Value, tokens: Span, after: int, sent_n: int) -> Iterable[Candidate]:
    same = [o for o in ctx.pools["METRIC"] if o.sentence == sent_n and not (o.span.start < tokens.end and tokens.start < o.span.end)]
    count = 0
    for option in ctx.pools["METRIC"]:
        offset = option.sentence - sent_n
        typed = option.features.get("typed", 0.0) > 0 or "curated" in option.features
        if offset != 0 and not (typed and -2 <= offset <= 1):
            continue
        if option.span.start < tokens.end and tokens.start < option.span.end:
            continue
        features = {"bias": 1.0, **option.features, **_relation(ctx, tokens, option, sent_n, same)}
        if offset == 0 and _adjacent_after(ctx, after, option.span):
            features["adjacent_after"] = 1.0
        elif offset == 0 and _adjacent_before(ctx, tokens, option.span):
            features["adjacent_before"] = 1.0
        if value.unit is not None:
            features[f"unit={value.unit}"] = 1.0
        count += offset == 0 and typed
        yield Candidate("span", option.span, features)
    none = {"bias": 1.0, "none": 1.0, _bucket("none_in_sentence", count, (0, 1, 2)): 1.0}
    if value.unit is not None:
        none[f"none_unit={value.unit}"] = 1.0
    yield Candidate("none", None, none)


def _dataset_candidates(ctx: _Doc, tokens: Span, sent_n: int) -> Iterable[Candidate]:
    same = [o for o in ctx.pools["DATASET"] if o.sentence == sent_n]
    count = earlier = 0
    for option in ctx.pools["DATASET"]:
        offset = option.sentence - sent_n
        typed = option.features.get("typed", 0.0) > 0
        if not (-1 <= offset <= 0 or typed and -4 <= offset <= 1):
            continue
        if option.span.start < tokens.end and tokens.start < option.span.end:
            continue
        features = {"bias": 1.0, **option.features, **_relation(ctx, tokens, option, sent_n, same)}
        count += offset == 0 and typed
        earlier += offset < 0 and typed
        yield Candidate("span", option.span, features)
    none = {"bias": 1.0, "none": 1.0, _bucket("none_in_sentence", count, (0, 1, 2)): 1.0, _bucket("none_earlier", earlier, (0, 1, 2)): 1.0}
    yield Candidate("none", None, none)


def _governing_subject(ctx: _Doc, token: Token) -> tuple[int, int, bool] | None:
    """(first, last) token of the subject of the verb the value hangs from, and whether it is
    "we", "our model" and the like; None without one."""
    if not ctx.parsed:
        return None
    for verb in [token, *token.ancestors]:
        if verb.pos_ not in ("VERB", "AUX"):
            continue
        subjects = [c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")]
        if not subjects:
            continue
        subject = subjects[0]
        if subject.lower_ in ("which", "that", "who") and verb.dep_ == "relcl":
            return verb.head.i, verb.head.i, False
        words = {t.lower_ for t in subject.subtree}
        lo, hi = min(t.i for t in subject.subtree), max(t.i for t in subject.subtree)
        return lo, hi, bool(words & OWN_WORDS)
    return None


def _method_candidates(ctx: _Doc, tokens: Span, sent_n: int) -> Iterable[Candidate]:
    doc = ctx.doc
    subject = _governing_subject(ctx, tokens.root)
    sentence = ctx.sentences[sent_n]
    before = doc[max(sentence.start, tokens.start - 2) : tokens.start]
    from_value = any(t.lower_ == "from" for t in before)
    methods = [_Option(s, ctx.sentence(s.start), {}) for s in ctx.by_type["METHOD"] if ctx.sentence(s.start) == sent_n]
    for option in methods:
        span = option.span
        features = {"bias": 1.0, **_relation(ctx, tokens, option, sent_n, methods)}
        if subject is not None and span.start >= subject[0] and span.end <= subject[1] + 1:
            features["subject"] = 1.0
        if span._.kg_role == "proposed":
            features["proposed"] = 1.0
        if fold(span.text) in ctx.own:
            features["own"] = 1.0
        window = {t.lower_ for t in doc[max(sentence.start, span.start - 3) : span.start]}
        if window & BASELINE_CUES:
            features["baseline_cue"] = 1.0
        if ctx.parsed and span.root.dep_ == "dobj" and span.root.head.lemma_ in ("outperform", "surpass", "beat", "exceed"):
            features["outperformed"] = 1.0
        if from_value:
            features["from_value"] = 1.0
        yield Candidate("span", span, features)
    words = {t.lower_ for t in sentence}
    shared = {
        "we": bool(words & OWN_WORDS),
        "subject_own": subject is not None and subject[2],
        "has_own": bool(ctx.own),
        "from_value": from_value,
        "baseline_word": bool(words & {"baseline", "baselines"}),
        "cue": bool(words & BASELINE_CUES),
    }
    count_feature = _bucket("methods_in_sentence", len(methods), (0, 1, 2))
    unnamed: tuple[Option, ...] = ("proposed", "baseline")
    for choice in unnamed:
        own = {"bias": 1.0, str(choice): 1.0, f"{choice}_{count_feature}": 1.0}
        own.update({f"{choice}_{name}": 1.0 for name, on in shared.items() if on})
        yield Candidate(choice, None, own)


def _nearest_task(ctx: _Doc, tokens: Span, sent_n: int) -> Span | None:
    tasks = [s for s in ctx.by_type["TASK"] if ctx.sentence(s.start) == sent_n]
    close = [(ctx.distance(tokens.root, s.root), abs(s.start - tokens.start), n) for n, s in enumerate(tasks)]
    close = [c for c in close if c[0] <= 8]
    return tasks[min(close)[2]] if close else None


def _claim_features(
    ctx: _Doc, value: Value, tokens: Span, after: int, sent_n: int, metric: tuple[Candidate, ...], dataset: tuple[Candidate, ...]
) -> dict[str, float]:
    doc = ctx.doc
    sentence = ctx.sentences[sent_n]
    found: dict[str, float] = {"bias": 1.0, f"unit={value.unit}": 1.0}
    typed_metric = [c for c in metric if c.option == "span" and (c.features.get("typed", 0) > 0 or "curated" in c.features)]
    typed_dataset = [c for c in dataset if c.option == "span" and c.features.get("typed", 0) > 0]
    flags = {
        "decimal": "." in value.text,
        "signed": value.signed,
        "range": any(c in value.text for c in "-–"),
        "small": value.number < 1,
        "large": value.number > 100,
        "integer_bare": value.unit is None and "." not in value.text,
        "adjacent_metric": any("adjacent_after" in c.features or "adjacent_before" in c.features for c in typed_metric),
        "adjacent_phrase": any("adjacent_after" in c.features or "adjacent_before" in c.features for c in metric),
        "metric_in_sentence": any("sent=0" in c.features for c in typed_metric),
        "dataset_in_sentence": any("sent=0" in c.features for c in typed_dataset),
        "dataset_before": any("sent=0" not in c.features and "left" in c.features for c in typed_dataset),
        "by": any(t.lower_ == "by" for t in doc[max(sentence.start, tokens.start - 4) : tokens.start]),
        "gain_word": any(t.lower_ in GAIN_WORDS for t in doc[after : min(sentence.end, after + 3)]),
        "we": any(t.lower_ in OWN_WORDS for t in sentence),
        "result_verb": any(t.lemma_.lower() in RESULT_VERBS for t in sentence),
        "in_brackets": tokens.start > sentence.start and doc[tokens.start - 1].text == "(",
        "of_after": after < len(doc) and doc[after].lower_ == "of",
        "last_third": sent_n >= 2 * len(ctx.sentences) / 3,
        "first_sentence": sent_n == 0,
    }
    found.update({name: 1.0 for name, on in flags.items() if on})
    previous = doc[tokens.start - 1] if tokens.start > sentence.start else None
    following = doc[after] if after < sentence.end else None
    found[f"prev:{_word(previous)}"] = 1.0
    found[f"next:{_word(following)}"] = 1.0
    found[_bucket("values_in_sentence", len(ctx.values_by_sentence.get(sent_n, ())), (1, 2, 4))] = 1.0
    return found


@dataclass(frozen=True, slots=True)
class Choice:
    """What the model chose for one site, the chances it gave, and the claim's score."""

    claim: float  # p(the value is a result)
    metric: Candidate
    dataset: Candidate
    method: Candidate
    evidence: dict[str, float]  # what the score is computed from
    score: float


class AttachModel:
    """The fitted weights of each part: "claim" (a logistic model of whether a value is a result),
    "metric", "dataset" and "method" (a softmax over each site's candidates) and "score" (a
    logistic model over the others' chances: the chance that value, metric and dataset are all
    right). A missing weight counts 0."""

    def __init__(self, model: dict[str, Any]) -> None:
        self.weights: dict[str, dict[str, float]] = {part: dict(weights) for part, weights in model["weights"].items()}

    def _z(self, part: str, features: dict[str, float]) -> float:
        weights = self.weights.get(part, {})
        return sum(weights.get(name, 0.0) * value for name, value in features.items())

    def probability(self, part: str, features: dict[str, float]) -> float:
        return _sigmoid(self._z(part, features))

    def choose(self, part: Part, candidates: tuple[Candidate, ...]) -> tuple[Candidate, float, float]:
        """The candidate scored highest (the first on ties), its softmax chance and its margin
        over the next one (log odds; 10 when it stands alone)."""
        z = [self._z(part, c.features) for c in candidates]
        top = max(z)
        total = sum(math.exp(v - top) for v in z)
        best = z.index(top)
        second = max((v for n, v in enumerate(z) if n != best), default=top - 10.0)
        return candidates[best], 1.0 / total, min(top - second, 10.0)

    def attach(self, site: Site) -> Choice:
        claim = self.probability("claim", site.features)
        metric, p_metric, m_metric = self.choose("metric", site.metric)
        dataset, p_dataset, m_dataset = self.choose("dataset", site.dataset)
        method, _, _ = self.choose("method", site.method)
        evidence = {
            "bias": 1.0, "claim": _logit(claim), "metric": math.log(max(p_metric, 1e-6)), "dataset": math.log(max(p_dataset, 1e-6)),
            "metric_margin": m_metric, "dataset_margin": m_dataset,
            "metric_none": float(metric.option == "none"), "dataset_none": float(dataset.option == "none"),
            "metric_typed": float(metric.features.get("typed", 0.0) > 0 or "curated" in metric.features),
            "dataset_typed": float(dataset.features.get("typed", 0.0) > 0),
        }  # fmt: skip
        for name in ("adjacent_after", "adjacent_before", "curated", "source=chunk", "far", "list", "extends_typed"):
            if name in metric.features:
                evidence[f"metric:{name}"] = 1.0
        for name in ("preposition", "far", "respectively", "source=chunk", "label=DATASET", "dataset_noun", "none_in_sentence=0"):
            if name in dataset.features:
                evidence[f"dataset:{name}"] = 1.0
        for name in ("decimal", "unit=None", "unit=%", "integer_bare", "we", "result_verb", "in_brackets"):
            if name in site.features:
                evidence[f"value:{name}"] = 1.0
        score = self.probability("score", evidence) if "score" in self.weights else claim * p_metric * p_dataset
        return Choice(claim, metric, dataset, method, evidence, score)


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def _logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


@functools.lru_cache(maxsize=1)
def load_attacher() -> AttachModel | None:
    """The shipped model (cached), or None when it is not installed (claims then come from the rules)."""
    text = attacher_text()
    return None if text is None else AttachModel(json.loads(text))
