"""The rules of result claims: in one parsed abstract, each value linked to a metric, a dataset,
a task, the method credited with it and the baseline it beats, from kg's entities and the
dependency parse. `rule_claims` is what `kg.results.find.find_claims` returns where the learned
attacher's weights are not installed, and the evidence the attacher's features read
(`kg.results.features`); the word lists here are shared with them.

`rule_claims`: a value (`kg.results.values`) becomes a claim when a metric or a dataset in its
sentence is tied to it; the score says how closely. Links, cheapest first:

* a metric right after the value ("92.3 % accuracy", "28.4 BLEU") or right before it through
  "of", "to", "=" ("an accuracy of 92.3 %", "reduces WER to 5.2"); else the nearest metric in the
  parse tree of the sentence, within `MAX_TREE_DISTANCE` arcs;
* the dataset nearest in the parse tree; values listed against as many datasets ("92.3 % and
  88.1 % on A and B") are paired in order;
* the method: the subject of the verb the value hangs from when it names a method ("ResNet-50
  reaches 76.1 %": the baseline's own number), else the paper's own; "from A to B" credits A to the
  baseline; the baseline is the method after "over", "than", "vs", "compared to" or the object of
  "outperforms".
Without a parser (kg's blank pipeline) tree distances fall back to word distances.
"""

from __future__ import annotations

from dataclasses import dataclass

from spacy.tokens import Doc, Span, Token

from kg.model import ClaimKind
from kg.results.metrics import metric_names
from kg.results.values import Value, find_values

MAX_TREE_DISTANCE = 6
CARRY_DATASET = True  # a sentence naming no dataset takes the last one of the sentence before
GAIN_WORDS = frozenset(
    """improvement improvements improve improves improving gain gains increase increases increased boost boosts
    reduction reductions reduce reduces reduced decrease decreases decreased higher lower better fewer more less
    relative absolute margin drop drops lift speedup speed-up faster smaller outperforming outperforms over""".split()
)
BETWEEN_METRIC_AND_VALUE = frozenset(
    """of to at by = : is was are were reaches reached reaching achieves achieved achieving attains obtaining obtains
    score scores rate a an the up over nearly about approximately around only just ( , from improvement improvements
    gain gains increase reduction drop boost improved improves improving reduced reduces increased yields yielding
    with than below above under surpassing exceeding""".split()
)
BASELINE_CUES = frozenset("over than vs vs. versus against compared relative beats beating outperforms outperforming outperform surpasses surpassing".split())
OWN_WORDS = frozenset("we our ours us proposed this".split())
# Measures of a model's size or cost, not of its results: never a claim's metric.
NOT_RESULT_METRICS = frozenset({"flops", "flop", "gflops", "macs", "params", "parameters", "parameter count", "parameter counts", "model size"})


@dataclass(frozen=True, slots=True)
class DocClaim:
    """A claim in doc character offsets; links are (start, end) spans, None where unknown."""

    value: Value
    kind: ClaimKind
    metric: tuple[int, int] | None
    dataset: tuple[int, int] | None
    task: tuple[int, int] | None
    method: tuple[int, int] | None
    proposed: bool
    baseline: tuple[int, int] | None
    score: float
    sentence: tuple[int, int]


def span_chars(span: Span) -> tuple[int, int]:
    return span.start_char, span.end_char


class Sentence:
    """One sentence's entities by type, and distances between tokens (tree, else words)."""

    def __init__(self, doc: Doc, sent: Span, spans: list[Span], parsed: bool) -> None:
        self.doc, self.sent, self.parsed = doc, sent, parsed
        inside = [s for s in spans if s.start >= sent.start and s.end <= sent.end]
        self.by_type = {label: [s for s in inside if s.label_ == label] for label in ("METRIC", "DATASET", "TASK", "METHOD")}
        taken = {i for s in inside for i in range(s.start, s.end)}
        # curated metric names the recognizer left unmarked
        for match in metric_names().finditer(sent.text):
            extra = doc.char_span(sent.start_char + match.start(), sent.start_char + match.end(), alignment_mode="contract")
            if extra is not None and len(extra) and not taken.intersection(range(extra.start, extra.end)):
                self.by_type["METRIC"].append(extra)
        self.by_type["METRIC"].sort(key=lambda s: s.start)

    def distance(self, a: Token, b: Token) -> int:
        if not self.parsed:
            return abs(a.i - b.i)
        up_a = [a, *a.ancestors]
        depth = {t.i: n for n, t in enumerate(up_a)}
        for n, t in enumerate([b, *b.ancestors]):
            if t.i in depth:
                return depth[t.i] + n
        return abs(a.i - b.i) + MAX_TREE_DISTANCE  # different trees (a bad sentence split)


