#!/usr/bin/env bash
# Whole-run figures for the README: generate a tree of N tools, then time `ryechain lint` on it
# against `sha256sum` reading and hashing the very same files, warm page cache, same run.
# Usage: benches/measure.sh N [RUNS]   (needs GNU time at /usr/bin/time)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:?number of tools}
runs=${2:-3}
out=${TMPDIR:-/tmp}/ryechain-measure-$n
cargo build --release --quiet --bin ryechain --example gen_tree
./target/release/examples/gen_tree "$out" --tools "$n" --seed 1 --force >&2
files=$(find "$out/project/.ai" "$out/user/.ai" "$out/system/.ai" -type f | wc -l)
bytes=$(find "$out/project/.ai" "$out/user/.ai" "$out/system/.ai" -type f -printf '%s\n' | awk '{s+=$1} END {print s}')
echo "tree: $n tools, $files files, $bytes bytes, $(nproc) cores"
lint() {
  ./target/release/ryechain lint "$out/project" --user-space "$out/user" \
    --system-space "gen=$out/system" --ignore integrity --format json >/dev/null || [ $? -eq 1 ]
}
hash() {
  find "$out/project/.ai" "$out/user/.ai" "$out/system/.ai" -type f -print0 |
    xargs -0 sha256sum >/dev/null
}
export -f lint hash
export out
lint; hash # warm the page cache
for i in $(seq "$runs"); do
  /usr/bin/time -f "lint      %e s wall  %U s user  %S s sys  %M KiB peak RSS" bash -c lint
  /usr/bin/time -f "sha256sum %e s wall  %U s user  %S s sys  %M KiB peak RSS" bash -c hash
done
