"""`rye_execute` with `dry_run` and `rye_search` over the protocol, for ryechain's server and the
reference's, as an agent's client sees them: the official MCP Python SDK (target/mcp-venv) starts
the server on stdio and times each `tools/call` from request to answer (JSON-RPC on stdio, the
server's work, the answer's JSON parsed).

    target/mcp-venv/bin/python benches/mcp_latency.py ryechain target/release/ryechain /tmp/t100k [CALLS] [SEARCH_CALLS]
    target/mcp-venv/bin/python benches/mcp_latency.py reference target/ref-venv/bin/ryeos-mcp /tmp/t100k-ref [CALLS] [SEARCH_CALLS]

KIND says how the server is started and called:
- `ryechain`: `SERVER mcp --user-space TREE/user --system-space gen=TREE/system`; tools
  `rye_execute` (`item_type`, `item_id`) and `rye_search` (`item_type`, `query`, `source`);
- `reference`: `SERVER` (ryeos-mcp 0.1.12's console script) with USER_SPACE=TREE/user and
  RYECHAIN_GEN_SYSTEM=TREE/system (the bundle benches/ref_mcp_prepare.sh installs, which also
  makes TREE from a generated tree); tools `execute` (`item_id` as the canonical ref
  `tool:<id>`) and `fetch` in query mode (`scope: "tool"`, `query`, `source`).
HOME is TREE/user for both.

Printed: the server's start (spawn to `initialize` answered); its first call (a dry run); CALLS
(default 30) dry runs of TOOL (RYECHAIN_BENCH_TOOL, default acme/gcp/publish_tables); the first
search; SEARCH_CALLS (default CALLS) calls of each query shape the reference's `fetch` also takes
(no fuzzy, paging or sorting there); per figure the median, the 90th percentile and the extremes;
and the server process's peak RSS (VmHWM, read before the client closes; the processes it spawns
not counted). Each answer is checked (a dry run's `validation_passed` and its chain's length;
a search's total equal to the first of its shape), so a broken server cannot post a time.
"""

import json
import os
import statistics
import sys
import time

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

KIND, SERVER, TREE = sys.argv[1], sys.argv[2], os.path.abspath(sys.argv[3])
CALLS = int(sys.argv[4]) if len(sys.argv) > 4 else 30
SEARCH_CALLS = int(sys.argv[5]) if len(sys.argv) > 5 else CALLS
TOOL = os.environ.get("RYECHAIN_BENCH_TOOL", "acme/gcp/publish_tables")
PROJECT = os.path.join(TREE, "project")
assert KIND in ("ryechain", "reference"), f"KIND is ryechain or reference, not {KIND}"

SHAPES = [
    ("term", "tables", "project"),
    ("two terms", "sync acme", "project"),
    ("phrase", '"for acme"', "project"),
    ("AND/OR/NOT", "(tables OR logs) AND acme NOT gcp", "project"),
    ("wildcard", "rotat*", "project"),
    ("* in every space", "*", "all"),
]


def server_params() -> StdioServerParameters:
    env = {"HOME": os.path.join(TREE, "user")}
    if KIND == "ryechain":
        return StdioServerParameters(
            command=SERVER,
            args=[
                "mcp",
                "--user-space", os.path.join(TREE, "user"),
                "--system-space", "gen=" + os.path.join(TREE, "system"),
            ],
            env=env,
        )
    env["USER_SPACE"] = os.path.join(TREE, "user")
    env["RYECHAIN_GEN_SYSTEM"] = os.path.join(TREE, "system")
    return StdioServerParameters(command=SERVER, args=[], env=env)


def execute_call() -> tuple[str, dict]:
    if KIND == "ryechain":
        return "rye_execute", {"item_type": "tool", "item_id": TOOL, "project_path": PROJECT, "dry_run": True}
    return "execute", {"item_id": f"tool:{TOOL}", "project_path": PROJECT, "dry_run": True}


def search_call(query: str, source: str) -> tuple[str, dict]:
    if KIND == "ryechain":
        return "rye_search", {"item_type": "tool", "query": query, "source": source, "project_path": PROJECT}
    return "fetch", {"scope": "tool", "query": query, "source": source, "project_path": PROJECT}


def server_pid() -> int | None:
    """The server: this process's child (the SDK spawns it directly)."""
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == me:
            return int(entry)
    return None


def peak_rss_mib(pid: int | None) -> str:
    if pid is None:
        return "unknown (no child process found)"
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return f"{int(line.split()[1]) / 1024:.0f} MiB"
    return "unknown"


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def summary(times: list[float]) -> str:
    times = sorted(times)
    p90 = times[min(len(times) - 1, int(len(times) * 0.9))]
    return (
        f"median {ms(statistics.median(times))}, p90 {ms(p90)}, "
        f"min {ms(times[0])}, max {ms(times[-1])} ({len(times)} calls)"
    )


async def main() -> None:
    print(f"{KIND}: {SERVER} on {TREE}, tool {TOOL}", flush=True)
    started = time.perf_counter()
    async with stdio_client(server_params(), errlog=sys.stderr) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            print(
                f"start (spawn to initialize answered): {ms(time.perf_counter() - started)}; "
                f"server {init.server_info.name} {init.server_info.version}, protocol {init.protocol_version}",
                flush=True,
            )
            pid = server_pid()

            async def call(name: str, args: dict) -> tuple[float, dict]:
                t = time.perf_counter()
                result = await session.call_tool(name, args)
                took = time.perf_counter() - t
                assert result.is_error is not True, result
                answer = json.loads(result.content[0].text)
                return took, answer

            name, args = execute_call()
            took, answer = await call(name, args)
            assert answer.get("status") == "validation_passed", answer
            chain = len(answer["chain"])
            print(f"first call (a dry run): {ms(took)}, chain of {chain}", flush=True)
            times = []
            for _ in range(CALLS):
                took, answer = await call(name, args)
                assert answer.get("status") == "validation_passed", answer
                assert len(answer["chain"]) == chain, answer
                times.append(took)
            print(f"dry run of {TOOL}: {summary(times)}", flush=True)

            first = True
            for shape, query, source in SHAPES:
                name, args = search_call(query, source)
                times, expected = [], None
                for _ in range(SEARCH_CALLS + (1 if first else 0)):
                    took, answer = await call(name, args)
                    assert "error" not in answer, answer
                    if expected is None:
                        expected = answer["total"]
                    assert answer["total"] == expected, (shape, answer["total"], expected)
                    if first:
                        print(f"first search ({shape}): {ms(took)}, {expected} found", flush=True)
                        first = False
                        continue
                    times.append(took)
                print(f"search {shape} `{query}` ({source}): {summary(times)}, {expected} found", flush=True)

            print(f"peak RSS of the server process: {peak_rss_mib(pid)}", flush=True)


anyio.run(main)
