#!/usr/bin/env bash
# Batch signing of builds against each other, one fresh tree per run: `ryechain sign '*'` of every
# project tool, each run after an untimed and a timed cold default-rules lint of its unsigned
# tree (as benches/sign.sh). Every tree is generated and synced before the first run, and the runs
# start GAP seconds apart (default 390): on a journal-less ext4 a freed inode is skipped by the
# allocator for up to 360 s (`recently_deleted`), and each sign frees the 50k old files it
# replaces. The builds alternate in the order given; the trees are removed when the script ends.
# Usage: benches/sign_ab.sh N RUNS BIN...   e.g. benches/sign_ab.sh 100000 3 /tmp/old /tmp/new
#   GAP=SECONDS to change the spacing (needs python3, for the timing)
#   GEN_TREE=BIN to use a generator already built (`cargo build --release --example gen_tree`)
#   PAUSE_CARGO=1 to stop (SIGSTOP) this user's cargo, rustc and test processes during each timed
#   window and continue them after (for runs beside a build)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:?number of tools}
runs=${2:?runs per build}
shift 2
bins=("$@")
[ ${#bins[@]} -gt 0 ] || { echo "usage: $0 N RUNS BIN..." >&2; exit 2; }
gap=${GAP:-390}
gen=${GEN_TREE:-./target/release/examples/gen_tree}
[ -n "${GEN_TREE:-}" ] || cargo build --release --quiet --example gen_tree
# shellcheck source=benches/timing.sh
source benches/timing.sh # run ARGV...: "wall user sys maxrss_kib"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
total=$((runs * ${#bins[@]}))
for i in $(seq "$total"); do
  "$gen" "$work/tree-$i" --tools "$n" --seed 1 >/dev/null
  RYE_SIGNING_KEY_DIR=$work/key-$i "${bins[0]}" keys generate --user-space "$work/tree-$i/user" \
    --system-space "gen=$work/tree-$i/system" >/dev/null
done
sync
start=$(($(date +%s) + gap))
for i in $(seq "$total"); do
  bin=${bins[$(((i - 1) % ${#bins[@]}))]}
  out=$work/tree-$i
  at=$((start + (i - 1) * gap))
  now=$(date +%s)
  [ "$at" -le "$now" ] || sleep $((at - now))
  spaces=(--user-space "$out/user" --system-space "gen=$out/system")
  lint=("$bin" lint "$out/project" "${spaces[@]}" --format json --no-progress --no-cache)
  [ -z "${PAUSE_CARGO:-}" ] || { pkill -STOP -f "cargo|rustc|target/debug|clippy-driver" || true; sleep 1; }
  "${lint[@]}" >/dev/null || true
  read -r lw _ _ _ <<<"$(run "${lint[@]}")"
  read -r sw su ss rss <<<"$(RYE_SIGNING_KEY_DIR=$work/key-$i run "$bin" sign '*' "$out/project" "${spaces[@]}")"
  [ -z "${PAUSE_CARGO:-}" ] || pkill -CONT -f "cargo|rustc|target/debug|clippy-driver" || true
  items=$(grep -rl 'rye:signed:' "$out/project/.ai/tools" | wc -l)
  echo "$bin run $i: lint $lw s, sign $sw s (user $su s, sys $ss s, $((rss / 1024)) MiB), $items files signed: $(awk -v a="$sw" -v b="$lw" 'BEGIN {printf "%.2f", a / b}')×"
done
