# rye:signed:2026-11-22T07:56:07Z:c39b01bf917c74155711f7bc0283e67268187303c5ca3a8af6cdfcd94713b26f:Lavvx46akGz9vJinVg_rGOOswU2KA56UmdPqKhqTViW1Aael3BbkbTN-Ybao2x9ZfCeFnlA_30ecDs5TwQkOAg==:6abd8e3ed708b1e5
"""Build a changelog section grouped by conventional-commit type (project copy).

Example (project space, clean): shadows the user-space tool `acme/git/changelog` for runs in
this project. Runs through the user runtime acme/runtimes/python-traced.
"""

import json
import re
import subprocess
import sys
from collections import defaultdict

__version__ = "1.2.0"
__executor_id__ = "acme/runtimes/python-traced"
__tool_type__ = "python"
__category__ = "acme/git"
__tool_description__ = "Changelog grouped by conventional-commit type"

CONFIG_SCHEMA = {
    "type": "object",
    "properties": {
        "since": {"type": "string", "description": "Tag or revision to start from"},
        "types": {"type": "array", "items": {"type": "string"}, "default": ["feat", "fix", "perf"]},
    },
}

SUBJECT = re.compile(r"^(?P<type>[a-z]+)(\((?P<scope>[^)]+)\))?!?: (?P<text>.+)$")


def commits(cwd: str, since: str) -> list:
    rev = f"{since}..HEAD" if since else "HEAD"
    out = subprocess.run(
        ["git", "log", "--no-merges", "--format=%s", rev],
        cwd=cwd, capture_output=True, text=True, check=True,
    )
    return out.stdout.splitlines()


def group(subjects: list, wanted: list) -> dict:
    sections = defaultdict(list)
    for subject in subjects:
        match = SUBJECT.match(subject)
        if match and match["type"] in wanted:
            scope = f"**{match['scope']}**: " if match["scope"] else ""
            sections[match["type"]].append(f"- {scope}{match['text']}")
    return dict(sections)


def main() -> None:
    params = json.loads(sys.stdin.read() or "{}")
    project = sys.argv[sys.argv.index("--project-path") + 1] if "--project-path" in sys.argv else "."
    sections = group(commits(project, params.get("since", "")), params.get("types", ["feat", "fix", "perf"]))
    print(json.dumps({"success": True, "sections": sections}))


if __name__ == "__main__":
    main()
