#!/usr/bin/env bash
# Quick start, command 2 (and CI's .ci/run): install the test tools, build attn and its tests, run them.
#   bash scripts/test.sh           every tier (docs/testing.md)
#   bash scripts/test.sh --quick   the quick tier: the in-process cases, none of the e2e, docs, browser,
#                                  tmux, install, bench, memory, families or torch tiers (about a minute on two cores once built)
# One case: ctest --test-dir build -R '^golden 037:' --output-on-failure, or build/attn_tests 'its name'.
set -euo pipefail
cd "$(dirname "$0")/.."
labels=()
case "${1:-}" in
  "") ;;
  --quick) labels=(-L '^quick$') ;;
  *) echo "usage: bash scripts/test.sh [--quick]" >&2; exit 2 ;;
esac
bash scripts/deps.sh test
bash scripts/build.sh --tests
bash scripts/check-ctest.sh build
ctest --test-dir build --output-on-failure -j2 "${labels[@]}"
