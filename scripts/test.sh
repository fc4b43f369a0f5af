#!/usr/bin/env bash
# Quick start, command 2 (and CI's .ci/run): install what is missing, build, run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh
bash scripts/check-ctest.sh build
ctest --test-dir build --output-on-failure -j2
