"""Where the first `rye_search` of a fresh `ryechain mcp` goes: the official MCP Python SDK starts
the server on a generated tree and makes one search, while a thread samples the server process
every 0.5 s (user and system CPU time from /proc/PID/stat, VmRSS); the server's warnings (stderr)
come out in between, so a second load after the watcher's queue overflowed shows where it begins.

    target/mcp-venv/bin/python benches/mcp_first_search.py target/release/ryechain /tmp/t100k
"""

import json
import os
import sys
import threading
import time

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

BIN, TREE = sys.argv[1], os.path.abspath(sys.argv[2])
TICK = os.sysconf("SC_CLK_TCK")


def server_pid() -> int:
    """The server: this process's child (the SDK spawns it directly)."""
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == me:
                return int(entry)
    raise SystemExit("no server process found")


def sample(pid: int, stop: threading.Event) -> None:
    started = time.perf_counter()
    while not stop.is_set():
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{pid}/status") as f:
                rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
        except OSError:
            return
        user, system = int(fields[11]) / TICK, int(fields[12]) / TICK
        print(
            f"  {time.perf_counter() - started:5.1f} s: user {user:.2f} s, system {system:.2f} s, RSS {rss // 1024} MiB",
            flush=True,
        )
        time.sleep(0.5)


async def main() -> None:
    params = StdioServerParameters(
        command=BIN,
        args=["mcp", "--user-space", os.path.join(TREE, "user"), "--system-space", "gen=" + os.path.join(TREE, "system")],
        env={"HOME": os.path.join(TREE, "user")},
    )
    async with stdio_client(params, errlog=sys.stdout) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            stop = threading.Event()
            sampler = threading.Thread(target=sample, args=(server_pid(), stop))
            sampler.start()
            started = time.perf_counter()
            result = await session.call_tool(
                "rye_search", {"item_type": "tool", "query": "tables", "project_path": os.path.join(TREE, "project")}
            )
            took = time.perf_counter() - started
            stop.set()
            sampler.join()
            total = json.loads(result.content[0].text)["total"]
            print(f"first search: {took * 1000:.0f} ms, {total} found", flush=True)


anyio.run(main)
