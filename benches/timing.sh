# shellcheck shell=bash
# Sourced by the whole-process benchmark scripts (measure.sh, sign.sh).

# run ARGV...: runs it (output to /dev/null), prints "wall user sys maxrss_kib": wall from fork to
# exit (microseconds; GNU time's %e counts hundredths, a tenth of an unchanged tree's replay, and
# a shell or GNU time in between adds a few milliseconds of its own start), CPU and peak RSS from
# wait4 (the process and the children it waited for).
run() {
  python3 -c '
import os, subprocess, sys, time
start = time.perf_counter()
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
_, status, ru = os.wait4(child.pid, 0)
wall = time.perf_counter() - start
code = os.waitstatus_to_exitcode(status)
if code not in (0, 1):
    sys.exit(f"{sys.argv[1]} exited with {code}")
print(f"{wall:.4f} {ru.ru_utime:.3f} {ru.ru_stime:.3f} {ru.ru_maxrss}")
' "$@"
}
