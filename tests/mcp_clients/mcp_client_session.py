"""`ryechain mcp` driven by the official MCP Python SDK (PyPI `mcp`), as an agent's client would.

Run by tests/mcp_clients.rs with target/mcp-venv/bin/python. The environment names the binary
(RYECHAIN_BIN), its version (RYECHAIN_VERSION), a signed project (RYECHAIN_PROJECT, with the
tools acme/greet, acme/publish_tables and acme/sync_logs signed and acme/tampered signed then
edited) and the home directory holding the user space that trusts the signing key
(RYECHAIN_HOME). Prints one `ok:` line per check; any failed check raises, which exits non-zero.
"""

import json
import os
import pathlib
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
            assert [t.name for t in tools] == ["rye_execute", "rye_search", "rye_load", "rye_sign"], tools
            schema = tools[0].input_schema
            assert schema["type"] == "object", schema
            assert schema["required"] == ["item_type", "item_id", "project_path"], schema
            assert schema["properties"]["item_type"]["enum"] == ["directive", "tool", "knowledge"], schema
            assert set(schema["properties"]) == {
                "item_type", "item_id", "project_path", "parameters", "dry_run", "thread"
            }, schema
            ok("tools/list: rye_execute with seed 003's parameters")

            search_schema = tools[1].input_schema
            assert search_schema["required"] == ["query", "project_path"], search_schema
            assert set(search_schema["properties"]) == {
                "item_type", "query", "project_path", "source", "limit", "offset", "sort_by",
                "fields", "filters", "fuzzy", "proximity", "scope", "space",
            }, search_schema
            assert search_schema["properties"]["source"]["default"] == "project", search_schema
            assert search_schema["properties"]["space"]["default"] == "all", search_schema
            ok("tools/list: rye_search with the reference's parameters and the seed-era scope and space")

            load_schema, sign_schema = tools[2].input_schema, tools[3].input_schema
            assert set(load_schema["properties"]) == {
                "item_type", "item_id", "project_path", "source", "destination"
            }, load_schema
            assert load_schema["properties"]["destination"]["enum"] == ["project", "user"], load_schema
            assert set(sign_schema["properties"]) == {
                "item_type", "item_id", "project_path", "source"
            }, sign_schema
            assert sign_schema["properties"]["source"]["enum"] == ["project", "user"], sign_schema
            for s in (load_schema, sign_schema):
                assert s["required"] == ["item_type", "item_id", "project_path"], s
            ok("tools/list: rye_load and rye_sign with the reference's parameters (§12.8, §12.9)")

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
                await session.call_tool("rye_nonesuch", {})
            except MCPError as e:
                assert e.error.code == -32602, e.error
                assert e.error.message == "Unknown tool: rye_nonesuch", e.error
            else:
                raise AssertionError("an unknown tool was answered")
            ok("an unknown tool is a protocol error")

            await searches(session)
            await loads(session)
            await signs(session)


