#!/usr/bin/env bash
# Builds attn and its tests with AddressSanitizer + UndefinedBehaviorSanitizer in build-asan/ and runs the
# quick (in-process) and e2e (the real executable through pipes) tiers there; any sanitizer report fails
# the run. The other tiers test pages, terminals, installs and timings, not memory safety (docs/testing.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh test
flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g -O1"
bash scripts/configure.sh build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined"
cmake --build build-asan -j2
export ASAN_OPTIONS=abort_on_error=0:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
bash scripts/check-ctest.sh build-asan
ctest --test-dir build-asan --output-on-failure -j2 -L '^(quick|e2e)$'
