# rye:signed:2026-11-22T07:56:07Z:f5c4a25d1f0749f48358442ae8cb4c261534431f7641af1739a46ef8b198b816:BDFiwEq-hA1utn7fMgW2N2uXAwXsN4XfPgT-BRiXprpYQ6G6tUAr7nzjB69uGV2jFqxodJ278bAJBDEeCMHiDQ==:6abd8e3ed708b1e5
"""Compress application logs older than a day and delete archives past retention.

PLANTED PROBLEM: unknown-primitive. This tool forgot `__executor_id__`, so it has no executor:
it looks like a primitive, but `acme/ops/rotate_logs` is not a primitive id and would fail at
run time with "Unknown primitive". Fix: `__executor_id__ = "rye/core/runtimes/python/script"`.
"""

import gzip
import json
import shutil
import sys
import time
from pathlib import Path

__version__ = "1.4.2"
__tool_type__ = "python"
__category__ = "acme/ops"
__tool_description__ = "Compress day-old logs and prune old archives"

CONFIG_SCHEMA = {
    "type": "object",
    "properties": {
        "log_dir": {"type": "string", "default": "var/log"},
        "retention_days": {"type": "integer", "default": 14},
    },
}

DAY = 24 * 60 * 60


def compress(path: Path) -> Path:
    target = path.with_suffix(path.suffix + ".gz")
    with open(path, "rb") as src, gzip.open(target, "wb") as dst:
        shutil.copyfileobj(src, dst)
    path.unlink()
    return target


def main() -> None:
    params = json.loads(sys.stdin.read() or "{}")
    log_dir = Path(params.get("log_dir", "var/log"))
    now = time.time()
    compressed = [str(compress(p)) for p in log_dir.glob("*.log") if now - p.stat().st_mtime > DAY]
    cutoff = now - params.get("retention_days", 14) * DAY
    pruned = []
    for archive in log_dir.glob("*.gz"):
        if archive.stat().st_mtime < cutoff:
            archive.unlink()
            pruned.append(str(archive))
    print(json.dumps({"success": True, "compressed": compressed, "pruned": pruned}))


if __name__ == "__main__":
    main()
