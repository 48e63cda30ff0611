# rye:signed:2026-11-22T07:56:07Z:341b16f74361765b8e6384a5f8d019d7f83173dfded4bf0aa1007c5783cf69a2:WmIptVFxsaeGPCy6fBCLIZeaaqTEBYGGyT-tExyjpYC4kxQdq6GTGKPLoDkTTVaIRd2822VZHzMCEpqERuFLAw==:6abd8e3ed708b1e5
"""Monthly sales summary per region.

PLANTED PROBLEM: unsatisfied-inputs. The runtime acme/runtimes/report-renderer declares
`inputs: [rows, columns]`; this tool declares `OUTPUTS = ["rows"]`, so `columns` is not provided.
"""

import sqlite3
from pathlib import Path

__version__ = "1.1.0"
__executor_id__ = "acme/runtimes/report-renderer"
__tool_type__ = "python"
__category__ = "acme/reports"
__tool_description__ = "Monthly sales per region, ready for the report renderer"

OUTPUTS = ["rows"]

CONFIG_SCHEMA = {
    "type": "object",
    "properties": {
        "database": {"type": "string", "default": "data/sales.db"},
        "month": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}$"},
    },
    "required": ["month"],
}

QUERY = """
SELECT region, COUNT(*) AS orders, ROUND(SUM(total), 2) AS revenue
FROM orders
WHERE strftime('%Y-%m', created_at) = ?
GROUP BY region
ORDER BY revenue DESC
"""


def execute(params: dict, project_path: str) -> dict:
    database = Path(project_path) / params.get("database", "data/sales.db")
    with sqlite3.connect(database) as conn:
        rows = [dict(zip(("region", "orders", "revenue"), r)) for r in conn.execute(QUERY, (params["month"],))]
    return {"success": True, "rows": rows}


def main() -> None:
    import json
    import sys

    print(json.dumps(execute(json.loads(sys.stdin.read() or "{}"), ".")))


if __name__ == "__main__":
    main()
