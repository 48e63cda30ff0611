# rye:signed:2026-11-22T07:56:07Z:83d107f21e5be692dab19eca5b18d5f98852f0de2be888f485ca7ce760a606c1:umwRqBCo1NeotKO_RLUHdqI5QRViSmrD-g_hr5Z3smF0Gbbxl2n8O5rgSqE71PW9IpjDCVHGEDgN64DCE0YUDw==:6abd8e3ed708b1e5
"""Post the weekly engineering digest (merged PRs, incidents, deploys) to the team channel.

PLANTED PROBLEM: missing-executor. `rye/core/runtimes/python/scirpt` is a typo of
`rye/core/runtimes/python/script`; no space has a file with that id.
"""

import json
import sys
from datetime import date, timedelta

__version__ = "1.0.0"
__executor_id__ = "rye/core/runtimes/python/scirpt"
__tool_type__ = "python"
__category__ = "acme/reports"
__tool_description__ = "Weekly engineering digest for the team channel"

CONFIG_SCHEMA = {
    "type": "object",
    "properties": {
        "channel": {"type": "string", "default": "#eng-weekly"},
        "week_ending": {"type": "string", "format": "date"},
    },
}


def week_range(ending: date) -> tuple:
    start = ending - timedelta(days=6)
    return start.isoformat(), ending.isoformat()


def render(start: str, end: str, sections: dict) -> str:
    lines = [f"*Engineering digest {start} to {end}*"]
    for title, items in sections.items():
        lines.append(f"\n*{title}* ({len(items)})")
        lines.extend(f"- {item}" for item in items[:10])
    return "\n".join(lines)


def main() -> None:
    params = json.loads(sys.stdin.read() or "{}")
    ending = date.fromisoformat(params["week_ending"]) if "week_ending" in params else date.today()
    start, end = week_range(ending)
    sections = {"Merged PRs": params.get("prs", []), "Incidents": params.get("incidents", [])}
    print(json.dumps({"success": True, "channel": params.get("channel", "#eng-weekly"), "text": render(start, end, sections)}))


if __name__ == "__main__":
    main()
