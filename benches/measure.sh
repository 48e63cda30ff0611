#!/usr/bin/env bash
# Whole-run figures for docs/performance.md: generate a tree of N tools, then time `ryechain lint` on it
# against `sha256sum` reading and hashing the very same files (two processes, one per core),
# warm page cache, same run. Two lint cases:
#   ignore   `ryechain lint --ignore integrity` (no file is hashed);
#   default  `ryechain lint` with the default rules: every file hashed, every signature verified.
# The tree is signed (`gen_tree --sign`: a throwaway key trusted in the user space) when the
# generator knows the flag; otherwise the default case runs on the unsigned tree, where every
# item is an `unsigned-item` warning and nothing is verified, and the script says so.
# Usage: benches/measure.sh N [RUNS]   (needs python3, for the timing)
#   TREE=DIR benches/measure.sh N [RUNS]   measures an existing tree (DIR/{project,user,system})
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:?number of tools}
runs=${2:-3}
cargo build --release --quiet --bin ryechain --example gen_tree --example integrity_floor
gen=./target/release/examples/gen_tree
if [ -n "${TREE:-}" ]; then
  out=$TREE
  signed="given tree"
else
  out=${TMPDIR:-/tmp}/ryechain-measure-$n
  if "$gen" --help 2>&1 | grep -q -- '--sign'; then
    "$gen" "$out" --tools "$n" --seed 1 --force --sign >&2
    signed=signed
  else
    "$gen" "$out" --tools "$n" --seed 1 --force >&2
    signed="UNSIGNED (gen_tree has no --sign yet: the default case verifies no signature)"
  fi
fi
files=$(find "$out/project/.ai" "$out/user/.ai" "$out/system/.ai" -type f | wc -l)
bytes=$(find "$out/project/.ai" "$out/user/.ai" "$out/system/.ai" -type f -printf '%s\n' |
  awk '{s+=$1} END {print s}')
echo "tree: $out, $n tools, $files files, $bytes bytes, $(nproc) cores, $signed"
lint_argv() { # lint_argv CASE [cached]: the lint command, cold (--no-cache) unless `cached`
  argv=(./target/release/ryechain lint "$out/project" --user-space "$out/user"
    --system-space "gen=$out/system" --format json --no-progress)
  [ "$1" = ignore ] && argv+=(--ignore integrity)
  [ "${2:-}" = cached ] || argv+=(--no-cache)
}
lint() { # lint CASE [cached], untimed
  lint_argv "$@"
  RYECHAIN_CACHE_DIR=$cache_dir "${argv[@]}" >/dev/null || [ $? -eq 1 ]
}
hash_files() { # two sha256sum processes, each over half of the files
  find "$out/project/.ai" "$out/user/.ai" "$out/system/.ai" -type f -print0 |
    xargs -0 -P 2 -n $(((files + 1) / 2)) sha256sum >/dev/null
}
cache_dir=$(mktemp -d)
trap 'rm -rf "$cache_dir"' EXIT
export -f hash_files
export out files cache_dir
# shellcheck source=benches/timing.sh
source benches/timing.sh # run ARGV...: "wall user sys maxrss_kib"
timed() { # timed LABEL hash_files | timed LABEL lint CASE [cached]: prints the line, sets $wall
  local label=$1 line
  shift
  if [ "$1" = hash_files ]; then
    line=$(run bash -c hash_files)
  else
    shift
    lint_argv "$@"
    line=$(RYECHAIN_CACHE_DIR=$cache_dir run "${argv[@]}")
  fi
  read -r wall user sys rss <<<"$line"
  printf '%-9s %7.3f s wall  %6.2f s user  %5.2f s sys  %5d MiB peak RSS\n' \
    "$label" "$wall" "$user" "$sys" $((rss / 1024)) >&2
}
median() { # median of the numbers given
  printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}
declare -A colds # each case's cold (--no-cache) times in this run
lint ignore; lint default; hash_files # warm the page cache
for i in $(seq "$runs"); do
  for case in ignore default; do
    timed "sha256sum" hash_files
    sha=$wall
    timed "$case" lint "$case"
    colds[$case]="${colds[$case]:-} $wall"
    echo "run $i  $case: lint/sha256sum = $(awk -v a="$wall" -v b="$sha" 'BEGIN {printf "%.2f", a / b}')×  (lint $wall s, sha256sum $sha s, peak RSS $((rss / 1024)) MiB)"
  done
done

# What the default rules cannot avoid on a signed tree beyond reading the files: SHA-256 of every
# item and Ed25519 verification of every signature, with the library's functions, phase by phase
# (examples/integrity_floor.rs; needs TREE/keys/public_key.pem, which gen_tree --sign writes).
if [ -f "$out/keys/public_key.pem" ]; then
  timed "sha256sum" hash_files
  ./target/release/examples/integrity_floor "$out" |
    sed "s/^/integrity floor: /; \$a integrity floor: (same-run sha256sum $wall s)"
fi

# The lint cache: a cold run that writes it, runs of the unchanged tree, and a run after one
# tool's body changed (it is restored afterwards). A replay takes a tenth of a second, where one
# sample moves by a few milliseconds: the unchanged tree is run five times and its median taken.
# Ratios against the median of this case's cold runs (the rounds above and the one just before).
leaf=$(find "$out/project/.ai/tools" -name '*.py' -not -path '*/extractors/*' | sort | sed -n 1p)
backup=$(mktemp)
cp -p "$leaf" "$backup"
for case in ignore default; do
  timed "$case" lint "$case"
  nocache=$wall
  colds[$case]="${colds[$case]} $wall"
  # shellcheck disable=SC2086 # the times, one word each
  cold=$(median ${colds[$case]})
  rm -rf "${cache_dir:?}"/*
  timed "$case+write" lint "$case" cached
  echo "cache  $case: cold run writing the cache $wall s ($(awk -v a="$wall" -v b="$nocache" 'BEGIN {printf "%.2f", a / b}')× --no-cache $nocache s), peak RSS $((rss / 1024)) MiB"
  sleep 2.1 # past the racy window of the cache's stamps
  warm=()
  for _ in 1 2 3 4 5; do
    timed "$case warm" lint "$case" cached
    warm+=("$wall")
  done
  med=$(median "${warm[@]}")
  echo "cache  $case: unchanged tree $med s (median of ${warm[*]}) = $(awk -v a="$med" -v b="$cold" 'BEGIN {printf "%.3f", a / b}')× cold (median $cold s), peak RSS $((rss / 1024)) MiB"
  printf '\n# measure.sh edit\n' >>"$leaf"
  timed "$case edit" lint "$case" cached
  echo "cache  $case: one tool's body edited $wall s = $(awk -v a="$wall" -v b="$cold" 'BEGIN {printf "%.3f", a / b}')× cold, peak RSS $((rss / 1024)) MiB"
  cp -p "$backup" "$leaf"
  # The restored file's ctime is new: past the racy window before the next case caches it (or
  # its replay reads it again, as it would any file changed in the two seconds before a run).
  sleep 2.1
done
rm -f "$backup"
