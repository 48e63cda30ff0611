# rye:signed:2026-11-22T07:56:07Z:bc005ddbca83e9f74db6e85a1969eb92be800fbc39edc6e2e8acebd3045c2226:gqj9fcZSRxJZiJ0MsuZgPYk5g42z6zf3PC7VoQ7-3jZX3ZIunSUjAy56vpfAOzksMtnpJvA1Hn_BcR5uftqhCg==:6abd8e3ed708b1e5
"""Profile a CSV file: row count, null ratio and distinct values per column.

Example (project space, clean): runs through the user runtime acme/runtimes/python-traced.
"""

import csv
import json
import sys
from pathlib import Path

__version__ = "0.4.0"
__executor_id__ = "acme/runtimes/python-traced"
__tool_type__ = "python"
__category__ = "acme/data"
__tool_description__ = "Row count, null ratio and distinct values per CSV column"

CONFIG_SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "CSV file, relative to the project"},
        "delimiter": {"type": "string", "default": ","},
        "max_distinct": {"type": "integer", "default": 20},
    },
    "required": ["path"],
}


def profile(rows: list, max_distinct: int) -> dict:
    columns = rows[0].keys() if rows else []
    report = {}
    for column in columns:
        values = [row[column] for row in rows]
        nulls = sum(1 for value in values if value in ("", "NULL", "null"))
        distinct = sorted(set(values))
        report[column] = {
            "null_ratio": round(nulls / len(values), 4),
            "distinct": len(distinct),
            "sample": distinct[:max_distinct],
        }
    return report


def main() -> None:
    params = json.loads(sys.stdin.read() or "{}")
    project = Path(sys.argv[sys.argv.index("--project-path") + 1]) if "--project-path" in sys.argv else Path(".")
    with open(project / params["path"], newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter=params.get("delimiter", ",")))
    print(json.dumps({"success": True, "rows": len(rows), "columns": profile(rows, params.get("max_distinct", 20))}))


if __name__ == "__main__":
    main()
