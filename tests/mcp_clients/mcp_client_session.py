"""`ryechain mcp` driven by the official MCP Python SDK (PyPI `mcp`), as an agent's client would.

Run by tests/mcp_clients.rs with target/mcp-venv/bin/python. The environment names the binary
(RYECHAIN_BIN), its version (RYECHAIN_VERSION), a signed project (RYECHAIN_PROJECT, with the
tools acme/greet signed and acme/tampered signed then edited) and the home directory holding the
user space that trusts the signing key (RYECHAIN_HOME). Prints one `ok:` line per check; any
failed check raises, which exits non-zero.
"""

import json
import os
import sys

import anyio
from mcp.client.client import Client
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

BIN = os.environ["RYECHAIN_BIN"]
VERSION = os.environ["RYECHAIN_VERSION"]
PROJECT = os.environ["RYECHAIN_PROJECT"]
HOME = os.environ["RYECHAIN_HOME"]


def server(*extra: str) -> StdioServerParameters:
    # RYE_SYSTEM_SPACE unset: the embedded bundle is the system space.
    return StdioServerParameters(command=BIN, args=["mcp", *extra], env={"HOME": HOME})


def answer(result) -> dict:
    """The JSON response a call answered: one text item, equal to structuredContent."""
    assert len(result.content) == 1, result
    assert result.content[0].type == "text", result
    response = json.loads(result.content[0].text)
    assert result.structured_content == response, (result.structured_content, response)
    return response


def ok(what: str) -> None:
    print(f"ok: {what}", flush=True)


async def seed_names() -> None:
    async with stdio_client(server(), errlog=sys.stderr) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            assert init.server_info.name == "ryechain", init
            assert init.server_info.version == VERSION, init
            # The SDK offers the newest handshake revision; the server speaks it.
            assert init.protocol_version == "2025-11-25", init
            assert init.capabilities.tools is not None, init
            ok("initialize: ryechain, tools capability, 2025-11-25")

            tools = (await session.list_tools()).tools
            assert [t.name for t in tools] == ["rye_execute"], tools
            schema = tools[0].input_schema
            assert schema["type"] == "object", schema
            assert schema["required"] == ["item_type", "item_id", "project_path"], schema
            assert schema["properties"]["item_type"]["enum"] == ["directive", "tool", "knowledge"], schema
            assert set(schema["properties"]) == {
                "item_type", "item_id", "project_path", "parameters", "dry_run", "thread"
            }, schema
            ok("tools/list: rye_execute with seed 003's parameters")

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
            assert isinstance(response["metadata"]["duration_ms"], int), response
            ok("a signed tool runs")

            response = answer(
                await call(item_type="tool", item_id="acme/greet", project_path=PROJECT, dry_run=True)
            )
            assert response["status"] == "validation_passed", response
            assert response["message"] == "Tool chain validation passed (dry run)", response
            assert response["chain"][0] == "acme/greet", response
            assert isinstance(response["metadata"]["duration_ms"], int), response
            ok("a dry run validates the chain")

            result = await call(item_type="tool", item_id="acme/tampered", project_path=PROJECT)
            response = answer(result)
            assert result.is_error is True, result
            assert response["status"] == "error", response
            assert response["error"].startswith("Integrity failed: "), response
            assert "acme/tampered.sh" in response["error"], response
            ok("a tampered tool is refused")

            result = await call(item_type="knowledge", item_id="acme/notes", project_path=PROJECT)
            response = answer(result)
            assert result.is_error is False, result
            assert response["status"] == "success", response
            assert response["type"] == "knowledge", response
            assert response["data"]["title"] == "Deploy notes", response
            assert response["data"]["body"] == "Ship on Fridays.", response
            assert response["your_directions"] == "Use this knowledge to inform your decisions."
            ok("a signed knowledge entry answers its metadata and body")

            result = await call(
                item_type="directive", item_id="acme/flow", project_path=PROJECT,
                parameters={"topic": "rust"},
            )
            response = answer(result)
            assert result.is_error is False, result
            assert response["type"] == "directive", response
            assert "Research rust." in response["body"], response
            assert response["outputs"][0]["name"] == "summary", response
            result = await call(item_type="directive", item_id="acme/flow", project_path=PROJECT)
            response = answer(result)
            assert result.is_error is True, result
            assert response["error"] == "Missing required inputs: topic", response
            assert response["declared_inputs"][0]["name"] == "topic", response
            ok("a signed directive answers its body with the inputs filled in, or what is missing")

            result = await call(item_type="prompt", item_id="acme/greet", project_path=PROJECT)
            assert result.is_error is True, result
            assert answer(result) == {"status": "error", "error": "Unknown item type: prompt"}
            ok("an unknown item type")

            result = await call(item_type="tool", item_id="acme/greet", project_path="proj")
            assert result.is_error is True, result
            assert "must be an absolute path" in answer(result)["error"], result
            result = await session.call_tool("rye_execute", {"item_type": "tool"})
            assert result.is_error is True, result
            assert answer(result)["error"].startswith("Missing required argument `item_id`"), result
            ok("bad arguments are tool errors")

            try:
                await session.call_tool("rye_search", {})
            except MCPError as e:
                assert e.error.code == -32602, e.error
                assert e.error.message == "Unknown tool: rye_search", e.error
            else:
                raise AssertionError("an unknown tool was answered")
            ok("an unknown tool is a protocol error")


async def reference_names() -> None:
    async with stdio_client(server("--tool-names", "reference"), errlog=sys.stderr) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            assert init.server_info.name == "rye", init
            tools = (await session.list_tools()).tools
            assert [t.name for t in tools] == ["execute"], tools
            response = answer(
                await session.call_tool(
                    "execute",
                    {"item_type": "tool", "item_id": "acme/greet", "project_path": PROJECT, "dry_run": True},
                )
            )
            assert response["status"] == "validation_passed", response
            ok("--tool-names reference: server rye, tool execute")


async def newest_client() -> None:
    """The SDK's high-level client, in its default mode: whatever it negotiates, a call works."""
    async with Client(server()) as client:
        version = client.session.protocol_version
        tools = (await client.list_tools()).tools
        assert [t.name for t in tools] == ["rye_execute"], tools
        result = await client.call_tool(
            "rye_execute",
            {"item_type": "tool", "item_id": "acme/greet", "project_path": PROJECT, "parameters": {"n": 2}},
        )
        response = answer(result)
        assert response["data"] == {"ok": True, "params": {"n": 2}}, response
        ok(f"Client (mode auto) negotiated {version} and ran the tool")


async def main() -> None:
    await seed_names()
    await reference_names()
    await newest_client()


anyio.run(main)
