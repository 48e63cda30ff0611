#!/usr/bin/env bash
# What `ryechain exec` adds to a tool run: a trivial signed bash tool run through its chain
# (lockfile checked, every element verified, env, anchor, templating, spawn in its own process
# group, the run's processes tracked and ended) against `/bin/bash tool.sh PROJECT` on the same
# stdin. Neither side has an interpreter shim. The two commands run in pairs, alternately, and
# the figure is the median of the per-pair differences (so a machine that drifts during the run
# shifts both sides of a pair alike); the medians of each side are printed beside it.
# Usage: benches/exec_overhead.sh [PAIRS] [EXEC FLAGS…]   (default 300 pairs; flags such as
# `--no-cgroup` are passed to `ryechain exec`)
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-300}
shift || true
cargo build --release --quiet --bin ryechain
bin=$PWD/target/release/ryechain
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/project/.ai/tools/bench" "$dir/user"
cat >"$dir/project/.ai/tools/bench/noop.sh" <<'SH'
__version__="1.0.0"
__tool_type__="bash"
__executor_id__="rye/core/runtimes/bash/bash"
__category__="bench"
__tool_description__="Echo the parameters back"
params=$(cat)
printf '{"params": %s}\n' "${params:-{\}}"
SH
export USER_SPACE="$dir/user"
"$bin" keys generate >/dev/null
"$bin" sign 'bench/*' "$dir/project" >/dev/null
echo '{"n": 1}' >"$dir/params.json"
tool="$dir/project/.ai/tools/bench/noop.sh"
# One run first: it writes the lockfile, which every measured run then checks.
"$bin" exec bench/noop "$dir/project" --params @"$dir/params.json" >/dev/null
python3 - "$pairs" "$bin" "$tool" "$dir" "$@" <<'PY'
import statistics, subprocess, sys, time
pairs, bin, tool, d = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
flags = sys.argv[5:]
params = open(f"{d}/params.json", "rb").read()
direct = ["/bin/bash", tool, f"{d}/project"]
exec_ = [bin, "exec", "bench/noop", f"{d}/project", "--params", f"@{d}/params.json", *flags]

def once(argv, stdin):
    t = time.perf_counter_ns()
    out = subprocess.run(argv, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    dt = time.perf_counter_ns() - t
    assert out.returncode == 0 and b'"n": 1' in out.stdout, out
    return dt / 1e6

for _ in range(20):  # warm-up
    once(direct, params); once(exec_, b"")
a, b = [], []
for i in range(pairs):
    # Alternate which side goes first, so neither always runs on a cooler cache.
    if i % 2:
        x = once(exec_, b""); y = once(direct, params)
    else:
        y = once(direct, params); x = once(exec_, b"")
    a.append(x); b.append(y)
diff = sorted(x - y for x, y in zip(a, b))
q = lambda v, p: v[min(len(v) - 1, int(p * len(v)))]
print(f"{pairs} pairs{' (' + ' '.join(flags) + ')' if flags else ''}: bash tool.sh median {statistics.median(b):.2f} ms, "
      f"ryechain exec median {statistics.median(a):.2f} ms")
print(f"added by exec (median of the pairs' differences): {statistics.median(diff):.2f} ms "
      f"(p10 {q(diff, 0.1):.2f}, p90 {q(diff, 0.9):.2f})")
PY
