#!/usr/bin/env bash
# Whole-process wall time of every lesson (start-up, loading the embeddings, computing, printing),
# median of RUNS runs each, text and --json. The target is under 50 ms per lesson, and under 1 s for
# exercise 3.3's parameter count at GPT-2's size (`--step num_params`, which runs no forward pass).
#   bash scripts/bench-lessons.sh [path/to/attn]   (default: build/attn; RUNS=30 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
attn=${1:-build/attn}
runs=${RUNS:-30}
[ -x "$attn" ] || { echo "bench-lessons: no executable at $attn (build first: bash scripts/build.sh)" >&2; exit 1; }
# The lessons are what `attn list` names (not every subcommand: list, tour and bench are not lessons).
lessons=$("$attn" list --json | jq -r '.[].name')
[ -n "$lessons" ] || { echo "bench-lessons: found no lessons in '$attn list --json'" >&2; exit 1; }

status=0
# measure LABEL MODE LIMIT_MS ARGS...: one table row; status 1 when the median reaches the limit.
measure() {
  local label=$1 mode=$2 limit_ms=$3
  shift 3
  local flag=()
  [ "$mode" = json ] && flag=(--json)
  "$attn" "$@" "${flag[@]}" >/dev/null   # warm-up
  local times=() t0 t1
  for _ in $(seq "$runs"); do
    t0=$(date +%s%N)
    "$attn" "$@" "${flag[@]}" >/dev/null
    t1=$(date +%s%N)
    times+=($(( (t1 - t0) / 1000 )))
  done
  local sorted=($(printf '%s\n' "${times[@]}" | sort -n))
  local median=${sorted[$(( runs / 2 ))]}
  awk -v l="$label" -v m="$mode" -v med="$median" -v lo="${sorted[0]}" -v hi="${sorted[-1]}" -v lim="$limit_ms" \
    'BEGIN { printf "%-22s %-6s %10.2f %10.2f %10.2f %9d\n", l, m, med / 1000, lo / 1000, hi / 1000, lim }'
  if [ "$median" -ge $(( limit_ms * 1000 )) ]; then status=1; fi
}

printf '%-22s %-6s %10s %10s %10s %9s\n' lesson mode median_ms min_ms max_ms limit_ms
for lesson in $lessons; do
  for mode in text json; do measure "$lesson" "$mode" 50 "$lesson"; done
done
for mode in text json; do
  measure "exercise 3.3" "$mode" 1000 mha --random 1024x768 --d-out 768 --heads 12 --step num_params
done
[ $status -eq 0 ] && echo "every run under its limit" || echo "some run took its limit or more" >&2
exit $status
