#!/usr/bin/env bash
# What `ryechain exec` adds over running the tool directly: a trivial signed Python tool run
# through its chain (lockfile checked, every element verified, env, anchor, templating, spawn)
# against `python3 tool.py` on the same stdin, whole process, warm cache (hyperfine, median).
# Usage: benches/exec_overhead.sh [RUNS]   (needs hyperfine: apt-get install hyperfine)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-200}
cargo build --release --quiet --bin ryechain
bin=$PWD/target/release/ryechain
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/project/.ai/tools/bench" "$dir/user"
cat >"$dir/project/.ai/tools/bench/noop.py" <<'PY'
__version__ = "1.0.0"
__tool_type__ = "python"
__executor_id__ = "rye/core/runtimes/python/script"
__category__ = "bench"
__tool_description__ = "Echo the parameters back"
import json, sys
print(json.dumps({"params": json.loads(sys.stdin.read() or "{}")}))
PY
export USER_SPACE="$dir/user"
# The interpreter itself, not a version-manager shim (a pyenv shim is a bash script costing tens of
# milliseconds): both sides run the same binary; RYE_PYTHON pins it for the runtime.
py=$(python3 -c 'import sys; print(sys.executable)')
export RYE_PYTHON="$py"
"$bin" keys generate >/dev/null
"$bin" sign 'bench/*' "$dir/project" >/dev/null
echo '{"n": 1}' >"$dir/params.json"
tool="$dir/project/.ai/tools/bench/noop.py"
# One run first: it writes the lockfile, which every measured run then checks.
"$bin" exec bench/noop "$dir/project" --params @"$dir/params.json" >/dev/null
# Through hyperfine's shell (it subtracts the shell's own start-up), so python3 can read the
# parameters from the file on stdin as the runtime would give them.
hyperfine --warmup 20 --runs "$runs" --export-json "$dir/result.json" \
  -n 'python3 tool.py' "$py $tool --project-path $dir/project < $dir/params.json" \
  -n 'ryechain exec' "$bin exec bench/noop $dir/project --params @$dir/params.json"
python3 - "$dir/result.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
py, rc = r["python3 tool.py"], r["ryechain exec"]
print(f"median: python3 {py['median']*1000:.2f} ms, ryechain exec {rc['median']*1000:.2f} ms, "
      f"added {(rc['median'] - py['median'])*1000:.2f} ms")
PY
