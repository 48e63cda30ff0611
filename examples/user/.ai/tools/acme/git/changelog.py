# rye:signed:2026-11-22T07:56:11Z:56981d7ecdec1f5bfadf2698d0fa46a601196b83c1e7588b735bb35ed36da6b6:7ZE1vyE2fru4VyycU1BK6Fo9ZQBGPaNcI7wjjpCUr0Jk0_R8fp52270uDQychMFEoBdh3awf3vCIOhNIn9FOAQ==:6abd8e3ed708b1e5
"""Build a changelog section from the commits since the last tag (user-space copy).

Example (user space, clean): the project space has a tool with the same id
`acme/git/changelog`, which shadows this one for project runs.
"""

import json
import subprocess
import sys

__version__ = "1.0.0"
__executor_id__ = "acme/runtimes/python-traced"
__tool_type__ = "python"
__category__ = "acme/git"
__tool_description__ = "Changelog section from the commits since the last tag"

CONFIG_SCHEMA = {
    "type": "object",
    "properties": {
        "since": {"type": "string", "description": "Tag or revision to start from"},
    },
}


def last_tag(cwd: str) -> str:
    out = subprocess.run(
        ["git", "describe", "--tags", "--abbrev=0"],
        cwd=cwd, capture_output=True, text=True, check=False,
    )
    return out.stdout.strip()


def commit_subjects(cwd: str, since: str) -> list:
    rev = f"{since}..HEAD" if since else "HEAD"
    out = subprocess.run(
        ["git", "log", "--no-merges", "--format=%s", rev],
        cwd=cwd, capture_output=True, text=True, check=True,
    )
    return [line for line in out.stdout.splitlines() if line.strip()]


def main() -> None:
    params = json.loads(sys.stdin.read() or "{}")
    project = sys.argv[sys.argv.index("--project-path") + 1] if "--project-path" in sys.argv else "."
    since = params.get("since") or last_tag(project)
    lines = [f"- {subject}" for subject in commit_subjects(project, since)]
    print(json.dumps({"success": True, "since": since, "changelog": "\n".join(lines)}))


if __name__ == "__main__":
    main()
