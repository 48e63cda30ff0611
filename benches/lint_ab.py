#!/usr/bin/env python3
# Two builds of ryechain against each other on one tree, alternately (the order swapped every
# round): the cold lint (`--no-cache`) and the lint cache's replay (each build with a cache folder
# of its own, filled before the first round), each under `/usr/bin/time -v`. Prints the medians
# of wall, peak RSS, user and system CPU per build.
# Usage: benches/lint_ab.py OLD_BINARY NEW_BINARY TREE [ROUNDS]   (TREE from
# `gen_tree TREE --tools 100000 --seed 1`; default 5 rounds)
import os, re, statistics, subprocess, sys, tempfile, time
old, new, T = sys.argv[1:4]
n = int(sys.argv[4]) if len(sys.argv) > 4 else 5
bins = {"old": old, "new": new}
cache = tempfile.mkdtemp(prefix="lint_ab.")
def cmd(b, cold):
    c = ["/usr/bin/time", "-v", bins[b], "lint", f"{T}/project", "--user-space", f"{T}/user",
         "--system-space", f"gen={T}/system", "-q"]
    return c + (["--no-cache"] if cold else [])
def run(b, cold):
    env = dict(os.environ, RYECHAIN_CACHE_DIR=f"{cache}/{b}")
    t = time.perf_counter()
    p = subprocess.run(cmd(b, cold), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1)) / 1024
    user = float(re.search(r"User time \(seconds\): ([\d.]+)", p.stderr).group(1))
    sys_ = float(re.search(r"System time \(seconds\): ([\d.]+)", p.stderr).group(1))
    return wall, rss, user, sys_, p.returncode
res = {(b, c): [] for b in bins for c in (True, False)}
# warm the page cache and each build's own lint cache
for b in bins:
    run(b, True); run(b, False)
for i in range(n):
    order = ["old", "new"] if i % 2 == 0 else ["new", "old"]
    for b in order:
        res[(b, True)].append(run(b, True))
    for b in order:
        res[(b, False)].append(run(b, False))
    print(i, {f"{k[0]} {'cold' if k[1] else 'cached'}": round(v[-1][0], 2) for k, v in res.items()}, flush=True)
for (b, c), v in res.items():
    med = lambda j: statistics.median(x[j] for x in v)
    print(f"{b} {'cold' if c else 'cached'}: wall {med(0):.2f} s (min {min(x[0] for x in v):.2f}, max {max(x[0] for x in v):.2f}), "
          f"peak RSS {med(1):.0f} MiB (max {max(x[1] for x in v):.0f}), user {med(2):.2f} s, sys {med(3):.2f} s, rc {set(x[4] for x in v)}")
