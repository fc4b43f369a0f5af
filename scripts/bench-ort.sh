#!/usr/bin/env bash
# Sets `attn bench`'s causal multi-head attention forward beside ONNX Runtime's on this machine.
# A developer tool: not part of the build, the tests or CI. `bash scripts/bench-ort.sh --help` says more.
# Helpers beside it in scripts/bench-ort/: graphs.py (hand-built ONNX graphs and a NumPy reference),
# ort_run.js (runs and times a graph in onnxruntime-node), report.py (the tables and the JSON).
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: scripts/bench-ort.sh [OPTIONS]

Times attn-bench's `fused` and `gqa` implementations against ONNX Runtime (onnxruntime-node 1.30.0,
CPU) on the same forward: causal multi-head self-attention of x (B, T, C), C = heads * head_dim, then
the output projection, float32, no biases. A developer tool, not part of the tests.

Steps:
  1. npm-installs onnxruntime-node@1.30.0 into a temporary folder (--ignore-scripts: its CPU binaries
     ship inside the package; the post-install step would only fetch CUDA ones). The folder, npm's cache
     and logs included, is removed on exit.
  2. Builds ONNX graphs by hand (onnx.helper): ms_attention (com.microsoft Attention), mha23 (opset-23
     Attention), gqa (com.microsoft GroupQueryAttention, G key/value heads), gqa23 (opset-23 Attention
     with kv_num_heads=G; left out with a note if ORT cannot run it).
  3. Checks each graph against attn-bench's own reference (`attn-bench --dump`) at a small shape, or,
     with an attn-bench that has no --dump, against graphs.py's NumPy reference; exits 1 if any max
     |difference| is above 1e-4.
  4. For each shape, R alternating rounds: attn-bench --impl fused,gqa --json once, then each ORT graph
     (one warm-up, then --repeats timed runs, median; random weights and x of the right shapes).
  5. Prints a Markdown table per shape: medians over rounds with the range of per-round medians, ORT's
     best MHA and GQA variants, and attn/ORT ratios taken per round (below 1: attn is faster).

Options:
  --shapes LIST       comma-separated BxTxCxH[xG] (default 8x1024x768x12,8x256x768x12,1x4096x768x12;
                      env BENCH_ORT_SHAPES); G defaults to --kv-groups
  --kv-groups G       key/value heads of the GQA rows (default 4)
  --rounds R          alternating rounds per shape (default 3; env BENCH_ORT_ROUNDS)
  --repeats N         timed runs per implementation and round, after one warm-up (default 5)
  --threads N         ORT's intra-op threads (default: the CPU count, nproc)
  --check-shape S     BxTxCxHxG of the correctness check (default 2x70x96x4x2)
  --check-only        stop after the check
  --isa BUILD         attn-bench's --isa: avx512, avx2 or portable (default: the CPU's widest). ORT's
                      own kernels (MLAS) still take the CPU's widest: it has no such cap, so on an
                      AVX-512 CPU `--isa avx2` sets attn's AVX2 code against ORT's AVX-512 code
  --attn-bench PATH   the benchmark program (default build/attn-bench in this repository)
  --json FILE         also write the raw numbers (every round, every run) as JSON to FILE
  -h, --help          this text

Needs /usr/bin/python3 with Debian's python3-onnx and python3-numpy, Node.js (18 or later) and npm,
and a built attn-bench (cmake --build build -j2 --target attn-bench). The default run takes 2.5
minutes on a quiet 2-core machine (longer, and noisier, when something else is running).
EOF
}

die() { echo "bench-ort: $*" >&2; exit 1; }
note() { echo "bench-ort: $*" >&2; }
# run_failed STATUS MESSAGE: a child killed by a signal (Ctrl-C) ends the script quietly, anything else
# is an error worth its message.
run_failed() { if [ "$1" -gt 128 ]; then exit "$1"; fi; shift; die "$@"; }

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
helpers=$here/bench-ort
ort_version=1.30.0
# Debian's python, not whatever python3 is first on PATH (a pyenv one lacks python3-onnx).
py=/usr/bin/python3
tol=1e-4

shapes=${BENCH_ORT_SHAPES:-8x1024x768x12,8x256x768x12,1x4096x768x12}
rounds=${BENCH_ORT_ROUNDS:-3}
kv_groups=4
repeats=5
threads=
check_shape=2x70x96x4x2
check_only=0
attn_bench=$root/build/attn-bench
isa_arg=()
json_out=

need_value() { if [ $# -lt 2 ] || [ -z "$2" ]; then die "option $1 needs a value (see --help)"; fi; }
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --shapes) need_value "$@"; shapes=$2; shift 2 ;;
    --kv-groups) need_value "$@"; kv_groups=$2; shift 2 ;;
    --rounds) need_value "$@"; rounds=$2; shift 2 ;;
    --repeats) need_value "$@"; repeats=$2; shift 2 ;;
    --threads) need_value "$@"; threads=$2; shift 2 ;;
    --check-shape) need_value "$@"; check_shape=$2; shift 2 ;;
    --check-only) check_only=1; shift ;;
    --isa) need_value "$@"
      case $2 in avx512|avx2|portable) ;; *) die "--isa takes avx512, avx2 or portable, not '$2'" ;; esac
      isa_arg=(--isa "$2"); shift 2 ;;
    --attn-bench) need_value "$@"; attn_bench=$2; shift 2 ;;
    --json) need_value "$@"; json_out=$2; shift 2 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done

