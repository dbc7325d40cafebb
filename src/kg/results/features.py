"""The features of the learned claim attacher (`kg.results.attach`): which numbers could be
results, and which metric, dataset and method each one could belong to.

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

The spans a value may take come from the doc's pools (`kg.results.pools`); the rules' claims
(`kg.results.rules.rule_claims`) are features too.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from spacy.tokens import Doc, Span, Token

from kg.results.pools import MAX_TREE, UNIT_WORDS, DocContext, PoolOption, bucket, doc_context, fold
from kg.results.rules import BASELINE_CUES, BETWEEN_METRIC_AND_VALUE, GAIN_WORDS, OWN_WORDS, rule_claims, verb_and_subject
from kg.results.values import Value, find_values

Option = Literal["span", "none", "proposed", "baseline"]

RESULT_VERBS = frozenset("achieve reach obtain attain outperform surpass improve yield boost reduce score set exceed record deliver gain".split())


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
    ctx = doc_context(doc, spans)
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
            features[bucket("rule_score", int(rule.score * 20), (12, 14, 15, 16, 17))] = 1.0
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


def _adjacent_after(ctx: DocContext, after: int, span: Span) -> bool:
    """The span follows the value and its unit ("92.3 % accuracy", "28.4 BLEU", "3.1 (top-1 error)")."""
    return after <= span.start <= after + 1 and all(t.lower_ in ("of", "(", "the") for t in ctx.doc[after : span.start])


def _adjacent_before(ctx: DocContext, tokens: Span, span: Span) -> bool:
    """The span comes shortly before the value through words like "of", "to", "=" ("an accuracy of 92.3 %")."""
    return span.end <= tokens.start and tokens.start - span.end <= 5 and all(
        t.lower_ in BETWEEN_METRIC_AND_VALUE or t.is_punct for t in ctx.doc[span.end : tokens.start]
    )


def _relation(ctx: DocContext, tokens: Span, option: PoolOption, sent_n: int, same_type: list[PoolOption]) -> dict[str, float]:
    """Where a candidate stands relative to the value: sentence, side, distances, what lies between.
    `same_type`: the candidates of the same pool in the value's sentence."""
    span = option.span
    found: dict[str, float] = {}
    offset = option.sentence - sent_n
    found[bucket("sent", offset, (-3, -2, -1, 0, 1))] = 1.0
    left = span.end <= tokens.start
    found["left" if left else "right"] = 1.0
    gap = (tokens.start - span.end) if left else max(0, span.start - tokens.end)
    if offset == 0:
        tree = ctx.distance(tokens.root, span.root)
        found[bucket("tree", tree, (1, 2, 3, 4, 5, 6, 8, 11))] = 1.0
        found["tree"] = tree / MAX_TREE
        found[bucket("gap", gap, (0, 1, 2, 4, 8, 16))] = 1.0
        lo, hi = (span.end, tokens.start) if left else (tokens.end, span.start)
        between_values = sum(1 for i in ctx.values_by_sentence.get(sent_n, ()) if lo <= i < hi)
        found[bucket("values_between", between_values, (0, 1, 2))] = 1.0
        typed = [o for o in same_type if "typed" in o.features and o.features["typed"] > 0 or "curated" in o.features]
        between_typed = sum(1 for o in typed if o is not option and o.span.start >= lo and o.span.end <= hi)
        found[bucket("typed_between", between_typed, (0, 1))] = 1.0
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
    found[bucket("named", ctx.keys[fold(span.text)], (0, 1, 2, 3))] = 1.0
    return found


def _metric_candidates(ctx: DocContext, value: Value, tokens: Span, after: int, sent_n: int) -> Iterable[Candidate]:
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
    none = {"bias": 1.0, "none": 1.0, bucket("none_in_sentence", count, (0, 1, 2)): 1.0}
    if value.unit is not None:
        none[f"none_unit={value.unit}"] = 1.0
    yield Candidate("none", None, none)


def _dataset_candidates(ctx: DocContext, tokens: Span, sent_n: int) -> Iterable[Candidate]:
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
    none = {"bias": 1.0, "none": 1.0, bucket("none_in_sentence", count, (0, 1, 2)): 1.0, bucket("none_earlier", earlier, (0, 1, 2)): 1.0}
    yield Candidate("none", None, none)


def _governing_subject(ctx: DocContext, token: Token) -> tuple[int, int, bool] | None:
    """(first, last) token of the subject of the verb the value hangs from, and whether it is
    "we", "our model" and the like; None without one."""
    found = verb_and_subject(token) if ctx.parsed else None
    if found is None:
        return None
    verb, subject = found
    if subject.lower_ in ("which", "that", "who") and verb.dep_ == "relcl":
        return verb.head.i, verb.head.i, False
    words = {t.lower_ for t in subject.subtree}
    lo, hi = min(t.i for t in subject.subtree), max(t.i for t in subject.subtree)
    return lo, hi, bool(words & OWN_WORDS)


def _method_candidates(ctx: DocContext, tokens: Span, sent_n: int) -> Iterable[Candidate]:
    doc = ctx.doc
    subject = _governing_subject(ctx, tokens.root)
    sentence = ctx.sentences[sent_n]
    before = doc[max(sentence.start, tokens.start - 2) : tokens.start]
    from_value = any(t.lower_ == "from" for t in before)
    methods = [PoolOption(s, ctx.sentence(s.start), {}) for s in ctx.by_type["METHOD"] if ctx.sentence(s.start) == sent_n]
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
    count_feature = bucket("methods_in_sentence", len(methods), (0, 1, 2))
    unnamed: tuple[Option, ...] = ("proposed", "baseline")
    for choice in unnamed:
        own = {"bias": 1.0, str(choice): 1.0, f"{choice}_{count_feature}": 1.0}
        own.update({f"{choice}_{name}": 1.0 for name, on in shared.items() if on})
        yield Candidate(choice, None, own)


def _nearest_task(ctx: DocContext, tokens: Span, sent_n: int) -> Span | None:
    tasks = [s for s in ctx.by_type["TASK"] if ctx.sentence(s.start) == sent_n]
    close = [(ctx.distance(tokens.root, s.root), abs(s.start - tokens.start), n) for n, s in enumerate(tasks)]
    close = [c for c in close if c[0] <= 8]
    return tasks[min(close)[2]] if close else None


def _claim_features(
    ctx: DocContext, value: Value, tokens: Span, after: int, sent_n: int, metric: tuple[Candidate, ...], dataset: tuple[Candidate, ...]
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
    found[bucket("values_in_sentence", len(ctx.values_by_sentence.get(sent_n, ())), (1, 2, 4))] = 1.0
    return found
