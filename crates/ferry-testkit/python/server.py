"""A small MCP server built with the official Python SDK (mcp 2.3.0), the peer of Ferry's
interop tests (`ferry_testkit::python`).

It has two tools: one that deletes a file after the user confirms (`delete_file`, or the
name given with `--delete-tool`) and `echo`, which answers at once. The SDK serves both
eras from one server: a 2026-07-28 client gets the question inside an
InputRequiredResult, a 2025-11-25 client (after `initialize`) gets an
`elicitation/create` request in the middle of the call. The SDK's requestState is not
single use: a retry replayed with the same state is answered again.

    python3 server.py [--name NAME] [--delete-tool TOOL] stdio
    python3 server.py [--name NAME] [--delete-tool TOOL] http   # 127.0.0.1, a free port; prints the port
"""

import argparse
import asyncio
import socket
from typing import Annotated

import uvicorn
from pydantic import BaseModel

from mcp.server.mcpserver import (
    AcceptedElicitation,
    DeclinedElicitation,
    Elicit,
    ElicitationResult,
    MCPServer,
    Resolve,
)


class Confirm(BaseModel):
    confirm: bool


def ask_confirm(path: str) -> Elicit[Confirm]:
    return Elicit(f"Delete {path}?", Confirm)


def delete_file(path: str, answer: Annotated[ElicitationResult[Confirm], Resolve(ask_confirm)]) -> str:
    """Deletes a file after the user confirms."""
    if isinstance(answer, AcceptedElicitation):
        return f"Deleted {path}" if answer.data.confirm else f"Kept {path}"
    if isinstance(answer, DeclinedElicitation):
        return f"Kept {path}"
    return "Cancelled"


def echo(text: str) -> str:
    """Returns its text."""
    return text


def server(name: str, delete_tool: str) -> MCPServer:
    mcp = MCPServer(name)
    mcp.tool(name=delete_tool)(delete_file)
    mcp.tool()(echo)
    return mcp


async def serve_http(mcp: MCPServer) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    print(sock.getsockname()[1], flush=True)
    app = mcp.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, log_level="warning")
    await uvicorn.Server(config).serve(sockets=[sock])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name", default="python-interop", help="the server's name")
    parser.add_argument("--delete-tool", default="delete_file", help="the confirming tool's name")
    parser.add_argument("transport", choices=["stdio", "http"])
    args = parser.parse_args()
    mcp = server(args.name, args.delete_tool)
    if args.transport == "http":
        asyncio.run(serve_http(mcp))
    else:
        mcp.run("stdio")


if __name__ == "__main__":
    main()
