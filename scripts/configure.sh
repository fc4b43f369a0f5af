#!/usr/bin/env bash
# Configures one build directory with Ninja (and ccache, where it is installed), for build.sh, sanitize.sh
# and fuzz.sh:   bash scripts/configure.sh DIR [cmake arguments...]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$1
shift
# A directory configured by another generator (make, before Ninja) cannot be reconfigured: start it afresh.
if [ -f "$dir/CMakeCache.txt" ] && ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' "$dir/CMakeCache.txt"; then
  rm -rf "$dir/CMakeCache.txt" "$dir/CMakeFiles"
fi
# ccache in its depend mode: it hashes the headers the compiler's own -MD list names (Ninja asks for it)
# instead of running the preprocessor first, which on a miss, a build with nothing cached, cost a third
# more than no ccache at all (316 s against 238 s for build.sh --tests on 2 cores, docs/testing.md).
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=("-DCMAKE_CXX_COMPILER_LAUNCHER=/usr/bin/env;CCACHE_DEPEND=1;ccache")
cmake -S . -B "$dir" -G Ninja "${launcher[@]}" "$@" >/dev/null
