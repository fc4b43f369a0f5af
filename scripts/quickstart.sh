#!/usr/bin/env bash
# Quick start, command 1: install what attn needs (not the test tools), build attn and attn-bench (not the
# tests), install them into /usr/local (so `attn` is on PATH, as the README's examples call it), and run the
# first lesson, then says how long it took. bash scripts/uninstall.sh removes what it installed.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
bash scripts/deps.sh
packages=$SECONDS
bash scripts/build.sh
built=$SECONDS
cmake --install build --prefix /usr/local > /dev/null
echo "Installed attn into /usr/local: bin/attn, its data in share/attn, attn-bench in libexec/attn, man attn."
echo "bash scripts/uninstall.sh removes them (the list is /usr/local/share/attn/installed-files.txt)."
if [ "$(command -v attn)" != /usr/local/bin/attn ]; then
  echo "Note: \`attn\` on this PATH is not /usr/local/bin/attn (PATH=$PATH); run /usr/local/bin/attn, or put" \
       "/usr/local/bin first on PATH." >&2
fi
echo
/usr/local/bin/attn simple
echo
echo "Next: attn --help lists every lesson; try attn all-tokens and attn trainable."
echo "(quickstart.sh took $((SECONDS - start)) s: packages $((packages - start)) s, build $((built - packages)) s.)"
