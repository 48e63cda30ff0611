#!/usr/bin/env python3
# Two builds of ryechain against each other on `exec --dry-run` of the trivial signed bash tool of
# benches/exec_overhead.sh (a short command: mostly start-up and the base load's walk of a few
# folders), in alternating pairs; prints the median of the per-pair differences.
# Usage: benches/exec_dry_ab.py OLD_BINARY NEW_BINARY DIR [PAIRS]   (DIR holds `project/` with
# `bench/noop` signed, `user/` with the key, `params.json`, as benches/exec_overhead.sh makes them)
import os, statistics, subprocess, sys, time
old, new, d = sys.argv[1:4]
n = int(sys.argv[4]) if len(sys.argv) > 4 else 200
env = dict(os.environ, USER_SPACE=f"{d}/user")
def once(b):
    argv = [b, "exec", "bench/noop", f"{d}/project", "--params", f"@{d}/params.json", "--dry-run"]
    t = time.perf_counter_ns()
    p = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    dt = (time.perf_counter_ns() - t) / 1e6
    assert p.returncode == 0 and b"validation_passed" in p.stdout
    return dt
for _ in range(10):
    once(old); once(new)
a, b = [], []
for i in range(n):
    if i % 2: x = once(new); y = once(old)
    else: y = once(old); x = once(new)
    a.append(x); b.append(y)
diff = sorted(x - y for x, y in zip(a, b))
q = lambda v, p: sorted(v)[int(p * (len(v) - 1))]
print(f"new-old median {statistics.median(diff):+.3f} ms (p10 {q(diff,.1):+.3f}, p90 {q(diff,.9):+.3f}); old median {statistics.median(b):.2f} ms, new median {statistics.median(a):.2f} ms, {n} pairs")
