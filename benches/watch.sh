#!/usr/bin/env bash
# `ryechain lint --watch` as a user meets it on a big tree: start it, then edit files the way an
# editor or a shell does and print the line the watch prints for each batch (files changed,
# files re-checked, the time from reading the batch to the new and fixed findings). Edits, each
# restored: one tool's body (`>>`), its header (`sed -i`: the description), and the header (the
# version) of the project runtime most tools name; then a tool added (a copy of the first one)
# and removed.
# Usage: benches/watch.sh N          generate a signed tree of N tools, then watch it
#        TREE=DIR benches/watch.sh N  an existing tree (DIR/{project,user,system})
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:?number of tools}
cargo build --release --quiet --bin ryechain --example gen_tree
if [ -n "${TREE:-}" ]; then
  out=$TREE
else
  out=${TMPDIR:-/tmp}/ryechain-watch-$n
  ./target/release/examples/gen_tree "$out" --tools "$n" --seed 1 --force --sign >&2
fi
log=$(mktemp)
backup=$(mktemp)
./target/release/ryechain lint "$out/project" --user-space "$out/user" \
  --system-space "gen=$out/system" --watch --quiet --no-progress >"$log" 2>&1 &
pid=$!
added= # the tool the last steps add
trap 'kill -INT $pid 2>/dev/null || true; rm -f "$log" "$backup" ${added:+"$added"}' EXIT
until grep -q '^watching' "$log"; do
  kill -0 $pid 2>/dev/null || { cat "$log" >&2; exit 2; }
  sleep 0.2
done
seen=0 # batch lines printed so far
step() { # step DESCRIPTION: wait for the next batch's line (up to 10 s) and print it
  for _ in $(seq 100); do
    [ "$(grep -c 're-checked' "$log")" -gt $seen ] && break
    sleep 0.1
  done
  seen=$((seen + 1))
  printf '%-24s %s\n' "$1" "$(grep 're-checked' "$log" | sed -n "${seen}p")"
  sleep 0.5 # a batch ends when the events pause
}
leaf=$(find "$out/project/.ai/tools" -name '*.py' -not -path '*/rye/*' | sort | sed -n 1p)
rt=$(grep -rhoE '^__executor_id__ = "[^"]+"' "$out/project/.ai/tools" | sort | uniq -c |
  sort -rn | sed -n '1s/.*"\(.*\)"/\1/p')
rt_file=$(find "$out/project/.ai/tools" -path "*/$rt.*" | sed -n 1p)
[ -n "$rt_file" ] || { echo "no project runtime named $rt" >&2; exit 2; }
echo "tree: $out; tool: ${leaf#"$out"/}; runtime: ${rt_file#"$out"/}"
cp -p "$leaf" "$backup"
echo "# an edit" >>"$leaf"
step "tool body edited"
sed -i 's/^__tool_description__ = "/__tool_description__ = "Edited: /' "$leaf"
step "tool header edited"
cp "$backup" "$leaf"
step "tool restored"
cp -p "$rt_file" "$backup"
sed -i -E '0,/^(__)?version(__ =|:) "/s/^((__)?version(__ =|:) ")/\19/' "$rt_file"
step "runtime header edited"
cp "$backup" "$rt_file"
step "runtime restored"
# A new tool (a copy of the first one, beside it), then removed again: ids come and go.
added="$(dirname "$leaf")/watch_added.py"
cp "$leaf" "$added"
step "tool added"
rm -f "$added"
step "tool removed"
