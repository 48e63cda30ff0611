#!/usr/bin/env bash
# Fuzz every parser of untrusted text. Seeds each target's corpus from the repository's own files
# (example tools, bundled runtimes, rule files, lockfile and trust fixtures), then runs each target
# for SECONDS with a per-input timeout (a hang is a finding) and slow-unit reporting. Findings land
# in fuzz/artifacts/<target>/; turn each into a regression test (tests/fuzz_regressions.rs).
# Usage: fuzz/run.sh SECONDS [TARGET...]   (needs cargo-fuzz; stable Rust works with --sanitizer none)
set -euo pipefail
cd "$(dirname "$0")"
secs=${1:?seconds per target}
shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(tool_headers signature_lines trust_documents lockfiles rule_files workspace_files)
seed() {
  local target=$1
  shift
  mkdir -p "corpus/$target"
  for f in "$@"; do
    [ -f "$f" ] && cp "$f" "corpus/$target/seed-$(sha256sum "$f" | cut -c1-16)"
  done
  return 0
}
shopt -s globstar nullglob
tools=(../examples/**/.ai/tools/**/*.{py,yaml,js,mjs,sh} ../.ai/tools/**/*.yaml ../tests/fixtures/**/*.{py,yaml,yml,js,sh})
seed tool_headers "${tools[@]}"
seed workspace_files "${tools[@]}"
seed signature_lines "${tools[@]}"
seed rule_files ../rules/**/*.yaml
seed lockfiles ../tests/fixtures/**/*.lock.json
seed trust_documents ../examples/**/*.toml ../tests/fixtures/**/*.toml ../tests/fixtures/**/*.pem
cargo fuzz build --sanitizer none -O >/dev/null
failed=0
for t in "${targets[@]}"; do
  echo "== $t ($secs s)"
  set +e
  cargo fuzz run --sanitizer none -O "$t" "corpus/$t" -- \
    -max_total_time="$secs" -timeout=10 -report_slow_units=2 -max_len=65536 >"corpus/$t.log" 2>&1
  status=$?
  set -e
  grep -E "^(Done|==[0-9]+== ERROR|SUMMARY|Slowest unit)|panicked|Test unit written" "corpus/$t.log" || true
  [ "$status" -eq 0 ] || { echo "$t: the fuzzer stopped on a finding (exit $status)"; failed=1; }
done
if [ "$failed" -ne 0 ]; then
  echo "findings in fuzz/artifacts/: make each a regression test"
  exit 1
fi
echo "no findings"
