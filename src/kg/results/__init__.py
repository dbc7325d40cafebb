"""Result claims: values an abstract reports, tied to a metric, a dataset, a task, a method and a baseline.

`kg.results.values` finds the numbers; `kg.results.find` ties them to kg's entities in the parse
(at extraction time, cached with the extraction) with the learned attacher of `kg.results.attach`
(logistic models over the value–candidate features of `kg.results.features` and the candidate
pools of `kg.results.pools`, weights in ``kg/models/claim-attacher.json``), or with the rules of
`kg.results.rules` where the weights are not installed; `kg.results.link` resolves them to concepts.
`kg build` stores them on each paper node of graph.json (``results``), states them in the RDF
(``kg:Result``, `kg.rdf.results`) and indexes them per dataset (``leaderboard.idx``,
`kg.leaderboard`, read by `kg leaderboard`); `kg.results.leaderboard` makes the
tables, ranked. `kg.results.metrics` holds the curated metric names (claim finding falls back on
them) and which way each metric is better.

This module imports nothing heavy: `kg leaderboard` reads the threshold from here.
"""

from __future__ import annotations

from importlib import resources

ATTACHER_FILE = "claim-attacher.json"

# The score a claim needs to be on a leaderboard (`kg leaderboard`, the page, schemas/queries/
# leaderboard.rq): the chance that its value, metric and dataset are all right. Claims scored
# lower stay in graph.json and the RDF with their score. Chosen on the dev half of kg's gold
# claims for precision: the best F0.5 there (bench/claims.py --split dev --choose P).
MIN_RESULT_SCORE = 0.45


def attacher_text() -> str | None:
    """The shipped claim attacher's weights (``kg/models/claim-attacher.json``), or None when
    this installation lacks them (claims then come from the rules)."""
    resource = resources.files("kg") / "models" / ATTACHER_FILE
    return resource.read_text(encoding="utf-8") if resource.is_file() else None
