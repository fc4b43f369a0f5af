#!/usr/bin/env bash
# Whole-process wall time of every lesson (start-up, loading the embeddings, computing, printing),
# median of RUNS runs each, text and --json. The target is under 50 ms per lesson.
#   bash scripts/bench-lessons.sh [path/to/attn]   (default: build/attn; RUNS=30 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
attn=${1:-build/attn}
runs=${RUNS:-30}
limit_ms=50
[ -x "$attn" ] || { echo "bench-lessons: no executable at $attn (build first: bash scripts/build.sh)" >&2; exit 1; }
# The lessons are what `attn list` names (not every subcommand: list, tour and bench are not lessons).
lessons=$("$attn" list --json | jq -r '.[].name')
[ -n "$lessons" ] || { echo "bench-lessons: found no lessons in '$attn list --json'" >&2; exit 1; }

printf '%-14s %-6s %10s %10s %10s\n' lesson mode median_ms min_ms max_ms
status=0
for lesson in $lessons; do
  for mode in text json; do
    flag=(); [ "$mode" = json ] && flag=(--json)
    "$attn" "$lesson" "${flag[@]}" >/dev/null   # warm-up
    times=()
    for _ in $(seq "$runs"); do
      t0=$(date +%s%N)
      "$attn" "$lesson" "${flag[@]}" >/dev/null
      t1=$(date +%s%N)
      times+=($(( (t1 - t0) / 1000 )))
    done
    sorted=($(printf '%s\n' "${times[@]}" | sort -n))
    median=${sorted[$(( runs / 2 ))]}
    awk -v l="$lesson" -v m="$mode" -v med="$median" -v lo="${sorted[0]}" -v hi="${sorted[-1]}" \
      'BEGIN { printf "%-14s %-6s %10.2f %10.2f %10.2f\n", l, m, med / 1000, lo / 1000, hi / 1000 }'
    if [ "$median" -ge $(( limit_ms * 1000 )) ]; then status=1; fi
  done
done
[ $status -eq 0 ] && echo "every lesson under ${limit_ms} ms" || echo "some lesson took ${limit_ms} ms or more" >&2
exit $status
