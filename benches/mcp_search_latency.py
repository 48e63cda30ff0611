"""`rye_search` over the protocol, as an agent's client sees it: the official MCP Python SDK
(target/mcp-venv) drives `ryechain mcp` on a generated tree and times each `tools/call` from
request to answer (JSON-RPC on stdio, the server's warm project, the JSON parsed by the SDK).

    target/mcp-venv/bin/python benches/mcp_search_latency.py target/release/ryechain /tmp/t100k [CALLS]

The tree is `examples/gen_tree`'s (`project/`, `user/`, `system/` as the bundle `gen`). The first
call (the project loaded and watched, every search document computed) is printed apart; then
CALLS calls (default 30) of each query shape, their median and 90th percentile. Each answer's
total is checked against the first answer of its shape, so a broken server cannot post a time.
"""

import os
import statistics
import sys
import time

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

BIN, TREE = sys.argv[1], os.path.abspath(sys.argv[2])
CALLS = int(sys.argv[3]) if len(sys.argv) > 3 else 30
PROJECT = os.path.join(TREE, "project")

SHAPES = [
    ("term", {"item_type": "tool", "query": "tables"}),
    ("two terms", {"item_type": "tool", "query": "sync acme"}),
    ("phrase", {"item_type": "tool", "query": '"for acme"'}),
    ("AND/OR/NOT", {"item_type": "tool", "query": "(tables OR logs) AND acme NOT gcp"}),
    ("wildcard", {"item_type": "tool", "query": "rotat*"}),
    ("fuzzy", {"item_type": "tool", "query": "tabels", "fuzzy": {"enabled": True, "max_distance": 2}}),
    ("* in every space", {"item_type": "tool", "query": "*", "source": "all"}),
    ("seed-era scope", {"scope": "rye.search.tool.rye.core.*", "query": "*"}),
]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


async def main() -> None:
    params = StdioServerParameters(
        command=BIN,
        args=[
            "mcp",
            "--user-space", os.path.join(TREE, "user"),
            "--system-space", "gen=" + os.path.join(TREE, "system"),
        ],
        env={"HOME": os.path.join(TREE, "user")},
    )
    async with stdio_client(params, errlog=sys.stderr) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()

            async def call(args: dict) -> tuple[float, int]:
                started = time.perf_counter()
                result = await session.call_tool("rye_search", {"project_path": PROJECT, **args})
                took = time.perf_counter() - started
                assert result.is_error is False, result
                return took, result.structured_content["total"]

            took, total = await call(SHAPES[0][1])
            print(f"first call (load, watch, every document): {ms(took)}, {total} found", flush=True)
            for name, args in SHAPES:
                _, expected = await call(args)
                times = []
                for _ in range(CALLS):
                    took, total = await call(args)
                    assert total == expected, (name, total, expected)
                    times.append(took)
                times.sort()
                p90 = times[min(len(times) - 1, int(len(times) * 0.9))]
                print(
                    f"{name}: median {ms(statistics.median(times))}, p90 {ms(p90)} ({expected} found, {CALLS} calls)",
                    flush=True,
                )


anyio.run(main)
