#!/usr/bin/env bash
# Configures and builds attn (the library, the executable and the tests) in build/.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j2
