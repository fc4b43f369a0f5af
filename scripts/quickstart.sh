#!/usr/bin/env bash
# Quick start, command 1: install what attn needs (not the test tools), build attn and attn-bench (not the
# tests), and run the first lesson.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh
echo
./build/attn simple
echo
echo "Next: ./build/attn --help lists every lesson; try ./build/attn all-tokens and ./build/attn trainable."
