"""A tiny MCP server written with the official MCP Python SDK (PyPI `mcp`), nobody on ryechain's
project wrote its protocol side: the peer of the MCP runtimes' tests (tests/mcp_runtimes.rs).

    sdk_server.py [--http PORTFILE] [--pidfile F] [--child-pidfile F] [--hang]

stdio by default; `--http PORTFILE` serves streamable HTTP on 127.0.0.1 at a free port (written
to PORTFILE once it listens). `--pidfile` writes this process's pid, `--child-pidfile` starts a
sleeping child and writes its pid (to check that nothing is left running). `--hang` never answers
`initialize` (stdio: stdin is never read; http: connections are accepted and never answered).
"""

import argparse
import os
import socket
import subprocess
import sys
import time
from typing import TypedDict

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError


def write(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


parser = argparse.ArgumentParser()
parser.add_argument("--http")
parser.add_argument("--pidfile")
parser.add_argument("--child-pidfile")
parser.add_argument("--hang", action="store_true")
args = parser.parse_args()

if args.pidfile:
    write(args.pidfile, str(os.getpid()))
if args.child_pidfile:
    # The pidfile's path in its command line lets a test find it even before it is written.
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(300)", args.child_pidfile],
        stdin=subprocess.DEVNULL,
    )
    write(args.child_pidfile, str(child.pid))

sock = None
if args.http:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)

if args.hang:
    if sock is not None:
        write(args.http, str(sock.getsockname()[1]))
        held = []
        while True:
            conn, _ = sock.accept()
            held.append(conn)
    while True:
        time.sleep(1)

server = MCPServer("ryechain-test-peer")


class Sum(TypedDict):
    sum: int
    inputs: list[int]


@server.tool()
def add(a: int, b: int) -> Sum:
    """Add two numbers (structured content)."""
    return {"sum": a + b, "inputs": [a, b]}


@server.tool(structured_output=False)
def echo(text: str) -> str:
    """Echo the text back (one text block, no structured content)."""
    return text


@server.tool(structured_output=False)
def fail(reason: str) -> str:
    """Always fails with the reason (an MCP tool error)."""
    raise ToolError(f"cannot do it: {reason}")


@server.tool(structured_output=False)
def crash(code: int = 3) -> str:
    """Exits the server in the middle of the call."""
    sys.stderr.write("sdk_server: crashing on purpose\n")
    sys.stderr.flush()
    os._exit(code)


@server.tool(structured_output=False)
def env(name: str) -> str:
    """The value of an environment variable of the server, or <unset>."""
    return os.environ.get(name, "<unset>")


@server.tool(structured_output=False)
def cwd() -> str:
    """The server's working directory."""
    return os.getcwd()


if sock is None:
    server.run()
else:
    import anyio
    import uvicorn

    app = server.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, log_level="warning")
    write(args.http, str(sock.getsockname()[1]))
    anyio.run(lambda: uvicorn.Server(config).serve(sockets=[sock]))