def _unit_end(doc: Doc, tokens: Span, value: Value) -> int:
    """Index of the first token after the value and its unit."""
    end = tokens.end
    if value.unit and end < len(doc) and doc[end].lower_ in ("%", "percent", "points", "point", "pp", "db", "x", "×"):
        end += 1
    return end


def _metric(sentence: Sentence, tokens: Span, after: int) -> tuple[Span | None, int]:
    """The metric tied to the value and how: 0 right after, 1 right before, 2 through the tree."""
    best, best_cost = None, None
    head = tokens.root
    for metric in sentence.by_type["METRIC"]:
        if after <= metric.start <= after + 1 and all(t.lower_ in ("of", "(", "the") for t in sentence.doc[after : metric.start]):
            cost = 0.0
        elif metric.end <= tokens.start and tokens.start - metric.end <= 5 and all(
            t.lower_ in BETWEEN_METRIC_AND_VALUE or t.is_punct for t in sentence.doc[metric.end : tokens.start]
        ):
            cost = 1 + (tokens.start - metric.end) / 10
        else:
            d = sentence.distance(head, metric.root)
            if d > MAX_TREE_DISTANCE:
                continue
            cost = 2 + d + abs(metric.start - tokens.start) / 100
        if best_cost is None or cost < best_cost:
            best, best_cost = metric, cost
    return best, (-1 if best_cost is None else int(best_cost))


def _nearest(sentence: Sentence, label: str, token: Token) -> Span | None:
    candidates = [(sentence.distance(token, s.root), abs(s.start - token.i), s) for s in sentence.by_type[label]]
    candidates = [c for c in candidates if c[0] <= MAX_TREE_DISTANCE + 2]
    return min(candidates, key=lambda c: (c[0], c[1]))[2] if candidates else None


def _previous_dataset(doc: Doc, spans: list[Span], sent: Span) -> Span | None:
    """The dataset the sentence before names last, if any: results often follow the sentence
    that says what they were measured on."""
    if sent.start == 0:
        return None
    before = doc[sent.start - 1].sent
    named = [s for s in spans if s.label_ == "DATASET" and s.start >= before.start and s.end <= before.end]
    return named[-1] if named else None


