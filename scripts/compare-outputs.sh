#!/usr/bin/env bash
# Every command of a fixed list through an attn build, each one's stdout, stderr and exit status kept in a
# file of its own: for a refactoring that must not change a byte of output (issue 27's "Keep": every
# lesson, seeds, --text, --random, --model, kv-cache, the tour, text and JSON, pages and figures).
#   bash scripts/compare-outputs.sh capture DIR [ATTN]     writes DIR/NNN.out (ATTN: default build/attn)
#   bash scripts/compare-outputs.sh compare DIR [ATTN]     runs them again and diffs against DIR
# Capture with the commit before the change, compare with the one after. Not part of the tests: the
# golden data already hold the numbers; this holds the words, the layout and the errors too.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
dir=${2:-}
attn=$(realpath "${3:-build/attn}")
if [ -z "$mode" ] || [ -z "$dir" ] || { [ "$mode" != capture ] && [ "$mode" != compare ]; }; then
  echo "usage: bash scripts/compare-outputs.sh capture|compare DIR [ATTN]" >&2
  exit 2
fi
models=tests/golden/models
inputs=tests/golden/inputs
commands=()
for lesson in simple all-tokens trainable causal dropout mha-wrapper mha heads gqa kv-cache; do
  commands+=("$lesson" "$lesson --json" "$lesson --quiet" "$lesson --no-explain --color always --heatmap always")
  commands+=("$lesson --format html" "$lesson --help")
  # the same in Russian: the lessons' words, the renderers' words and the notebooks
  commands+=("$lesson --lang ru" "$lesson --lang ru --json" "$lesson --lang ru --format html")
  commands+=("$lesson --lang ru --color always --heatmap always" "$lesson --format py" "$lesson --lang ru --format ipynb")
done
commands+=(
  "trainable --seed 7" "trainable --seed 123 --d-out 3 --json" "trainable --query 4"
  "causal --seed 7 --dropout 0.5" "causal --batch 3 --json" "causal --qkv-bias"
  "dropout --dropout 0.2" "dropout --dropout-rng mkl --json" "dropout --seed 9"
  "mha-wrapper --heads 3 --d-out 1" "mha --heads 4 --d-out 8 --json" "mha --batch 1 --seed 5"
  "gqa --heads 4 --kv-groups 2 --d-out 8" "gqa --kv-cache" "gqa --kv-cache --emb-dim 4096 --heads 32 --kv-groups 8 --json"
  "kv-cache --prompt 3" "kv-cache --estimate" "kv-cache --estimate --json" "kv-cache --heads 2 --d-out 4 --json"
  "simple --random 12x5" "causal --random 20x3 --json" "mha --random 9x16 --heads 4 --d-out 8"
  "simple --text 'The quick brown fox'" "causal --text 'Attention is all you need' --d-in 4 --json"
  "mha --text 'Hello, world!' --embedding-seed 7" "simple --input $inputs/eight_d2.csv" "causal --input $inputs/four_d5.json --json"
  "simple --model $models/tiny-f32" "causal --model $models/tiny-f16 --head 1 --json" "mha --model $models/tiny-bf16 --layer 1"
  "mha --model $models/tiny-f32 --text 'Your journey starts' --json" "trainable --model $models/tiny-f32 --head 0"
  "causal --format svg --step causal_attn_weights" "mha --format svg --step attn_weights" "trainable --format svg --step keys"
  "mha --step context_vecs,num_params --json" "causal --step masked" "tour --quiet" "tour --json" "tour"
  "list" "list --json" "--help" "--version"
  "simple --heads 2" "causal --query 6" "mha --d-out 5 --heads 2" "simple --input /nonexistent.json" "simple --step nope"
  "simple --max-memory 1M" "simple --max-memory -1" "gqa --emb-dim 64" "simple --text ''" "tour --seed 7"
  "list --lang ru" "list --lang ru --json" "tour --lang ru" "tour --lang ru --format html" "tour --format svg"
  "heads --model $models/tiny-f32 --lang ru" "heads --model $models/tiny-f32 --format html"
  "heads --model $models/tiny-f32 --format svg --step attn_weights_layer_1" "mha --model $models/tiny-f32 --lang ru --format html"
  "simple --text 'Привет, мир' --lang ru" "causal --text 'Every effort moves you' --lang ru --format py"
  "kv-cache --estimate --lang ru" "gqa --kv-cache --lang ru --json" "mha --format svg --step attn_weights --lang ru"
  "mha --model $models/tiny-f32 --format ipynb" "simple --lang ru --step nope"
)
mkdir -p "$dir"
failed=0
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for i in "${!commands[@]}"; do
  n=$(printf '%03d' "$i")
  status=0
  eval "\"$attn\" ${commands[$i]}" >"$scratch/stdout" 2>"$scratch/stderr" </dev/null || status=$?
  {
    printf '$ attn %s\n--- exit %d\n--- stdout\n' "${commands[$i]}" "$status"
    # the checkout's own path, where a message names a file in it, as it would be anywhere
    sed "s|$(pwd)|<checkout>|g" "$scratch/stdout"
    printf -- '--- stderr\n'
    sed "s|$(pwd)|<checkout>|g" "$scratch/stderr"
  } >"$scratch/$n.out"
  if [ "$mode" = capture ]; then
    mv "$scratch/$n.out" "$dir/$n.out"
  elif ! cmp -s "$scratch/$n.out" "$dir/$n.out"; then
    echo "differs: attn ${commands[$i]}"
    diff "$dir/$n.out" "$scratch/$n.out" | head -20
    failed=$((failed + 1))
  fi
done
if [ "$mode" = capture ]; then
  echo "captured ${#commands[@]} commands in $dir"
elif [ "$failed" -ne 0 ]; then
  echo "$failed of ${#commands[@]} commands differ" >&2
  exit 1
else
  echo "all ${#commands[@]} commands give the same bytes"
fi
