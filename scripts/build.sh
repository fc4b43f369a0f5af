#!/usr/bin/env bash
# Configures and builds attn in build/ with Ninja.
#   bash scripts/build.sh           attn, attn-bench, the man page and the completion (no test program)
#   bash scripts/build.sh --tests   that and the test program, attn_tests
# ccache, where it is installed (the test command installs it), compiles again only what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
tests=OFF
case "${1:-}" in
  "") ;;
  --tests) tests=ON ;;
  *) echo "usage: bash scripts/build.sh [--tests]" >&2; exit 2 ;;
esac
bash scripts/configure.sh build -DCMAKE_BUILD_TYPE=Release -DATTN_BUILD_TESTS=$tests
cmake --build build -j2
