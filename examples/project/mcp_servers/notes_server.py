"""The example MCP server of examples/project: one tool, `add_note`, written with the official MCP
Python SDK (PyPI `mcp`). ryechain calls it through the mcp/stdio runtime:

    RYE_MCP_PYTHON=target/mcp-venv/bin/python \
      ryechain exec mcp/notes/add_note examples/project --user-space examples/user \
      --params '{"title": "Ship", "body": "on Friday"}'
"""

from typing import TypedDict

from mcp.server.mcpserver import MCPServer

server = MCPServer("example-notes")


class Note(TypedDict):
    title: str
    words: int


@server.tool()
def add_note(title: str, body: str) -> Note:
    """Take a note and say how many words its body has."""
    return {"title": title, "words": len(body.split())}


if __name__ == "__main__":
    server.run()
