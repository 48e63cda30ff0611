# rye:signed:2026-11-22T07:56:11Z:06a7a5f06bf7a33722d16b45b99a1965d3b11f42de0481d1866a0f625ed080e9:iXqk2jmwvZQy3QNFZRSRgoWgNfNLhoPfWQpnOBd9L1rKjLlKi3x1HghhngVs0dnFcJrKaTta3lJgYU4F9mQrDA==:6abd8e3ed708b1e5
"""Mirror the notes folder into the team wiki checkout.

PLANTED PROBLEM: missing-executor (hidden executor). `acme/runtimes/python-pinned` exists only in
the project space; a user-space tool resolves executors in user and system space only, so the
runtime is invisible from here and this tool would break in every other project.
"""

import json
import shutil
import sys
from pathlib import Path

__version__ = "0.3.1"
__executor_id__ = "acme/runtimes/python-pinned"
__tool_type__ = "python"
__category__ = "personal/notes"
__tool_description__ = "Copy changed markdown notes into the wiki checkout"

CONFIG_SCHEMA = {
    "type": "object",
    "properties": {
        "source": {"type": "string", "default": "~/notes"},
        "wiki": {"type": "string", "description": "Path of the wiki checkout"},
    },
    "required": ["wiki"],
}


def changed_notes(source: Path, wiki: Path) -> list:
    changed = []
    for note in sorted(source.rglob("*.md")):
        target = wiki / note.relative_to(source)
        if not target.exists() or target.stat().st_mtime < note.stat().st_mtime:
            changed.append((note, target))
    return changed


def main() -> None:
    params = json.loads(sys.stdin.read() or "{}")
    source = Path(params.get("source", "~/notes")).expanduser()
    wiki = Path(params["wiki"]).expanduser()
    copied = []
    for note, target in changed_notes(source, wiki):
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(note, target)
        copied.append(str(target.relative_to(wiki)))
    print(json.dumps({"success": True, "copied": copied}))


if __name__ == "__main__":
    main()
