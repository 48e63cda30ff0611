"""`ryechain mcp --http` driven by the official MCP Python SDK's streamable HTTP client.

Run by tests/mcp_http.rs with target/mcp-venv/bin/python, once the server listens. The environment
names the endpoint (RYECHAIN_MCP_URL), the bearer token the server was started with
(RYECHAIN_MCP_TOKEN), the binary (RYECHAIN_BIN, for the same calls over stdio), a signed project
(RYECHAIN_PROJECT: acme/greet and acme/publish_tables signed, acme/tampered signed then edited)
and the home directory holding the user space that trusts the key (RYECHAIN_HOME). Prints one
`ok:` line per check; any failed check raises, which exits non-zero.
"""

import json
import os
import sys

import anyio
from mcp.client.client import Client
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

URL = os.environ["RYECHAIN_MCP_URL"]
TOKEN = os.environ["RYECHAIN_MCP_TOKEN"]
BIN = os.environ["RYECHAIN_BIN"]
PROJECT = os.environ["RYECHAIN_PROJECT"]
HOME = os.environ["RYECHAIN_HOME"]

TOOLS = ["rye_execute", "rye_search", "rye_load", "rye_sign"]


def answer(result) -> dict:
    """The JSON response a call answered: one text item, equal to structuredContent."""
    assert len(result.content) == 1, result
    assert result.content[0].type == "text", result
    response = json.loads(result.content[0].text)
    assert result.structured_content == response, (result.structured_content, response)
    return response


def ok(what: str) -> None:
    print(f"ok: {what}", flush=True)


def http(token: str = TOKEN):
    client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    return streamable_http_client(URL, http_client=client)


def without_timing(response: dict) -> dict:
    """A response less what differs between two runs of the same call (its duration)."""
    response = json.loads(json.dumps(response))
    response.get("metadata", {}).pop("duration_ms", None)
    return response


# The same calls, asked over HTTP and over stdio, must be answered alike.
SAME = [
    ("rye_execute", {"item_type": "tool", "item_id": "acme/greet", "project_path": PROJECT,
                     "parameters": {"n": 7}}),
    ("rye_execute", {"item_type": "tool", "item_id": "acme/greet", "project_path": PROJECT,
                     "dry_run": True}),
    ("rye_execute", {"item_type": "tool", "item_id": "acme/tampered", "project_path": PROJECT}),
    ("rye_search", {"item_type": "tool", "query": "acme", "project_path": PROJECT, "limit": 50}),
    ("rye_load", {"item_type": "tool", "item_id": "acme/greet", "project_path": PROJECT}),
    ("rye_execute", {"item_type": "prompt", "item_id": "x", "project_path": PROJECT}),
]


async def over_http() -> list:
    async with http() as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            assert init.server_info.name == "ryechain", init
            assert init.protocol_version == "2025-11-25", init
            assert init.capabilities.tools is not None, init
            ok("initialize over HTTP: ryechain, tools capability, 2025-11-25")

            tools = (await session.list_tools()).tools
            assert [t.name for t in tools] == TOOLS, tools
            assert tools[0].input_schema["required"] == ["item_type", "item_id", "project_path"]
            ok("tools/list over HTTP: the four tools and their schemas")

            call = lambda **args: session.call_tool("rye_execute", args)
            result = await call(
                item_type="tool", item_id="acme/greet", project_path=PROJECT, parameters={"n": 1}
            )
            response = answer(result)
            assert result.is_error is False, result
            assert response["status"] == "success", response
            assert response["data"] == {"ok": True, "params": {"n": 1}}, response
            assert response["chain"] == [
                "acme/greet", "rye/core/runtimes/bash/bash", "rye/core/primitives/subprocess"
            ], response
            ok("a signed tool runs over HTTP")

            result = await call(item_type="tool", item_id="acme/tampered", project_path=PROJECT)
            assert result.is_error is True, result
            assert answer(result)["error"].startswith("Integrity failed: "), result
            ok("a tampered tool is refused over HTTP")

            result = await session.call_tool(
                "rye_search", {"item_type": "tool", "query": '"tables to the"', "project_path": PROJECT}
            )
            response = answer(result)
            assert [r["id"] for r in response["results"]] == ["acme/publish_tables"], response
            assert response["results"][0]["integrity"]["status"] == "verified", response
            ok("a search over HTTP finds the signed tool")

            try:
                await session.call_tool("rye_nonesuch", {})
            except MCPError as e:
                assert e.error.code == -32602, e.error
            else:
                raise AssertionError("an unknown tool was answered")
            ok("an unknown tool is a protocol error over HTTP")

            return [without_timing(answer(await session.call_tool(n, a))) for n, a in SAME]


async def over_stdio() -> list:
    params = StdioServerParameters(command=BIN, args=["mcp"], env={"HOME": HOME})
    async with stdio_client(params, errlog=sys.stderr) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            return [without_timing(answer(await session.call_tool(n, a))) for n, a in SAME]


async def two_sessions_at_once() -> None:
    """Two clients connected together, each in its own session, both served."""
    async with http() as (r1, w1), http() as (r2, w2):
        async with ClientSession(r1, w1) as one, ClientSession(r2, w2) as two:
            await one.initialize()
            await two.initialize()
            args = {"item_type": "tool", "item_id": "acme/greet", "project_path": PROJECT}
            a = answer(await one.call_tool("rye_execute", {**args, "parameters": {"s": 1}}))
            b = answer(await two.call_tool("rye_execute", {**args, "parameters": {"s": 2}}))
            assert (a["data"]["params"], b["data"]["params"]) == ({"s": 1}, {"s": 2}), (a, b)
    ok("two sessions at once, each answered")


async def wrong_token() -> None:
    try:
        async with http("not-the-token") as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
    except Exception as e:  # the SDK reports the 401 as an error of the request it answered
        text = repr(e)
        assert "not-the-token" not in text, text
    else:
        raise AssertionError("a session with the wrong token started")
    ok("the wrong token: no session")


async def newest_client() -> None:
    """The SDK's high-level client over HTTP, in its default mode."""
    async with Client(http()) as client:
        version = client.session.protocol_version
        tools = (await client.list_tools()).tools
        assert [t.name for t in tools] == TOOLS, tools
        result = await client.call_tool(
            "rye_execute",
            {"item_type": "tool", "item_id": "acme/greet", "project_path": PROJECT, "parameters": {"n": 2}},
        )
        assert answer(result)["data"] == {"ok": True, "params": {"n": 2}}, result
        ok(f"Client (mode auto) over HTTP negotiated {version} and ran the tool")


async def main() -> None:
    from_http = await over_http()
    from_stdio = await over_stdio()
    for (name, args), h, s in zip(SAME, from_http, from_stdio):
        assert h == s, (name, args, h, s)
    ok(f"{len(SAME)} calls answered alike over HTTP and stdio")
    await two_sessions_at_once()
    await wrong_token()
    await newest_client()


anyio.run(main)
