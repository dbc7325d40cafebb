"""Result claims: values an abstract reports, tied to a metric, a dataset, a method and a baseline.

`kg.results.values` finds the numbers, `kg.results.find` ties them to kg's entities in the parse
(at extraction time), `kg.results.link` resolves them to concepts, `kg.results.leaderboard` ranks
them by dataset and metric (`kg leaderboard`), with `kg.results.metrics` telling which way is better.
"""

# Results scored below this are kept in the data but left out of leaderboards and the page
# (chosen on the train half of kg's gold claims: bench/claims.py --split train --sweep).
MIN_RESULT_SCORE = 0.0