def verb_and_subject(token: Token) -> tuple[Token, Token] | None:
    """The nearest verb or auxiliary at or above `token` that has a nominal subject, and that
    subject; None when no verb above it has one."""
    for verb in [token, *token.ancestors]:
        if verb.pos_ in ("VERB", "AUX"):
            subjects = [c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")]
            if subjects:
                return verb, subjects[0]
    return None


def _subject_method(sentence: Sentence, token: Token) -> tuple[Span | None, bool | None]:
    """The method named by the subject of the verb the value hangs from: (span, proposed) or
    (None, True) for "we / our model", (None, None) when the parse names neither."""
    found = verb_and_subject(token)
    if found is None:
        return None, None
    verb, subject = found
    if subject.lower_ in ("which", "that", "who") and verb.dep_ == "relcl":
        # "ResNet-50, which reaches 76.1 %": the noun the clause describes
        words, lo, hi = {verb.head.lower_}, verb.head.i, verb.head.i
    else:
        words = {t.lower_ for t in subject.subtree}
        lo, hi = min(t.i for t in subject.subtree), max(t.i for t in subject.subtree)
    if words & OWN_WORDS:
        return None, True
    for method in sentence.by_type["METHOD"]:
        if method.start >= lo and method.end <= hi + 1:
            return method, method._.kg_role == "proposed"
    return None, None


def baseline_of(sentence: Sentence, token: Token, exclude: Span | None) -> Span | None:
    doc = sentence.doc
    cued = []
    for method in sentence.by_type["METHOD"]:
        if method is exclude or method._.kg_role == "proposed":
            continue
        window = {t.lower_ for t in doc[max(sentence.sent.start, method.start - 3) : method.start]}
        if window & BASELINE_CUES or (sentence.parsed and method.root.dep_ == "dobj" and method.root.head.lemma_ in ("outperform", "surpass", "beat", "exceed")):
            cued.append(method)
    return min(cued, key=lambda m: sentence.distance(token, m.root)) if cued else None


def claim_kind(doc: Doc, tokens: Span, after: int, value: Value) -> ClaimKind:
    if value.signed or value.unit == "x":
        return "improvement"
    left = doc[max(tokens.sent.start, tokens.start - 4) : tokens.start]
    if any(t.lower_ == "by" for t in left):
        return "improvement"
    right = doc[after : min(tokens.sent.end, after + 3)]
    if any(t.lower_ in GAIN_WORDS for t in right):
        return "improvement"
    return "absolute"


def rule_claims(doc: Doc, spans: list[Span] | None = None) -> list[DocClaim]:
    """Every result claim the rules find in `doc` (kg's entities from ``doc.spans["kg"]`` unless `spans`)."""
    spans = list(doc.spans.get("kg", [])) if spans is None else spans
    parsed = doc.has_annotation("DEP")
    named = {i for s in spans for i in range(s.start, s.end)}
    sentences: dict[int, Sentence] = {}
    found: list[tuple[DocClaim, int, int]] = []  # claim, sentence start, value token
    for value in find_values(doc.text):
        tokens = doc.char_span(value.start, value.end, alignment_mode="expand")
        if tokens is None or not len(tokens) or any(t.i in named for t in tokens):
            continue  # part of a name ("ResNet-50", "CIFAR-10")
        sent = tokens.sent
        sentence = sentences.get(sent.start) or sentences.setdefault(sent.start, Sentence(doc, sent, spans, parsed))
        after = _unit_end(doc, tokens, value)
        metric, how = _metric(sentence, tokens, after)
        if metric is not None and metric.text.lower() in NOT_RESULT_METRICS:
            continue
        if value.unit is None and "." not in value.text and how not in (0, 1):
            continue  # a bare integer is a result only beside its metric ("28 BLEU", "F1 of 90")
        dataset = _nearest(sentence, "DATASET", tokens.root)
        carried = False
        if dataset is None and metric is not None and CARRY_DATASET:
            dataset = _previous_dataset(doc, spans, sent)  # "We evaluate on KITTI. ... reaches 81.2 %."
            carried = dataset is not None
        if metric is None and dataset is None:
            continue
        task = _nearest(sentence, "TASK", tokens.root)
        method, proposed = _subject_method(sentence, tokens.root) if parsed else (None, None)
        baseline = baseline_of(sentence, tokens.root, method)
        kind = claim_kind(doc, tokens, after, value)
        before = doc[max(sent.start, tokens.start - 2) : tokens.start]
        if any(t.lower_ == "from" for t in before) and kind == "absolute":
            method, proposed = baseline, False  # "from 57 % to 82 %": the first is the baseline's
        score = 0.45 + (0.3, 0.25, 0.1, 0.0)[min(how, 2) if how >= 0 else 3] + (0.05 if carried else 0.15 if dataset is not None else 0.0)
        score += 0.05 if value.unit else 0.0
        claim = DocClaim(
            value=value, kind=kind,
            metric=span_chars(metric) if metric is not None else None,
            dataset=span_chars(dataset) if dataset is not None else None,
            task=span_chars(task) if task is not None else None,
            method=span_chars(method) if method is not None else None,
            proposed=True if proposed is None else proposed,
            baseline=span_chars(baseline) if baseline is not None and baseline is not method else None,
            score=round(min(score, 1.0), 4),
            sentence=(sent.start_char, sent.end_char),
        )
        found.append((claim, sent.start, tokens.root.i))
    return _pair_respectively(doc, found, sentences)


def _pair_respectively(doc: Doc, found: list[tuple[DocClaim, int, int]], sentences: dict[int, Sentence]) -> list[DocClaim]:
    """Values listed against as many datasets in one sentence take the datasets in order."""
    claims = []
    by_sentence: dict[int, list[DocClaim]] = {}
    for claim, sent_start, _ in found:
        by_sentence.setdefault(sent_start, []).append(claim)
    for sent_start, group in by_sentence.items():
        datasets = sentences[sent_start].by_type["DATASET"]
        if len(group) >= 2 and len(datasets) == len(group) and len({c.dataset for c in group}) < len(group):
            group = [
                DocClaim(c.value, c.kind, c.metric, span_chars(d), c.task, c.method, c.proposed, c.baseline, c.score, c.sentence)
                for c, d in zip(group, datasets, strict=True)
            ]
        claims.extend(group)
    return claims
