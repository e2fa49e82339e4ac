#!/usr/bin/env bash
# The measurements behind issue 9's closing note (ufold): bench sufficiency on airline and
# retail, normal and noisy, budgets 16k/32k/64k, for full, refold, the model-free ufold and its
# two ablations; then replay of the recorded tau2-sierra and mini-swe-agent runs under both
# price tables. Usage: OUT=dir TASKS=N $0
set -euo pipefail
OUT=${OUT:-bench-ufold}
TASKS=${TASKS:-15}
CF=${CF:-.venv/bin/contextfold}  # PYTHONPATH is honoured (e.g. a worktree on a shared venv)
mkdir -p "$OUT"
for domain in airline retail; do
  "$CF" bench sufficiency --domain "$domain" --tasks "$TASKS" --workers 1 --both \
    --budget 16000 --budget 32000 --budget 64000 \
    -s full -s refold -s "ufold folder=none" \
    -s "ufold folder=none extract=false" -s "ufold folder=none summarize=false" \
    --json "$OUT/sufficiency-$domain.json" --plot "$OUT/context-$domain.png" \
    > "$OUT/sufficiency-$domain.log" 2>&1
done
for data in tau2-sierra mini-swe-agent-dev; do
  for prices in default openai; do
    "$CF" replay "../shared/data/$data" -s full -s refold -s "ufold folder=none" \
      --prices "$prices" --json "$OUT/replay-$data-$prices.json" \
      > "$OUT/replay-$data-$prices.log" 2>&1
  done
done
