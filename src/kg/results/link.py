"""Result claims resolved to concepts: each paper's `LocalClaim`s, whose links are spans of its
abstract, become `Result`s naming the concepts the resolved mentions at those spans belong to.

A link keeps the abstract's words even where no mention of the right type stands (a metric name
the recognizer missed, a mention dropped for its low score, a noun phrase the attacher chose); its
concept is then the concept of that type one of whose labels has the same key
(`kg.text.vocab.normalize_key`: "ImageNet-1k" and "ImageNet-1K" are one), else None. A claim
credited to the paper's own method takes the name of the method the paper proposes, when kg found
one (the proposed METHOD concept it mentions most), else "(proposed)".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from kg.model import Concept, LocalClaim, Mention, Paper, PaperEntities, Result
from kg.results.values import number_of
from kg.text.vocab import normalize_key

PROPOSED = "(proposed)"
BASELINE = "(baseline)"
_LINK_TYPES = {"metric": "METRIC", "dataset": "DATASET", "task": "TASK", "method": "METHOD", "baseline": "METHOD"}


def own_method(entities: PaperEntities, concepts: dict[str, Concept]) -> tuple[str, str] | None:
    """(label, concept id) of the method the paper proposes, mentioned most (first on ties), or None."""
    counts = Counter(m.concept for m in entities.mentions if m.role == "proposed" and m.label == "METHOD")
    if not counts:
        return None
    first = {m.concept: m.start for m in reversed(entities.mentions) if m.where == "abstract"}
    best = min(counts, key=lambda c: (-counts[c], first.get(c, 0)))
    concept = concepts.get(best)
    return (concept.pref_label if concept else best), best


def concept_keys(concepts: Sequence[Concept]) -> dict[tuple[str, str], str]:
    """(type, key of a label) → concept id, for the types a claim links to; the first id (sorted) on a clash."""
    found: dict[tuple[str, str], str] = {}
    for concept in sorted(concepts, key=lambda c: c.id):
        if concept.type in ("METRIC", "DATASET", "TASK", "METHOD"):
            for label in (concept.pref_label, *concept.alt_labels):
                found.setdefault((concept.type, normalize_key(label)), concept.id)
    return found


def link_claims(
    paper: Paper, claims: Sequence[LocalClaim], entities: PaperEntities, concepts: dict[str, Concept], keys: dict[tuple[str, str], str] | None = None
) -> tuple[Result, ...]:
    """One paper's claims as `Result`s, in text order; `keys` (`concept_keys`) links words no
    mention stands on."""
    if not claims:
        return ()
    at: dict[tuple[int, int], Mention] = {}
    for mention in entities.mentions:
        if mention.where == "abstract":  # a claim's links are spans of the abstract
            at.setdefault((mention.start, mention.end), mention)
    own = own_method(entities, concepts)

    def link(span: tuple[int, int] | None, field: str) -> tuple[str | None, str | None]:
        if span is None:
            return None, None
        mention = at.get(span)
        words = paper.abstract[span[0] : span[1]]
        if mention is not None and mention.label == _LINK_TYPES[field]:
            return words, mention.concept
        return words, (keys or {}).get((_LINK_TYPES[field], normalize_key(words)))

    results = []
    for claim in claims:
        metric, dataset, task, baseline = (link(getattr(claim, f), f) for f in ("metric", "dataset", "task", "baseline"))
        method, method_concept = link(claim.method, "method")
        if method is None:
            method, method_concept = (own if own else (PROPOSED, None)) if claim.proposed else (BASELINE, None)
        results.append(
            Result(
                paper_id=paper.id, start=claim.start, end=claim.end, value=claim.value,
                number=number_of(claim.value), unit=claim.unit, kind=claim.kind,
                metric=metric[0], metric_concept=metric[1], dataset=dataset[0], dataset_concept=dataset[1],
                task=task[0], task_concept=task[1], method=method, method_concept=method_concept, proposed=claim.proposed,
                baseline=baseline[0], baseline_concept=baseline[1], score=claim.score, sent_start=claim.sent_start, sent_end=claim.sent_end,
            )
        )
    return tuple(sorted(results, key=lambda r: (r.start, r.end)))


def link_results(
    papers: Sequence[Paper], claims: Sequence[Sequence[LocalClaim]], entities: Sequence[PaperEntities], concepts: Sequence[Concept]
) -> tuple[tuple[Result, ...], ...]:
    """Every paper's results (parallel to `papers`)."""
    by_id = {concept.id: concept for concept in concepts}
    keys = concept_keys(concepts)
    return tuple(link_claims(p, c, e, by_id, keys) for p, c, e in zip(papers, claims, entities, strict=True))
