#!/usr/bin/env bash
# Batch signing against the lint of the same tree, same run: `ryechain sign '*'` of every project
# tool of a generated tree, beside the cold default-rules lint of that tree before it is signed
# and after. Each run generates a fresh tree in a fresh directory (on ext4, creating files soon
# after many were deleted makes the inode allocator skip the recently freed ones: a tree
# regenerated in place signs slower), generates a signing key trusted in its user space, waits
# PAUSE seconds (default 45) for the generator's writes to reach the disk, then times the three
# commands from fork to exit.
# Usage: benches/sign.sh N [RUNS]   (needs python3, for the timing)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:?number of tools}
runs=${2:-2}
pause=${PAUSE:-45}
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
  show "lint" "$(run "${lint[@]}")"
  before=$wall
  sign=("$bin" sign '*' "$out/project" "${spaces[@]}")
  show "sign '*'" "$(RYE_SIGNING_KEY_DIR=$work/key-$i run "${sign[@]}")"
  signed=$wall
  show "lint signed" "$(run "${lint[@]}")"
  after=$wall
  items=$(grep -rl 'rye:signed:' "$out/project/.ai/tools" | wc -l)
  echo "run $i: $items files signed; sign / lint before = $(awk -v a="$signed" -v b="$before" 'BEGIN {printf "%.2f", a / b}')×, sign / lint of the signed tree = $(awk -v a="$signed" -v b="$after" 'BEGIN {printf "%.2f", a / b}')×"
  rm -rf "$out"
done
