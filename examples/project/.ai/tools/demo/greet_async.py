# rye:signed:2026-11-23T12:23:12Z:9d40c1873640af0270a1d34de65c42e7cff76eae70aaaebbe10abac666587049:teXnCw_QQ16W3DtxcrAjza_q4v0kNoHiV_kjlao_h58aNcV4XEJXVjisGC0XIv3XFpk13nVFMgioqOEykenvAg==:64205436039b7683
"""Greets someone: an `async def execute` tool run by the python/function runtime.

The runtime awaits coroutine results, so a tool may do asynchronous work.
"""

__version__ = "1.0.0"
__tool_type__ = "python"
__executor_id__ = "rye/core/runtimes/python/function"
__category__ = "demo"
__tool_description__ = "Greet someone asynchronously (Python function runtime)"

import asyncio


async def execute(params, project_path):
    await asyncio.sleep(0)
    name = params.get("name", "world")
    return {"greeting": f"Hello, {name}!", "runtime": "python/function (async)", "params": params}
