#!/usr/bin/env bash
# The shared benchmark graph: ml_core + ml_other + nlp_ai from ../shared/corpus (34,916 records)
# built into /work/bench-data/graph-30k, with its extraction cache beside it so a rebuild is cheap.
#     bash bench/make_30k.sh [EXTRA kg build OPTIONS…]
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=${CORPUS:-../shared/corpus}
out=${OUT:-/work/bench-data/graph-30k}
mkdir -p "$(dirname "$out")"
.venv/bin/kg build "$corpus/papercopilot_ml_core.jsonl" "$corpus/papercopilot_ml_other.jsonl" \
    "$corpus/papercopilot_nlp_ai.jsonl" -o "$out" --cache "$(dirname "$out")/cache-30k" -j "${WORKERS:-2}" "$@"
