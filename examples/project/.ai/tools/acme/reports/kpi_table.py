# rye:signed:2026-11-22T07:56:07Z:d931873f9f142efeb31addf641156ea0708122f9c10b78ffff4f1b1135e612bd:xB5EoxvH9YJygYc8Len19F_7XFmQSRl-ylXKdtBxmzp-x04MX1o1Lvqe3zzIOa1wucmq5IMth9fjku6T3p1vBQ==:6abd8e3ed708b1e5
"""Weekly KPI table for the leadership report.

Example (project space, clean): declares `OUTPUTS` covering every input the runtime
acme/runtimes/report-renderer requires.
"""

import json
import statistics
from pathlib import Path

__version__ = "2.1.0"
__executor_id__ = "acme/runtimes/report-renderer"
__tool_type__ = "python"
__category__ = "acme/reports"
__tool_description__ = "Weekly KPI table: signups, activation and churn"

OUTPUTS = ["rows", "columns"]

COLUMNS = ["week", "signups", "activated", "activation_rate", "churned"]


def load_weeks(path: Path) -> list:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)["weeks"]


def execute(params: dict, project_path: str) -> dict:
    weeks = load_weeks(Path(project_path) / params.get("source", "data/kpi.json"))
    rows = []
    for week in weeks[-params.get("last", 8):]:
        rate = week["activated"] / week["signups"] if week["signups"] else 0.0
        rows.append([week["week"], week["signups"], week["activated"], round(rate, 3), week["churned"]])
    median_rate = statistics.median(row[3] for row in rows) if rows else 0.0
    return {"success": True, "columns": COLUMNS, "rows": rows, "median_activation": median_rate}


def main() -> None:
    import sys

    print(json.dumps(execute(json.loads(sys.stdin.read() or "{}"), ".")))


if __name__ == "__main__":
    # Edited after signing (planted: content-hash-mismatch).
    main()
