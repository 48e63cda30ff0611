# rye:signed:2026-11-23T12:23:12Z:e803e44fb39ca0d189fbf7519d0165b6d6c4e905fcde1c9e548eb66181127261:liC5CX_T6d52-5txlG_qxLoSSoYHtO1hjEUfcCHjRvv9cbv9x94FXIANsjiBNkYcC3axwz-Wtx4cKfmzJpmmCQ==:64205436039b7683
"""Greets someone: a Python script tool run by the python/script runtime.

The runtime starts `python3 greet_script.py --project-path <dir>` and writes the parameters as
JSON to stdin; whatever JSON the script prints comes back as the result's `data`.
"""

__version__ = "1.0.0"
__tool_type__ = "python"
__executor_id__ = "rye/core/runtimes/python/script"
__category__ = "demo"
__tool_description__ = "Greet someone (Python script runtime)"

import json
import sys


def main() -> None:
    params = json.loads(sys.stdin.read() or "{}")
    name = params.get("name", "world")
    print(json.dumps({"greeting": f"Hello, {name}!", "runtime": "python/script", "params": params}))


if __name__ == "__main__":
    main()
