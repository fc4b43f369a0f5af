#!/usr/bin/env bash
# Installs the Debian 12 packages attn needs, if any are missing. Idempotent: when everything is there it
# only checks and says nothing. Needs root (or sudo) only to install.
#   bash scripts/deps.sh        what attn needs to build and run (the README's first command)
#   bash scripts/deps.sh test   that, and the test tools (the README's second command, and CI)
#   bash scripts/deps.sh fuzz   that, the test tools, and clang with libFuzzer (scripts/fuzz.sh)
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config                     # toolchain (CMake >= 3.25; Ninja builds in parallel
                                                       # across libraries, where make waits for each)
  libxtensor-dev libxtensor-blas-dev libopenblas-dev   # tensors and BLAS
  libsleef-dev                                         # PyTorch's exp, to the bit
  libdnnl-dev                                          # oneDNN's SGEMM: attn bench's fast projections
  libcli11-dev nlohmann-json3-dev                      # command line, JSON
  libutf8proc-dev                                      # what a terminal shows: control characters, widths
  libpcre2-dev                                         # GPT-2's tokenizer pattern (Unicode classes)
  libncurses-dev                                       # attn present: the full-screen presenter
  libfmt-dev                                           # {fmt}: lesson text filled in from its content files
  libcpp-httplib-dev                                   # attn serve: the HTTP server (cpp-httplib)
)
test_packages=(
  catch2 ccache                                        # the test framework; compiles again only what changed
  python3 python3-numpy jq tmux procps                 # pipes into python3 (NumPy, as the docs use it), jq,
                                                       # a real terminal (tmux), pkill to signal attn in it
  man-db binutils                                      # the man page through man -l, nm on the executables
  chromium chromium-driver python3-selenium            # --format html in a real browser (headless),
  python3-pil poppler-utils fonts-dejavu-core          # its screenshots, its PDF as text, the page's font
)
fuzz_packages=(clang libclang-rt-14-dev libfuzzer-14-dev)

case "${1:-}" in
  "") ;;
  test) packages+=("${test_packages[@]}") ;;
  fuzz) packages+=("${test_packages[@]}" "${fuzz_packages[@]}") ;;
  *) echo "usage: bash scripts/deps.sh [test|fuzz]" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "attn: installing missing packages: ${missing[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "attn: run as root (or install sudo) to install: ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
