#!/usr/bin/env bash
# Batch signing against the lint of the same tree, same run: `ryechain sign '*'` of every project
# tool of a generated tree, beside the cold default-rules lint of that tree before it is signed
# and after. Each run generates a fresh tree in a fresh directory and a signing key trusted in its
# user space, syncs, waits PAUSE seconds (default 310), then times the three commands from fork to
# exit, after an untimed lint (see below). The pause matters on a journal-less ext4 (this VM's root): the inode allocator skips a
# freed inode for 60 s after it was freed, 300 s while its inode-table block is dirty (and new
# files dirty those blocks), one buffer lookup each (`recently_deleted` in `perf`). Creating files
# within five minutes of deleting many — a tree removed, or the previous run's 50k replaced files —
# costs seconds of kernel time that are not signing's (one such run: 14.9 s, 23.8 s of it system
# time). The trees are removed when the script ends.
# Usage: benches/sign.sh N [RUNS]   (needs python3, for the timing)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:?number of tools}
runs=${2:-2}
pause=${PAUSE:-310}
cargo build --release --quiet --bin ryechain --example gen_tree
bin=./target/release/ryechain
# shellcheck source=benches/timing.sh
source benches/timing.sh # run ARGV...: "wall user sys maxrss_kib"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
show() { # show LABEL LINE: prints the figures, sets $wall
  read -r wall user sys rss <<<"$2"
  printf '%-12s %7.3f s wall  %6.2f s user  %5.2f s sys  %5d MiB peak RSS\n' \
    "$1" "$wall" "$user" "$sys" $((rss / 1024))
}
for i in $(seq "$runs"); do
  out=$work/tree-$i
  ./target/release/examples/gen_tree "$out" --tools "$n" --seed 1 >&2
  spaces=(--user-space "$out/user" --system-space "gen=$out/system")
  RYE_SIGNING_KEY_DIR=$work/key-$i "$bin" keys generate "${spaces[@]}" >/dev/null
  sync
  sleep "$pause"
  lint=("$bin" lint "$out/project" "${spaces[@]}" --format json --no-progress --no-cache)
  # Untimed: on this VM the first run after minutes of idling pays several seconds of system time
  # (7.3–10.7 s against 1.9–2.7 s for the same lint run again at once), whatever it runs.
  "${lint[@]}" >/dev/null || true
  show "lint" "$(run "${lint[@]}")"
  before=$wall
  sign=("$bin" sign '*' "$out/project" "${spaces[@]}")
  show "sign '*'" "$(RYE_SIGNING_KEY_DIR=$work/key-$i run "${sign[@]}")"
  signed=$wall
  show "lint signed" "$(run "${lint[@]}")"
  after=$wall
  items=$(grep -rl 'rye:signed:' "$out/project/.ai/tools" | wc -l)
  echo "run $i: $items files signed; sign / lint before = $(awk -v a="$signed" -v b="$before" 'BEGIN {printf "%.2f", a / b}')×, sign / lint of the signed tree = $(awk -v a="$signed" -v b="$after" 'BEGIN {printf "%.2f", a / b}')×"
done
