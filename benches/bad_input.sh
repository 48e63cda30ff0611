#!/usr/bin/env bash
# Bad input at scale: a generated tree of N tools where every tenth file is broken (in turn: a
# Python syntax error, bytes that are not UTF-8, cut in half, YAML that does not parse, 20,000
# nested brackets), plus a folder nesting 200 deep and files of 10 MB (over the loader's 8 MiB
# limit) and of 7 MB (read and parsed); and a second tree of N tools all in one folder. Lints
# both with the default rules and with `--ignore integrity`; the exit code must be 0 or 1 (2 is
# an internal error), and the peak RSS is printed (GNU time).
# Usage: benches/bad_input.sh N   (needs GNU time at /usr/bin/time)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:?number of tools}
out=${TMPDIR:-/tmp}/ryechain-bad-$n
cargo build --release --quiet --bin ryechain --example gen_tree
./target/release/examples/gen_tree "$out" --tools "$n" --seed 1 --force >&2
tools=$out/project/.ai/tools
# Every tenth file, broken five ways in turn.
i=0
while IFS= read -r -d '' f; do
  case $((i % 5)) in
    0) printf '\n__version__ = "1.0\ndef broken(:\n' >>"$f" ;;
    1) printf '\xff\xfe\x80 not utf-8\n' >>"$f" ;;
    2) truncate -s $(($(stat -c %s "$f") / 2)) "$f" ;;
    3) printf '\nkey: [unclosed, {\n  - : :\n' >>"$f" ;;
    4) awk 'BEGIN { for (k = 0; k < 20000; k++) printf "[" }' >>"$f" ;;
  esac
  i=$((i + 1))
done < <(find "$out/project/.ai" "$out/user/.ai" "$out/system/.ai" -type f -print0 |
  sort -z | awk -v RS='\0' -v ORS='\0' 'NR % 10 == 0')
# A folder nesting 200 deep, with a tool at the bottom.
deep=$tools/deep
for _ in $(seq 200); do deep=$deep/d; done
mkdir -p "$deep"
printf '__version__ = "1.0.0"\n__executor_id__ = "rye/core/primitives/subprocess"\n' >"$deep/bottom.py"
# Files of 10 MB (not read: over the limit) and of 7 MB (read and parsed).
mkdir -p "$tools/huge"
big() { # big BYTES: a tool header, then filler lines up to about BYTES
  awk -v n="$1" 'BEGIN {
    printf "__version__ = \"1.0.0\"\n__executor_id__ = \"rye/core/primitives/subprocess\"\n"
    for (s = 0; s < n; s += 24) printf "x = [1, 2, 3]  # filler\n"
  }'
}
for k in $(seq 10); do
  big 10000000 >"$tools/huge/ten_mb_$k.py"
  big 7000000 >"$tools/huge/seven_mb_$k.py"
done
# The second tree: N tools in one folder.
flat=${out}-flat
rm -rf "$flat"
mkdir -p "$flat/project/.ai/tools/flat" "$flat/user/.ai/tools" "$flat/system/.ai/tools"
awk -v dir="$flat/project/.ai/tools/flat" -v n="$n" 'BEGIN {
  for (k = 0; k < n; k++) {
    f = sprintf("%s/t%06d.py", dir, k)
    printf "__version__ = \"1.0.%d\"\n__executor_id__ = \"rye/core/primitives/subprocess\"\n\ndef main():\n    return %d\n", k, k > f
    close(f)
  }
}'
for tree in "$out" "$flat"; do
  files=$(find "$tree/project/.ai" "$tree/user/.ai" "$tree/system/.ai" -type f | wc -l)
  echo "tree: $tree, $files files"
  for extra in "" "--ignore integrity"; do
    rc=0
    # shellcheck disable=SC2086
    /usr/bin/time -f "lint ${extra:-(default rules)}: %e s wall, %M KiB peak RSS" \
      ./target/release/ryechain lint "$tree/project" --user-space "$tree/user" \
      --system-space "gen=$tree/system" $extra --format json --no-progress >"$tree.json" ||
      rc=$?
    echo "exit $rc, $(grep -c '"rule"' "$tree.json") findings"
    [ "$rc" -le 1 ] || { echo "internal error (exit $rc)" >&2; exit 1; }
  done
done
