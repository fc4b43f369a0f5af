#!/usr/bin/env bash
# Captures the pictures of docs/html.md and docs/classroom.md from the real pages in headless Chromium
# (tests/browser/drive.py), at 1280 x 720: a slide of attn causal in the light and the dark theme, gqa's grid
# of heads, the lines view of mha's weights with a query pointed at, attn heads on a GPT-2-small-shaped model
# with random weights (scripts/bench-gpt2.py's, about 500 MB in a temporary directory): the model view, one
# layer's 12 heads and a map opened from the model view; the heatmap figure of --format svg, and the first
# two pages of the tour printed to PDF (pdftoppm). Needs a build (build/attn) and what
# `bash scripts/deps.sh test` installs for the browser tests. Not part of the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
attn=$(pwd)/build/attn
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$(pwd)/docs/screens
for lesson in causal mha gqa; do "$attn" "$lesson" --format html >"$tmp/$lesson.html"; done
"$attn" tour --format html >"$tmp/tour.html"
/usr/bin/python3 - "$tmp/gpt2" <<'PY'
import importlib.util, os, sys
spec = importlib.util.spec_from_file_location("bench_gpt2", "scripts/bench-gpt2.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)
os.mkdir(sys.argv[1])
bench.write_model(sys.argv[1])
PY
"$attn" heads --model "$tmp/gpt2" --text "The cat sat on the mat." --format html >"$tmp/heads.html"
"$attn" causal --format svg --step causal_attn_weights >"$out/html-figure.svg"
cat >"$tmp/request.json" <<JSON
[{"do": "viewport", "size": [1280, 720]},
 {"do": "dark", "value": false},
 {"do": "load", "url": "file://$tmp/causal.html#slide=causal_attn_weights"}, {"do": "save", "path": "$out/html-slide-light.png"},
 {"do": "dark", "value": true},
 {"do": "load", "url": "file://$tmp/causal.html#slide=causal_attn_weights"}, {"do": "save", "path": "$out/html-slide-dark.png"},
 {"do": "dark", "value": false},
 {"do": "load", "url": "file://$tmp/gqa.html#slide=attn_weights"}, {"do": "save", "path": "$out/html-heads.png"},
 {"do": "load", "url": "file://$tmp/mha.html#slide=attn_weights"}, {"do": "keys", "keys": ["l"]},
 {"do": "hover", "css": "section.slide.current svg.lines text.tok.q[data-q=\"2\"]"}, {"do": "save", "path": "$out/html-lines.png"},
 {"do": "load", "url": "file://$tmp/heads.html#slide=attn_weights_layer_0"}, {"do": "save", "path": "$out/html-model-view.png"},
 {"do": "click", "css": "section.slide.current .layer[data-step=\"attn_weights_layer_3\"] .head[data-head=\"5\"]"},
 {"do": "save", "path": "$out/html-opened-head.png"},
 {"do": "load", "url": "file://$tmp/heads.html#slide=attn_weights_layer_5"}, {"do": "save", "path": "$out/html-layer-heads.png"},
 {"do": "viewport", "size": [1280, 900]},
 {"do": "load", "url": "file://$tmp/tour.html"}, {"do": "savepdf", "path": "$tmp/tour.pdf"}]
JSON
/usr/bin/python3 tests/browser/drive.py "$tmp/request.json" >/dev/null
pdftoppm -png -r 60 -f 2 -l 2 -singlefile "$tmp/tour.pdf" "$out/html-handout-1"
pdftoppm -png -r 60 -f 3 -l 3 -singlefile "$tmp/tour.pdf" "$out/html-handout-2"
echo "docs/screens/html-slide-{light,dark}.png, html-heads.png, html-lines.png, html-model-view.png, html-opened-head.png, html-layer-heads.png, html-figure.svg and html-handout-{1,2}.png written"
