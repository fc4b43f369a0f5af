#!/usr/bin/env bash
# Quick start, command 2 (and CI's .ci/run): install the test tools, build attn and its tests, run them.
#   bash scripts/test.sh           every tier (docs/testing.md)
#   bash scripts/test.sh --quick   the quick tier: the in-process cases but the load and steps tiers;
#                                  none of the e2e, docs, browser, tmux, install, bench, memory, families
#                                  or torch tiers (about 30 s on two cores once built)
# It ends by saying how long the build and the tests took, passed or not.
# One case: ctest --test-dir build -R '^golden 037:' --output-on-failure, or build/attn_tests 'its name'.
set -euo pipefail
cd "$(dirname "$0")/.."
labels=()
what="every tier"
case "${1:-}" in
  "") ;;
  --quick) labels=(-L '^quick$'); what="the quick tier" ;;
  *) echo "usage: bash scripts/test.sh [--quick]" >&2; exit 2 ;;
esac
start=$SECONDS
built=
report() {
  local status=$? verdict=passed
  [ "$status" -eq 0 ] || verdict="failed (exit $status)"
  if [ -n "$built" ]; then
    echo "test.sh: $what $verdict: tools and build $((built - start)) s, tests $((SECONDS - built)) s, $((SECONDS - start)) s in all"
  else
    echo "test.sh: $verdict before the tests ran, after $((SECONDS - start)) s"
  fi
}
trap report EXIT
bash scripts/deps.sh test
bash scripts/build.sh --tests
bash scripts/check-ctest.sh build
built=$SECONDS
ctest --test-dir build --output-on-failure -j2 "${labels[@]}"
