#!/usr/bin/env bash
# ufold with the embedded folder in the sufficiency benchmark: airline tasks in order (both
# modes, 32k budget, beside full and the model-free variant) until MINUTES of wall time are
# spent, one JSON per task under OUT; then the means per strategy and mode over the tasks done.
#   OUT=/tmp/ufl MINUTES=15 bash benchmarks/ufold_local_sample.sh
set -uo pipefail
OUT=${OUT:-/tmp/ufold-local}
MINUTES=${MINUTES:-15}
CF=${CF:-.venv/bin/contextfold}
PY=${PY:-.venv/bin/python}
mkdir -p "$OUT"
end=$(( $(date +%s) + MINUTES * 60 ))
for t in $(seq 0 49); do
  now=$(date +%s)
  [ "$now" -ge "$end" ] && break
  timeout $(( end - now + 60 )) "$CF" bench sufficiency --domain airline --task "$t" --both \
    --budget 32000 --workers 1 -s full -s "ufold folder=none" -s "ufold folder=local" \
    --folder local --json "$OUT/t$t.json" > "$OUT/t$t.log" 2>&1 || rm -f "$OUT/t$t.json"
  echo "task $t: $(( $(date +%s) - now )) s"
done
"$PY" - "$OUT" <<'PY'
import collections, glob, json, sys
rows = collections.defaultdict(list)
for path in sorted(glob.glob(f"{sys.argv[1]}/t*.json")):
    for row in json.load(open(path)):
        rows[(row["noisy"], row["strategy"])].append(row)
keys = ["reward_mean", "lost_user_values", "lost_tool_values", "prompt_tokens",
        "peak_context_tokens", "fold_calls", "fold_rejected", "fold_cost_usd", "total_cost_usd"]
for (noisy, strategy), done in sorted(rows.items()):
    means = " ".join(f"{k}={sum(r[k] for r in done) / len(done):.4g}" for k in keys)
    print(f"{'noisy' if noisy else 'normal'} {strategy} tasks={len(done)} {means}")
PY