positive() { [[ $2 =~ ^[1-9][0-9]*$ ]] || die "$1 must be a positive integer, not '$2'"; }
positive --kv-groups "$kv_groups"
positive --rounds "$rounds"
positive --repeats "$repeats"
[ -z "$threads" ] && threads=$(nproc)
positive --threads "$threads"

# parse_shape WHAT SPEC: sets $parsed to "B T C H G" or dies (in this shell, not in a $(...) subshell
# whose exit would be lost); C must split into H heads, H into G groups.
parse_shape() {
  local what=$1 spec=$2
  [[ $spec =~ ^([1-9][0-9]*)x([1-9][0-9]*)x([1-9][0-9]*)x([1-9][0-9]*)(x([1-9][0-9]*))?$ ]] ||
    die "$what '$spec' is not BxTxCxH[xG], e.g. 8x1024x768x12"
  local b=${BASH_REMATCH[1]} t=${BASH_REMATCH[2]} c=${BASH_REMATCH[3]} h=${BASH_REMATCH[4]}
  local g=${BASH_REMATCH[6]:-$kv_groups}
  (( c % h == 0 )) || die "$what '$spec': the dim $c is not a multiple of the heads $h"
  (( h % g == 0 )) || die "$what '$spec': the heads $h are not a multiple of the kv groups $g"
  parsed="$b $t $c $h $g"
}
shape_list=()
IFS=, read -r -a specs <<<"$shapes"
[ ${#specs[@]} -gt 0 ] || die "--shapes is empty"
for spec in "${specs[@]}"; do parse_shape --shapes "$spec"; shape_list+=("$parsed"); done
parse_shape --check-shape "$check_shape"
read -r cb ct cc ch cg <<<"$parsed"
if [ -n "$json_out" ]; then
  [ -d "$(dirname -- "$json_out")" ] || die "--json $json_out: no folder $(dirname -- "$json_out")"
fi

# ---- prerequisites: everything missing in one line
missing=()
if [ ! -x "$py" ]; then
  missing+=(python3 python3-onnx python3-numpy)
else
  "$py" -c 'import onnx' 2>/dev/null || missing+=(python3-onnx)
  "$py" -c 'import numpy' 2>/dev/null || missing+=(python3-numpy)
fi
if ! command -v node >/dev/null; then
  missing+=(nodejs)
elif ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 18 ? 0 : 1)'; then
  die "Node.js $(node --version) is too old: this script wants 18 or later (apt-get install nodejs)"
fi
command -v npm >/dev/null || missing+=(npm)
[ ${#missing[@]} -eq 0 ] || die "missing prerequisites: apt-get install ${missing[*]}"
[ -x "$attn_bench" ] || die "no attn-bench at $attn_bench (build it: cmake --build $root/build -j2 --target attn-bench)"

t_start=$(date +%s)
# Everything here shares 2 cores with whatever else runs: say so up front when the machine is busy,
# and keep the load averages with the numbers.
load_start=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo "?")
if awk -v l="$load_start" -v n="$(nproc)" 'BEGIN { exit !(l + 0 > 0.5 * n) }'; then
  note "the machine is busy (load average $load_start on $(nproc) CPUs): the times will be noisy"
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-ort.XXXXXX")
trap 'rm -rf -- "$tmp"' EXIT
# A signal ends the script through exit, so the EXIT trap above still removes the folder.
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- 1. onnxruntime-node, into the temp folder only
note "installing onnxruntime-node@$ort_version into $tmp (npm, --ignore-scripts)"
# npm's cache and logs go to the temp folder too (per-command environment, nothing exported), so
# nothing is left in ~/.npm; --no-save: the temp folder needs no package.json.
if ! env npm_config_cache="$tmp/npm-cache" npm_config_update_notifier=false \
    npm install --prefix "$tmp/ort" --ignore-scripts --no-save --no-package-lock --no-audit --no-fund \
    --loglevel=error "onnxruntime-node@$ort_version" >"$tmp/npm.log" 2>&1; then
  tail -n 5 "$tmp/npm.log" >&2
  die "npm install onnxruntime-node@$ort_version failed (npm's last lines above)"
fi
ortnode() { NODE_PATH="$tmp/ort/node_modules" node "$helpers/ort_run.js" "$@"; }
info=$(ortnode info --threads "$threads")
ort_found=$(printf '%s' "$info" | "$py" -c 'import json, sys; print(json.load(sys.stdin)["version"])')
[ "$ort_found" = "$ort_version" ] || die "require('onnxruntime-node') gave version $ort_found, not $ort_version"

# ---- 2 and 3. graphs from the check shape's weights, checked against the reference
note "ONNX Runtime $ort_found loaded (CPU binaries from the package), intra-op threads $threads"
data=$tmp/check-data
mkdir -p "$data"
if "$attn_bench" --help 2>/dev/null | grep -q -- '--dump'; then
  reference="attn-bench --dump"
  "$attn_bench" --batch "$cb" --tokens "$ct" --dim "$cc" --heads "$ch" --kv-groups "$cg" --dump "$data" >/dev/null ||
    die "$attn_bench --dump $data failed"
else
  reference="graphs.py's NumPy reference, for want of attn-bench --dump"
  note "$attn_bench has no --dump: checking against graphs.py's NumPy reference instead of attn's own"
  "$py" "$helpers/graphs.py" reference --out "$data" --batch "$cb" --tokens "$ct" --dim "$cc" --heads "$ch" --kv-groups "$cg"
fi
"$py" "$helpers/graphs.py" build --out "$tmp/check-models" --weights "$data" --dim "$cc" --heads "$ch" --kv-groups "$cg"

echo
echo "Check at B$cb T$ct C$cc H$ch G$cg against $reference (max |difference|, limit $tol):"
if [ "$reference" = "attn-bench --dump" ]; then
  # The dump's reference against graphs.py's own: tells, if a graph fails, whether the graph or the
  # reading of the dump (layouts, head grouping) is at fault.
  echo "  graphs.py's NumPy reference vs the dump: $("$py" "$helpers/graphs.py" compare --data "$data" --heads "$ch" --kv-groups "$cg")"
fi
variants=()
check=()
failed=0
for v in ms_attention mha23 gqa gqa23; do
  case $v in ms_attention|mha23) expect=mha_out ;; *) expect=gqa_out ;; esac
  rc=0
  out=$(ortnode check --model "$tmp/check-models/$v.onnx" --data "$data" --expect "$expect" \
        --threads "$threads" --tol "$tol" 2>"$tmp/check-$v.err") || rc=$?
  d=$(printf '%s' "$out" | sed -n 's/.*"max_abs_diff":\([^,}]*\).*/\1/p')
  shown=$(printf '%s' "$out" | sed -n 's/.*"shown":"\([^"]*\)".*/\1/p')
  if [ $rc -eq 0 ]; then
    printf '  %-13s %-9s ok\n' "$v" "$shown"
    variants+=("$v")
    check+=("$v=$d")
  elif [ $rc -eq 3 ]; then
    printf '  %-13s %-9s ABOVE %s\n' "$v" "$shown" "$tol"
    failed=1
  elif [ "$v" = gqa23 ]; then
    # The second GQA form is optional: ORT may not run opset-23 Attention with fewer kv heads.
    printf '  %-13s %-9s left out: %s\n' "$v" "-" "$(tail -n 1 "$tmp/check-$v.err")"
  else
    printf '  %-13s %-9s FAILED\n' "$v" "-"
    cat "$tmp/check-$v.err" >&2
    failed=1
  fi
