#!/usr/bin/env bash
# Whole-process figures of single-item commands (lazy loading) for docs/performance.md: generate a 1k-tool
# and a 100k-tool tree, then time `ryechain exec ITEM --dry-run`, `ryechain chain ITEM --json` and
# `ryechain verify ITEM` on each
# with hyperfine (warm page cache), and `ryechain rules` (no loading at all) as the startup floor.
# Usage: benches/single_item.sh [RUNS]   (needs hyperfine and GNU time at /usr/bin/time)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-50}
cargo build --release --quiet --bin ryechain --example gen_tree
bin=$PWD/target/release/ryechain
base=${TMPDIR:-/tmp}/ryechain-single
for n in 1000 100000; do
  [ -f "$base-$n/manifest.json" ] ||
    ./target/release/examples/gen_tree "$base-$n" --tools "$n" --seed 1 --force >&2
done
# The same kind of item in both trees: the first project Python tool (sorted) under `acme/`.
item_of() { (cd "$1/project/.ai/tools" && find acme -name '*.py' | LC_ALL=C sort | sed -n '1s/\.py$//p'); }
cmds=("$bin rules")
for n in 1000 100000; do
  t=$base-$n
  item=$(item_of "$t")
  spaces="--user-space $t/user --system-space $t/system"
  echo "tree $n: item $item, $(find "$t/project/.ai" "$t/user/.ai" "$t/system/.ai" -type f | wc -l) files" >&2
  cmds+=("$bin exec $item $t/project --dry-run $spaces" "$bin chain $item $t/project --json $spaces" "$bin verify $item --path $t/project $spaces")
  # shellcheck disable=SC2086
  /usr/bin/time -f "chain $n tools: %e s wall, %M KiB peak RSS" $bin chain "$item" "$t/project" --json $spaces >/dev/null || true
done
hyperfine -N -i --warmup 5 --runs "$runs" "${cmds[@]}"
