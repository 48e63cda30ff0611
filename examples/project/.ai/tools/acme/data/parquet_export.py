# rye:signed:2026-11-22T07:56:07Z:edd6cfe7c446929a48aa92d6f4aa8773d0a653e1eae4619e8087358487924a55:GyhfXPuA2uImMMhR5EgK36fzpWZ7WZjA2nhOkUBfj3muMN65dNYFnKqKgVOH6dkDBWqZdseJ9VjOYt3GdJd1Dw==:6abd8e3ed708b1e5
"""Export a SQLite table to a Parquet file.

Example (project space, clean): runs through the project runtime acme/runtimes/python-pinned,
a four-element chain across all three spaces.
"""

import json
import sqlite3
import sys
from pathlib import Path

__version__ = "1.0.3"
__executor_id__ = "acme/runtimes/python-pinned"
__tool_type__ = "python"
__category__ = "acme/data"
__tool_description__ = "Export one SQLite table to Parquet"

CONFIG_SCHEMA = {
    "type": "object",
    "properties": {
        "database": {"type": "string"},
        "table": {"type": "string"},
        "output": {"type": "string", "default": "exports"},
    },
    "required": ["database", "table"],
}


def read_table(database: Path, table: str) -> tuple:
    with sqlite3.connect(database) as conn:
        cursor = conn.execute(f'SELECT * FROM "{table}"')
        names = [column[0] for column in cursor.description]
        return names, cursor.fetchall()


def write_parquet(names: list, rows: list, target: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns = {name: [row[i] for row in rows] for i, name in enumerate(names)}
    target.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(columns), target)


def main() -> None:
    params = json.loads(sys.stdin.read() or "{}")
    project = Path(sys.argv[sys.argv.index("--project-path") + 1]) if "--project-path" in sys.argv else Path(".")
    names, rows = read_table(project / params["database"], params["table"])
    target = project / params.get("output", "exports") / f"{params['table']}.parquet"
    write_parquet(names, rows, target)
    print(json.dumps({"success": True, "rows": len(rows), "path": str(target)}))


if __name__ == "__main__":
    main()
