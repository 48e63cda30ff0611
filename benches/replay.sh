#!/usr/bin/env bash
# Cached replays of an unchanged tree, builds side by side: each binary gets its own cache dir,
# one run writes it, one more settles it, then RUNS alternating timed replays of every binary.
# Prints each binary's mean wall and CPU (user + system) seconds.
# Usage: TREE=DIR benches/replay.sh RUNS ignore|default BIN...   (needs GNU time at /usr/bin/time)
set -euo pipefail
runs=${1:?runs}
case_=${2:?ignore or default}
shift 2
tree=${TREE:?TREE=DIR holding project/, user/ and system/}
extra=()
[ "$case_" = ignore ] && extra=(--ignore integrity)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
lint() { # lint BIN CACHE_DIR [time file]
  local cmd=("$1" lint "$tree/project" --user-space "$tree/user" --system-space "gen=$tree/system"
    --format json --no-progress "${extra[@]}")
  if [ -n "${3:-}" ]; then
    RYECHAIN_CACHE_DIR=$2 /usr/bin/time -o "$3" -f "%e %U %S" "${cmd[@]}" >/dev/null 2>&1 || true
  else
    RYECHAIN_CACHE_DIR=$2 "${cmd[@]}" >/dev/null 2>&1 || true
  fi
}
declare -A wall cpu
i=0
for bin in "$@"; do
  i=$((i + 1))
  mkdir -p "$work/$i"
  lint "$bin" "$work/$i"
  sleep 2.1 # past the racy window of the stamps it cached
  lint "$bin" "$work/$i"
done
for _ in $(seq "$runs"); do
  i=0
  for bin in "$@"; do
    i=$((i + 1))
    lint "$bin" "$work/$i" "$work/t"
    read -r w u s < <(tail -1 "$work/t")
    wall[$bin]="${wall[$bin]:-} $w"
    cpu[$bin]="${cpu[$bin]:-} $(awk -v u="$u" -v s="$s" 'BEGIN {print u + s}')"
  done
done
mean() { tr ' ' '\n' | awk 'NF {s += $1; n++} END {printf "%.3f", s / n}'; }
for bin in "$@"; do
  echo "$bin: replay wall $(echo "${wall[$bin]}" | mean) s, CPU $(echo "${cpu[$bin]}" | mean) s ($runs runs)"
done
