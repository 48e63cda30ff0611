"""Announce a deploy in Slack with the release notes link.

PLANTED PROBLEM: invalid-version. `__version__ = "1.2"` is not semantic versioning
(MAJOR.MINOR.PATCH); write "1.2.0".
"""

import json
import os
import sys
import urllib.request

__version__ = "1.2"
__executor_id__ = "acme/runtimes/python-traced"
__tool_type__ = "python"
__category__ = "acme/deploy"
__tool_description__ = "Post a deploy announcement to Slack"

CONFIG_SCHEMA = {
    "type": "object",
    "properties": {
        "service": {"type": "string"},
        "version": {"type": "string"},
        "environment": {"type": "string", "enum": ["staging", "production"]},
    },
    "required": ["service", "version", "environment"],
}


def post(webhook: str, text: str) -> int:
    body = json.dumps({"text": text}).encode("utf-8")
    request = urllib.request.Request(webhook, data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status


def main() -> None:
    params = json.loads(sys.stdin.read() or "{}")
    emoji = ":rocket:" if params["environment"] == "production" else ":test_tube:"
    text = f"{emoji} {params['service']} {params['version']} is live on {params['environment']}"
    status = post(os.environ["SLACK_WEBHOOK_URL"], text)
    print(json.dumps({"success": status < 400, "status": status}))


if __name__ == "__main__":
    main()
