"""Check JSON files against a JSON schema and report every violation.

PLANTED PROBLEM: unparseable-metadata. The `required` list in CONFIG_SCHEMA below is never
closed (`["schema"` followed by `}`), a Python syntax error in the header.
"""

import json
import sys
from pathlib import Path

__version__ = "0.2.0"
__executor_id__ = "rye/core/runtimes/python/script"
__tool_type__ = "python"
__category__ = "acme/data"
__tool_description__ = "Validate JSON files against a JSON schema"

CONFIG_SCHEMA = {
    "type": "object",
    "properties": {
        "schema": {"type": "string", "description": "Schema file, relative to the project"},
        "files": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["schema"
}


def validate(schema: dict, document: object) -> list:
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(schema)
    return [f"{'/'.join(map(str, e.path)) or '<root>'}: {e.message}" for e in validator.iter_errors(document)]


def main() -> None:
    params = json.loads(sys.stdin.read() or "{}")
    schema = json.loads(Path(params["schema"]).read_text(encoding="utf-8"))
    report = {name: validate(schema, json.loads(Path(name).read_text(encoding="utf-8"))) for name in params.get("files", [])}
    print(json.dumps({"success": all(not v for v in report.values()), "violations": report}))


if __name__ == "__main__":
    main()
