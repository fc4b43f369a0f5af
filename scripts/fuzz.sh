#!/usr/bin/env bash
# Builds the libFuzzer target with clang (AddressSanitizer + UndefinedBehaviorSanitizer) and fuzzes the
# embeddings loader for SECONDS (default 60) from the committed seed corpus. New corpus entries go to a
# scratch directory; a crash fails the run and leaves its input in build-fuzz/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
bash scripts/deps.sh fuzz
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fsanitize=fuzzer-no-link -g -O1"
cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DATTN_BUILD_TESTS=OFF -DATTN_FUZZ=ON -DCMAKE_CXX_FLAGS="$flags" >/dev/null
cmake --build build-fuzz -j2 --target fuzz_embeddings
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cd build-fuzz
status=0
./fuzz_embeddings -max_total_time="$seconds" -max_len=4096 -timeout=10 -print_final_stats=1 \
  "$scratch" ../tests/fuzz/corpus >fuzz.log 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
  tail -n 40 fuzz.log
  echo "fuzz: the fuzzer failed (exit $status); the input that crashed is in build-fuzz/crash-*" >&2
  exit 1
fi
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' fuzz.log)
echo "fuzz: ${runs:-?} inputs in ${seconds} s through the embeddings loader, no crash"
