#!/usr/bin/env bash
# Captures the presenter's screens for docs/classroom.md: attn present causal at step 11
# (causal_attn_weights) in a 100 x 40 tmux window, once per theme and once without colour, as
# docs/screens/present-<theme>.ansi (the escapes kept: `cat` one in a 256-colour terminal), and the text
# of the dark and the monochrome one as .txt; and attn present mha at step 29 (attn_weights, its heads side
# by side) in a 100 x 30 window as present-heads.ansi and .txt.
# Needs a build (build/attn) and tmux. Not part of the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
attn=$(pwd)/build/attn
capture() {  # NAME ENV ARGS...: attn present causal at step 11, 100 x 40
  capture_at "$1" "$2" 40 "g 1 1 Enter" causal "${@:3}"
}
capture_at() {  # NAME ENV HEIGHT KEYS ARGS...
  local name=$1 env=$2 height=$3 keys=$4 sock=attn-screens-$$-$1  # a server of its own per screen
  shift 4
  tmux -L "$sock" -f /dev/null new-session -d -s s -x 100 -y "$height" \
    "env TERM=tmux-256color LANG=C.UTF-8 $env $attn present $*; sleep 30"
  sleep 1
  tmux -L "$sock" send-keys -t s $keys
  sleep 0.5
  tmux -L "$sock" capture-pane -p -e -t s >"docs/screens/present-$name.ansi"
  case $name in dark | mono | heads)  # the text is the same in every theme
    tmux -L "$sock" capture-pane -p -t s | sed -e 's/[[:space:]]*$//' >"docs/screens/present-$name.txt" ;;
  esac
  tmux -L "$sock" kill-server
}
capture dark "" --theme dark
capture light "" --theme light
capture contrast "" --theme contrast
capture mono NO_COLOR=1
capture_at heads "" 30 "g 2 9 Enter" mha
echo "docs/screens/present-{dark,light,contrast,mono,heads}.ansi and present-{dark,mono,heads}.txt written"
