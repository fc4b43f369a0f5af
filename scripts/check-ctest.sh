#!/usr/bin/env bash
# The guard behind the test command: every ctest entry must be exactly one Catch2 test case. CMake's
# test discovery splits a test name at ';', which gives entries that match no case and, without this
# check, would pass having run nothing.   bash scripts/check-ctest.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
# Catch2 exits with the number of cases it listed, so its status is not an error here.
cases=$("$build/attn_tests" --list-test-names-only | grep . | sort || true)
entries=$(ctest --test-dir "$build" -N | sed -n 's/^ *Test *#[0-9]*: //p' | sort)
if [ -z "$cases" ] || [ "$cases" != "$entries" ]; then
  echo "check-ctest: the ctest entries are not the Catch2 test cases (a test name may not contain ';'," \
       "which CMake splits):" >&2
  diff <(printf '%s\n' "$cases") <(printf '%s\n' "$entries") >&2 || true
  exit 1
fi
echo "check-ctest: $(printf '%s\n' "$cases" | wc -l) ctest entries, one per Catch2 test case"
