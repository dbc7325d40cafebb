"""What every value of a parsed abstract shares when the claim attacher (`kg.results.attach`)
looks for its metric and dataset: the sentences, kg's typed spans, how far apart two tokens lie
in the parse (`DocContext`), and the pools of spans a value may take as its metric or its dataset
(`PoolOption`): kg's entities, the curated metric names the recognizer left unmarked, and noun
phrases that end in a metric word or read as a dataset's name, each with the features it has
whatever the value. `kg.results.features` pairs them with each value.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from spacy.tokens import Doc, Span, Token

from kg.results.metrics import direction, metric_names
from kg.results.rules import NOT_RESULT_METRICS

DATASET_PREPOSITIONS = frozenset("on in for across over from".split())
DATASET_NOUNS = frozenset("dataset datasets benchmark benchmarks corpus corpora set sets split challenge suite".split())
UNIT_WORDS = frozenset(("%", "percent", "points", "point", "pp", "db", "x", "×"))
MAX_TREE = 12  # parse-tree distances are clipped here (and cross-sentence pairs count as this)


@dataclass(slots=True)
class PoolOption:
    """A span some site may take as its metric or dataset, with what it is whatever the site."""

    span: Span
    sentence: int
    features: dict[str, float]


@dataclass
class DocContext:
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
    pools: dict[str, list[PoolOption]] = field(default_factory=dict)  # "METRIC" / "DATASET" → options

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


def doc_context(doc: Doc, spans: list[Span]) -> DocContext:
    parsed = doc.has_annotation("DEP")
    sentences = list(doc.sents) if parsed or doc.has_annotation("SENT_START") else [doc[:]]
    by_type: dict[str, list[Span]] = {label: sorted((s for s in spans if s.label_ == label), key=lambda s: (s.start, s.end)) for label in ("METRIC", "DATASET", "TASK", "METHOD")}
    ctx = DocContext(doc, parsed, sentences, spans, by_type)
    ctx.sent_of = [0] * len(doc)
    for n, sent in enumerate(sentences):
        for i in range(sent.start, sent.end):
            ctx.sent_of[i] = n
    ctx.keys = Counter(fold(s.text) for s in spans)
    ctx.own = {fold(s.text) for s in by_type["METHOD"] if s._.kg_role == "proposed"}
    chunks = list(doc.noun_chunks) if parsed else []
    ctx.pools = {"METRIC": _metric_pool(ctx, chunks), "DATASET": _dataset_pool(ctx, chunks)}
    return ctx


def _add(pool: dict[tuple[int, int], PoolOption], ctx: DocContext, span: Span, features: dict[str, float]) -> None:
    """Add a span to a pool, or its features to the same span's entry."""
    if not len(span) or not any(c.isalnum() for c in span.text):
        return
    key = (span.start, span.end)
    if key in pool:
        pool[key].features.update(features)
    else:
        pool[key] = PoolOption(span, ctx.sentence(span.start), dict(features))


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
        features = {"source=chunk": 1.0, bucket("chunk_words", len(span), (1, 2, 3)): 1.0}
        if start == first:
            features["chunk_longest"] = 1.0
        if doc[start].pos_ == "ADJ":
            features["chunk_adjective_first"] = 1.0
        yield span, features


def _metric_pool(ctx: DocContext, chunks: list[Span]) -> list[PoolOption]:
    pool: dict[tuple[int, int], PoolOption] = {}
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


def _dataset_pool(ctx: DocContext, chunks: list[Span]) -> list[PoolOption]:
    pool: dict[tuple[int, int], PoolOption] = {}
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


def bucket(name: str, value: int, edges: Iterable[int]) -> str:
    """``name=k`` for the first edge k ≥ value, ``name>last`` past them."""
    last = 0
    for edge in edges:
        if value <= edge:
            return f"{name}={edge}"
        last = edge
    return f"{name}>{last}"
