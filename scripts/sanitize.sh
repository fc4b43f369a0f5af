#!/usr/bin/env bash
# Builds attn and its tests with AddressSanitizer + UndefinedBehaviorSanitizer in build-asan/ (at -O1) and
# runs the quick tier (every in-process case) and the load tier (the server under many and slow clients,
# whose leak case LeakSanitizer checks at exit here) there; any sanitizer report fails the run. The other
# tiers run the real programs, pages, terminals, installs and timings, which the plain build's run covers
# (docs/testing.md). ccache serves what an earlier run in this folder compiled.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh test
flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g -O1"
# RelWithDebInfo's own -O2 would come after $flags' -O1: it is set to -O1 too.
bash scripts/configure.sh build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g -DNDEBUG" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined"
cmake --build build-asan -j2
export ASAN_OPTIONS=abort_on_error=0:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
bash scripts/check-ctest.sh build-asan
ctest --test-dir build-asan --output-on-failure -j2 -L '^(quick|load)$'
