"""`rye_execute` over the protocol, as an agent's client sees it: the official MCP Python SDK
(target/mcp-venv) drives `ryechain mcp` on a small signed project it makes (a bash tool that
prints one JSON line) and times each `tools/call` from request to answer: a real run (the tool
run in the call's worker process, `runner::worker`) and a dry run (in the server's process).
Then the worker alone: the binary started as a worker with its stdin closed, to its exit, beside
`/bin/true` started the same way (a build before the workers says it has none, so the same
command compares two builds).

    target/mcp-venv/bin/python benches/mcp_execute_latency.py target/release/ryechain [CALLS]

CALLS (default 50) calls of each, after one call of each not counted; medians and 90th
percentiles. Each answer's status is checked, so a broken server cannot post a time.
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

BIN = os.path.abspath(sys.argv[1])
CALLS = int(sys.argv[2]) if len(sys.argv) > 2 else 50
WORKER_ARG = "__ryechain-run-worker"


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def summary(times: list) -> str:
    times = sorted(times)
    p90 = times[min(len(times) - 1, int(len(times) * 0.9))]
    return f"median {ms(statistics.median(times))}, p90 {ms(p90)} ({len(times)} calls)"


def ryechain(project: str, home: str, *args: str) -> None:
    subprocess.run(
        [BIN, *args], cwd=project, env={"HOME": home, "PATH": os.environ["PATH"]},
        check=True, stdout=subprocess.DEVNULL,
    )


async def main(project: str, home: str) -> None:
    params = StdioServerParameters(command=BIN, args=["mcp"], env={"HOME": home})
    async with stdio_client(params, errlog=sys.stderr) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()

            async def call(dry_run: bool) -> float:
                started = time.perf_counter()
                result = await session.call_tool("rye_execute", {
                    "item_type": "tool", "item_id": "bench/noop", "project_path": project,
                    "dry_run": dry_run,
                })
                took = time.perf_counter() - started
                status = result.structured_content["status"]
                assert status == ("validation_passed" if dry_run else "success"), result
                return took

            for name, dry_run in [("real run", False), ("dry run", True)]:
                await call(dry_run)
                times = [await call(dry_run) for _ in range(CALLS)]
                print(f"rye_execute {name}: {summary(times)}", flush=True)


def spawned(argv: list) -> list | None:
    """Start and end `argv` CALLS times; `None` when it fails (a build without workers)."""
    times = []
    for _ in range(CALLS + 1):
        started = time.perf_counter()
        done = subprocess.run(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        times.append(time.perf_counter() - started)
        if done.returncode != 0:
            return None
    return times[1:]


with tempfile.TemporaryDirectory() as tmp:
    home, project = os.path.join(tmp, "home"), os.path.join(tmp, "proj")
    os.makedirs(home)
    os.makedirs(project)
    ryechain(project, home, "init")
    ryechain(project, home, "new", "tool", "bench/noop", "--runtime", "bash")
    ryechain(project, home, "keys", "generate")
    ryechain(project, home, "sign", "bench/noop")
    anyio.run(main, project, home)
worker = spawned([BIN, WORKER_ARG])
if worker is None:
    print("a worker started and ended: this build has no workers")
else:
    print(f"a worker started and ended (stdin closed): {summary(worker)}")
print(f"/bin/true started and ended: {summary(spawned(['/bin/true']))}")
