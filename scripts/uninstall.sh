#!/usr/bin/env bash
# Removes the attn that `cmake --install` put under PREFIX (scripts/quickstart.sh installs into /usr/local):
# exactly the files listed in PREFIX/share/attn/installed-files.txt, which the install writes, then the
# directories of attn's own that are left empty. Like cmake --install, it honours DESTDIR.
#   bash scripts/uninstall.sh [PREFIX]        (default /usr/local)
set -euo pipefail
prefix=${1:-/usr/local}
prefix=${prefix%/}
root=${DESTDIR:-}
list="$root$prefix/share/attn/installed-files.txt"
if [ ! -f "$list" ]; then
  echo "uninstall: $list does not exist: no attn is installed under $prefix" >&2
  exit 1
fi
mapfile -t files < "$list"
for file in "${files[@]}"; do
  case "$file" in
    "$prefix"/*) ;;
    *) echo "uninstall: $list names $file, which is not under $prefix: nothing removed" >&2; exit 1 ;;
  esac
done
for file in "${files[@]}"; do rm -f -- "$root$file"; done
# attn's own directories, once empty; the shared ones (bin, man1, completions) stay.
for dir in "$root$prefix/share/attn" "$root$prefix/libexec/attn"; do
  [ -d "$dir" ] && find "$dir" -depth -type d -empty -delete
done
echo "removed attn from $prefix (${#files[@]} files)"
