#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (AddressSanitizer + UndefinedBehaviorSanitizer) and fuzzes each
# for SECONDS (default 60) from its committed seed corpus: fuzz_embeddings (any bytes as an embeddings
# file, then every lesson and the text, JSON and HTML renderers, their output checked), fuzz_safetensors
# (any bytes as a model.safetensors file, every float tensor of one that parses read), fuzz_tokenizer
# (any bytes as vocab.json, merges.txt and a text), fuzz_save_npy (any layout of DIR, and a change to it
# between staging and the moves, against --save-npy's guarantees) and fuzz_cli (any
# command line, its exit status, stderr line and output checked; its dictionary written by attn-docgen
# fuzz-dict from the lesson registry and the option table, so a new lesson or option is in it). New corpus entries
# go to scratch directories; a crash fails the run and leaves its input in build-fuzz/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
bash scripts/deps.sh fuzz
# -O2 with line tables only (-g1: enough for a crash report's file and line, and a third less compile time
# than -g). The -O2 is what RelWithDebInfo always gave here, after the -O1 these flags once asked for.
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fsanitize=fuzzer-no-link"
bash scripts/configure.sh build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DATTN_BUILD_TESTS=OFF -DATTN_FUZZ=ON -DCMAKE_CXX_FLAGS="$flags"
cmake --build build-fuzz -j2 --target fuzz_embeddings fuzz_safetensors fuzz_tokenizer fuzz_save_npy fuzz_cli attn-docgen
build-fuzz/attn-docgen fuzz-dict > build-fuzz/cli.dict
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cd build-fuzz
# fuzz TARGET CORPUS WHAT [extra libFuzzer flags...]
fuzz() {
  local target=$1 corpus=$2 what=$3
  shift 3
  mkdir -p "$scratch/$target"
  local status=0
  "./$target" -max_total_time="$seconds" -max_len=4096 -timeout=20 -rss_limit_mb=3072 -print_final_stats=1 "$@" \
    "$scratch/$target" "$corpus" >"$target.log" 2>&1 || status=$?
  if [ "$status" -ne 0 ]; then
    tail -n 40 "$target.log"
    echo "fuzz: $target failed (exit $status); the input that crashed is in build-fuzz/crash-*" >&2
    exit 1
  fi
  local runs
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$target.log")
  echo "fuzz: ${runs:-?} inputs in ${seconds} s through $what, no crash"
}
fuzz fuzz_embeddings ../tests/fuzz/corpus "the embeddings loader, every lesson and the text, JSON and HTML renderers"
fuzz fuzz_safetensors ../tests/fuzz/corpus-safetensors "the safetensors header parser (--model)"
fuzz fuzz_tokenizer ../tests/fuzz/corpus-tokenizer "the tokenizer files and their consistency (--model)"
fuzz fuzz_save_npy ../tests/fuzz/corpus-save-npy "--save-npy's file handling against what DIR holds"
fuzz fuzz_cli ../tests/fuzz/corpus-cli "the command line" -dict=cli.dict