async def searches(session: ClientSession) -> None:
    async def search(**args) -> dict:
        result = await session.call_tool("rye_search", {"project_path": PROJECT, **args})
        response = answer(result)
        assert result.is_error is ("status" in response), result
        return response

    def ids(response: dict) -> list:
        return [r["id"] for r in response["results"]]

    response = await search(item_type="tool", query='"tables to the"')
    assert ids(response) == ["acme/publish_tables"], response
    assert list(response) == [
        "results", "total", "query", "item_type", "source", "limit", "offset", "search_type"
    ], response
    assert response["total"] == 1 and response["search_type"] == "keyword", response
    assert (response["item_type"], response["source"], response["limit"], response["offset"]) == (
        "tool", "project", 10, 0
    ), response
    hit = response["results"][0]
    assert list(hit) == [
        "id", "name", "title", "description", "category", "preview", "source", "path", "score",
        "type", "metadata", "signed", "integrity",
    ], hit
    assert hit["name"] == "publish_tables" and hit["type"] == "tool", hit
    assert hit["description"] == "Publish tables to the warehouse", hit
    assert hit["source"] == "project" and hit["path"].endswith("acme/publish_tables.sh"), hit
    assert 0 < hit["score"] <= 1, hit
    assert hit["metadata"]["executor_id"] == "rye/core/runtimes/bash/bash", hit
    assert hit["signed"] is True and hit["integrity"]["status"] == "verified", hit
    ok("a phrase finds one signed tool, with the reference's fields")

    assert ids(await search(item_type="tool", query="(tables OR logs) NOT gateway")) == [
        "acme/publish_tables"
    ]
    assert ids(await search(item_type="tool", query="tables AND warehouse")) == ["acme/publish_tables"]
    assert ids(await search(item_type="tool", query="tables logs")) == []
    ok("AND, OR, NOT and groups")

    response = await search(item_type="tool", query="tamp*")
    assert ids(response) == ["acme/tampered"], response
    hit = response["results"][0]
    assert hit["signed"] is False and hit["integrity"]["status"] == "tampered", hit
    assert hit["integrity"]["error"].startswith("Integrity failed: "), hit
    ok("a wildcard finds a tampered tool: its verdict shown, the tool not hidden")

    assert (await search(item_type="tool", query="warehuose"))["total"] == 0
    response = await search(
        item_type="tool", query="warehuose", fuzzy={"enabled": True, "max_distance": 2}
    )
    assert ids(response) == ["acme/publish_tables"], response
    ok("a fuzzy term finds a word two edits away")

    everything = await search(item_type="tool", query="acme", limit=50)
    assert everything["total"] == 4, everything
    page = await search(item_type="tool", query="acme", limit=2, offset=1)
    assert page["total"] == 4 and (page["limit"], page["offset"]) == (2, 1), page
    assert ids(page) == ids(everything)[1:3], (page, everything)
    ok("paging: limit and offset over the total")

    system = await search(item_type="tool", query="bash", source="system", limit=50)
    assert system["total"] > 0 and {r["source"] for r in system["results"]} == {"system"}, system
    assert "rye/core/runtimes/bash/bash" in ids(system), system
    assert system["results"][0]["integrity"]["status"] == "embedded", system
    project = await search(item_type="tool", query="bash", limit=50)
    assert {r["source"] for r in project["results"]} == {"project"}, project
    ok("source: the system space alone, the project by default")

    response = await session.call_tool(
        "rye_search",
        {"scope": "rye.search.tool.rye.core.runtimes.*", "query": "*", "project_path": PROJECT, "limit": 100},
    )
    response = answer(response)
    assert response["total"] > 3, response
    assert all(i.startswith("rye/core/runtimes/") for i in ids(response)), response
    assert (response["scope"], response["space"]) == ("rye.search.tool.rye.core.runtimes.*", "all")
    assert (response["item_type"], response["source"]) == ("tool", "all"), response
    ok("the seed-era scope and space")

    response = await search(item_type="knowledge", query="fridays")
    assert ids(response) == ["acme/notes"] and response["results"][0]["title"] == "Deploy notes"
    response = await search(item_type="directive", query="research")
    assert ids(response) == ["acme/flow"], response
    assert response["results"][0]["category"] == "acme", response
    ok("knowledge entries and directives")

    result = await session.call_tool(
        "rye_search", {"item_type": "tool", "query": "(tables", "project_path": PROJECT}
    )
    assert result.is_error is True, result
    assert answer(result) == {
        "status": "error",
        "error": 'Invalid query: unclosed parenthesis "(" opened at column 1',
        "query": "(tables",
    }
    ok("a query that does not parse is a tool error naming the column")

    fresh = pathlib.Path(PROJECT, ".ai", "tools", "acme", "fresh.sh")
    fresh.write_text('__tool_description__="A freshly added zebra"\necho "{}"\n')
    assert ids(await search(item_type="tool", query="zebra")) == ["acme/fresh"]
    fresh.write_text('__tool_description__="A freshly edited okapi"\necho "{}"\n')
    assert ids(await search(item_type="tool", query="zebra")) == []
    assert ids(await search(item_type="tool", query="okapi")) == ["acme/fresh"]
    fresh.unlink()
    assert (await search(item_type="tool", query="okapi"))["total"] == 0
    ok("a tool added, edited and removed on disk between calls is seen by the next call")