done
[ $failed -eq 0 ] || die "a graph does not match the reference: nothing timed"
[ $check_only -eq 0 ] || exit 0

# ---- 4. alternating rounds; one set of random-weight graphs per (C, H, G), built the same way
runs=$tmp/runs
shape_arg=()
for i in "${!shape_list[@]}"; do
  read -r b t c h g <<<"${shape_list[$i]}"
  shape_arg+=("${b}x${t}x${c}x${h}x${g}")
  models=$tmp/models/$c-$h-$g
  [ -d "$models" ] || "$py" "$helpers/graphs.py" build --out "$models" --dim "$c" --heads "$h" --kv-groups "$g"
  for ((r = 0; r < rounds; r++)); do
    note "B$b T$t C$c H$h G$g: round $((r + 1))/$rounds"
    d=$runs/$i/$r
    mkdir -p "$d"
    "$attn_bench" --batch "$b" --tokens "$t" --dim "$c" --heads "$h" --kv-groups "$g" \
      --impl fused,gqa --repeats "$repeats" ${isa_arg[@]+"${isa_arg[@]}"} --json >"$d/attn.json" ||
      run_failed $? "$attn_bench --batch $b --tokens $t ... --json failed"
    for v in "${variants[@]}"; do
      ortnode time --model "$models/$v.onnx" --batch "$b" --tokens "$t" --dim "$c" \
        --threads "$threads" --repeats "$repeats" --seed 1 >"$d/$v.json" ||
        run_failed $? "ORT's $v failed at B$b T$t C$c H$h G$g"
    done
  done
done

# ---- 5. the tables, and the JSON if asked
load_end=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo "?")
echo
report=(--runs "$runs" --shapes "$(IFS=,; echo "${shape_arg[*]}")" --rounds "$rounds" --repeats "$repeats"
        --variants "$(IFS=,; echo "${variants[*]}")" --ort-version "$ort_found" --threads "$threads"
        --check "$(IFS=,; echo "${check[*]}")" --reference "$reference" --load-avg "$load_start,$load_end")
[ -z "$json_out" ] || report+=(--json "$json_out")
"$py" "$helpers/report.py" "${report[@]}"
echo
echo "(whole run: $(( $(date +%s) - t_start )) s; 1-minute load average $load_start at the start, $load_end at the end, on $(nproc) CPUs)"
[ -z "$json_out" ] || note "wrote $json_out"
