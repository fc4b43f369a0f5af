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
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$dir" -G Ninja "${launcher[@]}" "$@" >/dev/null
