#!/usr/bin/env bash
# Builds attn and its tests with AddressSanitizer + UndefinedBehaviorSanitizer in build-asan/ (at -O1) and
# runs the quick tier (the in-process cases) and the load tier (the server under many and slow clients,
# whose leak case LeakSanitizer checks at exit here) there; any sanitizer report fails the run. The other
# tiers, the steps tier's remaining --model steps and the real programs of e2e (pipes, /dev/full, FIFOs,
# signals to attn serve) among them, run in the plain build only (docs/testing.md). ccache serves what an
# earlier run in this folder compiled.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh test
# -O1, with line tables only (-g1): what a sanitizer's report needs to name file and line, at a third less
# compile time than -g. Both are RelWithDebInfo's flags here, which come after $flags.
# The tests' own code (Catch2 and the cases, attn_tests' files) is built with AddressSanitizer but not
# UndefinedBehaviorSanitizer, whose checks on Catch2's expression templates took a quarter of this stage's
# build; attn's own code, every library the tests call, has both (an inline function of attn's headers that
# a test file also compiles may be linked from the test file's copy, without UBSan's checks).
flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
bash scripts/configure.sh build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DATTN_TEST_COMPILE_OPTIONS="-fno-sanitize=undefined"
cmake --build build-asan -j2
export ASAN_OPTIONS=abort_on_error=0:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
bash scripts/check-ctest.sh build-asan
ctest --test-dir build-asan --output-on-failure -j2 -L '^(quick|load)$'