async def loads(session: ClientSession) -> None:
    async def load(**args):
        result = await session.call_tool("rye_load", {"project_path": PROJECT, **args})
        response = answer(result)
        assert result.is_error is (response["status"] == "error"), result
        return response

    response = await load(item_type="tool", item_id="acme/greet")
    assert response["status"] == "success", response
    assert response["source"] == "project", response
    assert response["content"].startswith("# rye:signed:"), response
    assert '__executor_id__="rye/core/runtimes/bash/bash"' in response["content"], response
    assert response["metadata"]["name"] == "greet", response
    assert response["metadata"]["extension"] == ".sh", response
    assert response["path"].endswith(".ai/tools/acme/greet.sh"), response
    ok("rye_load answers a signed tool's content and metadata")

    response = await load(item_type="tool", item_id="acme/tampered")
    assert response["status"] == "error" and response["error_type"] == "integrity", response
    assert response["error"].startswith("Integrity failed: "), response
    assert "content" not in response, response
    ok("rye_load refuses a tampered tool before giving its content")

    response = await load(item_type="tool", item_id="rye/core/runtimes/bash/bash", source="system")
    assert response["status"] == "success" and response["source"] == "system:ryechain", response
    response = await load(item_type="knowledge", item_id="acme/notes", destination="user")
    assert response["status"] == "success" and response["copied_to"] == "user", response
    copied = pathlib.Path(HOME, ".ai", "knowledge", "acme", "notes.md")
    assert response["destination_path"] == str(copied), response
    assert copied.read_text() == response["content"], response
    response = await load(item_type="knowledge", item_id="acme/notes", destination="user")
    assert response["status"] == "error" and "exists already" in response["error"], response
    copied.unlink()
    ok("rye_load from the system space, and copies keeping the category path, never over a file")

    response = await load(item_type="directive", item_id="acme/nonesuch")
    assert response["status"] == "error", response
    assert (response["item_type"], response["item_id"]) == ("directive", "acme/nonesuch"), response
    response = await load(item_type="tool", item_id="../etc/passwd")
    assert response["status"] == "error" and "../etc/passwd" in response["error"], response
    response = await load(item_type="tool", item_id="acme/greet", destination="system")
    assert "system bundles are immutable" in response["error"], response
    ok("rye_load: a missing item, a hostile id and the system space as destination are refused")


async def signs(session: ClientSession) -> None:
    async def call(name: str, **args):
        result = await session.call_tool(name, {"project_path": PROJECT, **args})
        response = answer(result)
        assert result.is_error is (response["status"] == "error"), result
        return response

    # later/fresh, later/second and later/broken (its executor id misspelt) were made unsigned.
    response = await call("rye_execute", item_type="tool", item_id="later/fresh")
    assert response["status"] == "error" and response["error"].startswith("Unsigned item"), response
    response = await call("rye_sign", item_type="tool", item_id="later/fresh")
    assert response["status"] == "signed", response
    assert response["item_id"] == "later/fresh" and response["location"] == "project", response
    assert set(response["signature"]) == {"timestamp", "hash", "ed25519_sig", "pubkey_fp"}, response
    assert pathlib.Path(response["path"]).read_text().startswith("# rye:signed:"), response
    response = await call("rye_execute", item_type="tool", item_id="later/fresh", parameters={"n": 3})
    assert response["status"] == "success", response
    assert response["data"] == {"ok": True, "params": {"n": 3}}, response
    ok("rye_sign signs a tool, which then runs")

    response = await call("rye_sign", item_type="tool", item_id="later/*")
    assert response["status"] == "completed", response
    assert response["signed"] == ["later/fresh", "later/second"], response
    assert [f["item"] for f in response["failed"]] == ["later/broken"], response
    assert response["failed"][0]["error"].startswith("Chain validation failed"), response
    assert response["total"] == 3, response
    assert response["summary"] == "Signed 2/3 items, 1 failed", response
    ok("rye_sign of a batch signs what validates and refuses a broken chain")

    response = await call("rye_sign", item_type="tool", item_id="later/nonesuch")
    assert response["status"] == "error" and response["error"] == "Tool not found: later/nonesuch", response
    response = await call("rye_sign", item_type="tool", item_id="later/*", source="system")
    assert "system bundles are immutable" in response["error"], response
    ok("rye_sign: a missing item and the system space are refused")


async def reference_names() -> None:
    async with stdio_client(server("--tool-names", "reference"), errlog=sys.stderr) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            assert init.server_info.name == "rye", init
            tools = (await session.list_tools()).tools
            assert [t.name for t in tools] == ["execute", "search", "load", "sign"], tools
            response = answer(
                await session.call_tool(
                    "execute",
                    {"item_type": "tool", "item_id": "acme/greet", "project_path": PROJECT, "dry_run": True},
                )
            )
            assert response["status"] == "validation_passed", response
            response = answer(
                await session.call_tool(
                    "search", {"item_type": "tool", "query": "greet", "project_path": PROJECT}
                )
            )
            assert [r["id"] for r in response["results"]] == ["acme/greet"], response
            response = answer(
                await session.call_tool(
                    "load", {"item_type": "tool", "item_id": "acme/greet", "project_path": PROJECT}
                )
            )
            assert response["metadata"]["name"] == "greet", response
            ok("--tool-names reference: server rye, tools execute, search, load and sign")


async def newest_client() -> None:
    """The SDK's high-level client, in its default mode: whatever it negotiates, a call works."""
    async with Client(server()) as client:
        version = client.session.protocol_version
        tools = (await client.list_tools()).tools
        assert [t.name for t in tools] == ["rye_execute", "rye_search", "rye_load", "rye_sign"], tools
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
