"""`ryechain mcp` stays responsive, seen through the official MCP Python SDK (PyPI `mcp`).

Run by tests/mcp_concurrency.rs with target/mcp-venv/bin/python. The environment names the binary
(RYECHAIN_BIN), a signed project (RYECHAIN_PROJECT, with the bash tools acme/greet, acme/slow,
which takes 2.5 s, and acme/forever, which never exits and writes `<its pid> <a sleep in its
group> <a sleep in a session of its own>` to `<project>/pids/<its pid>`), the home directory
holding the user space that trusts the signing key (RYECHAIN_HOME), and `NAME=value` to put in
the server's environment (RYECHAIN_TAG). Prints one `ok:` line per check; any failed check
raises, which exits non-zero.
"""

import json
import os
import pathlib
import sys

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

BIN = os.environ["RYECHAIN_BIN"]
PROJECT = os.environ["RYECHAIN_PROJECT"]
HOME = os.environ["RYECHAIN_HOME"]
TAG_NAME, TAG_VALUE = os.environ["RYECHAIN_TAG"].split("=", 1)
PIDS = pathlib.Path(PROJECT) / "pids"

# How long to wait for anything here (a debug build on a busy machine).
PATIENCE = 60


def ok(what: str) -> None:
    print(f"ok: {what}", flush=True)


def answer(result) -> dict:
    assert len(result.content) == 1, result
    return json.loads(result.content[0].text)


def alive(pid: int) -> bool:
    """Whether the process exists and is not a zombie."""
    try:
        stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


async def forever_pids() -> list:
    with anyio.fail_after(PATIENCE):
        while True:
            files = [f for f in PIDS.glob("*") if not f.name.startswith(".")] if PIDS.exists() else []
            if files:
                return [int(p) for p in files[0].read_text().split()]
            await anyio.sleep(0.02)


async def main() -> None:
    params = StdioServerParameters(
        command=BIN, args=["mcp"], env={"HOME": HOME, TAG_NAME: TAG_VALUE}
    )
    async with stdio_client(params, errlog=sys.stderr) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            call = lambda tool, **args: session.call_tool(
                tool, {"project_path": PROJECT, **args}
            )

            reports = []

            async def on_progress(progress, total, message):
                reports.append((progress, total, message))

            result = await session.call_tool(
                "rye_execute",
                {"item_type": "tool", "item_id": "acme/slow", "project_path": PROJECT},
                progress_callback=on_progress,
            )
            assert answer(result)["data"] == {"slept": True}, result
            assert reports, "no progress for a 2.5 s run"
            progress = [p for p, _, _ in reports]
            assert progress == sorted(set(progress)) and progress[0] >= 1, reports
            assert all(t is None for _, t, _ in reports), reports
            assert all(m.startswith("rye_execute acme/slow: running for ") for _, _, m in reports), reports
            ok("a progress callback hears a run past a second")

            async with anyio.create_task_group() as tg:
                abandon = anyio.CancelScope()

                async def long_call():
                    with abandon:
                        await call("rye_execute", item_type="tool", item_id="acme/forever")
                    assert abandon.cancelled_caught, "the forever tool answered"

                tg.start_soon(long_call)
                pids = await forever_pids()
                assert len(pids) == 3 and all(alive(p) for p in pids), pids

                greet = answer(await call("rye_execute", item_type="tool", item_id="acme/greet"))
                assert greet["status"] == "success", greet
                found = answer(await call("rye_search", item_type="tool", query="forever"))
                assert [r["id"] for r in found["results"]] == ["acme/forever"], found
                assert all(alive(p) for p in pids), pids
                ok("a short call and a search are answered while a long call runs")

                # The SDK tells the server (`notifications/cancelled`) when a caller gives up.
                abandon.cancel()
            with anyio.fail_after(PATIENCE):
                while any(alive(p) for p in pids):
                    await anyio.sleep(0.02)
            ok("an abandoned call's tool, its group and what left the group are gone")

            greet = answer(await call("rye_execute", item_type="tool", item_id="acme/greet"))
            assert greet["status"] == "success", greet
            ok("the server serves on")


anyio.run(main)
