"""Result claims: values an abstract reports, tied to a metric, a dataset, a task, a method and a baseline.

`kg.results.values` finds the numbers, `kg.results.find` ties them to kg's entities in the parse
(at extraction time, cached with the extraction), and `kg.results.link` resolves them to concepts;
`kg build` stores them on each paper node of graph.json (``results``). `kg.results.metrics` holds
the curated metric names (claim finding falls back on them) and which way each metric is better.
"""

# The score a claim needs to count in bench/claims.py's evaluation; graph.json keeps every claim
# with its score (chosen on the train half of kg's gold claims: bench/claims.py --split train --sweep).
MIN_RESULT_SCORE = 0.0
