# rye:signed:2026-11-23T12:23:12Z:f51453b12309fc0beca15e75198cfed888e07e78cd53637f83b9c8cf938b170f:DUZVZ-q2WIxXupmndAc1aNKbB49dbH5BMRzZ6rlwOouhutCkvjONHe9b-kcbjJBjLAx2t6qwImRE0BqzkBnJDw==:64205436039b7683
"""Greets someone: a Python function tool run by the python/function runtime.

The runtime imports this file and calls `execute(params, project_path)`; the returned value is
printed as JSON and comes back as the result's `data`.
"""

__version__ = "1.0.0"
__tool_type__ = "python"
__executor_id__ = "rye/core/runtimes/python/function"
__category__ = "demo"
__tool_description__ = "Greet someone (Python function runtime)"


def execute(params, project_path):
    name = params.get("name", "world")
    return {"greeting": f"Hello, {name}!", "runtime": "python/function", "params": params}
