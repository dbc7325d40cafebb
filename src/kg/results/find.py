"""Result claims in one parsed abstract: each value linked to a metric, a dataset, a task, the
method credited with it and the baseline it beats, from kg's entities and the dependency parse.

`find_claims(doc)` runs after kg's components (it reads ``doc.spans["kg"]`` with their types and
roles) and returns claims in the doc's character offsets; `kg.extract.papers` maps them onto the
abstract. It uses the learned attachment (`kg.results.attach`, `learned_claims`) when its weights
are installed, else the rules (`kg.results.rules.rule_claims`); ``bench/claims.py`` measures both.

`learned_claims`: every value the attacher scores at `STORE_MIN_SCORE` or more is a claim, with
the metric, dataset and method it chose and its score (the chance that value, metric and dataset
are right); the task, baseline and kind come from the rules' helpers.
"""

from __future__ import annotations

from spacy.tokens import Doc, Span

from kg.results.attach import AttachModel, load_attacher
from kg.results.features import sites
from kg.results.rules import DocClaim, Sentence, baseline_of, claim_kind, rule_claims, span_chars

# The learned attacher's claims scored below this are not kept at all: almost surely not results
# (a count, a setting), they would only fill graph.json; the leaderboard's own threshold is
# `kg.results.MIN_RESULT_SCORE`.
STORE_MIN_SCORE = 0.05


def find_claims(doc: Doc, spans: list[Span] | None = None) -> list[DocClaim]:
    """Every result claim of `doc` (kg's entities from ``doc.spans["kg"]`` unless `spans`): the
    learned attacher's when it is installed, else the rules'."""
    model = load_attacher()
    return rule_claims(doc, spans) if model is None else learned_claims(doc, model, spans)


def learned_claims(doc: Doc, model: AttachModel, spans: list[Span] | None = None) -> list[DocClaim]:
    """The claims `model` (`kg.results.attach.AttachModel`) finds in `doc`, in text order."""
    spans = list(doc.spans.get("kg", [])) if spans is None else spans
    claims = []
    sentences: dict[int, Sentence] = {}
    for site in sites(doc, spans):
        choice = model.attach(site)
        if choice.score < STORE_MIN_SCORE:
            continue
        sent = site.sentence
        sentence = sentences.get(sent.start) or sentences.setdefault(sent.start, Sentence(doc, sent, spans, doc.has_annotation("DEP")))
        method = choice.method.span
        proposed = choice.method.option == "proposed" or (method is not None and method._.kg_role == "proposed")
        kind = claim_kind(doc, site.tokens, site.after, site.value)
        baseline = baseline_of(sentence, site.tokens.root, method)
        claims.append(
            DocClaim(
                value=site.value, kind=kind,
                metric=choice.metric.chars, dataset=choice.dataset.chars,
                task=span_chars(site.task) if site.task is not None else None,
                method=choice.method.chars, proposed=proposed,
                baseline=span_chars(baseline) if baseline is not None and baseline is not method else None,
                score=round(choice.score, 4), sentence=(sent.start_char, sent.end_char),
            )
        )  # fmt: skip
    return claims
