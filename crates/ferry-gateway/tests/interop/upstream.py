"""An MCP server built with the official Python SDK (mcp 2.3.0), for ferry-gateway's
tests: `confirm_delete` asks the user to confirm (an InputRequiredResult to a 2026-07-28
client), `echo` answers at once.

    python3 upstream.py       # Streamable HTTP on 127.0.0.1, a free port; prints the port

The SDK's requestState is not single use: a retry replayed with the same state is
answered again. The gateway in front refuses the replay.
"""

import asyncio
import socket
import sys
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

mcp = MCPServer("python-upstream")


class Confirm(BaseModel):
    confirm: bool


def ask_confirm(path: str) -> Elicit[Confirm]:
    return Elicit(f"Delete {path}?", Confirm)


@mcp.tool()
def confirm_delete(path: str, answer: Annotated[ElicitationResult[Confirm], Resolve(ask_confirm)]) -> str:
    """Deletes a file after the user confirms."""
    if isinstance(answer, AcceptedElicitation):
        return f"Deleted {path}" if answer.data.confirm else f"Kept {path}"
    if isinstance(answer, DeclinedElicitation):
        return f"Kept {path}"
    return "Cancelled"


@mcp.tool()
def echo(text: str) -> str:
    """Returns its text."""
    return text


async def main() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    print(sock.getsockname()[1], flush=True)
    app = mcp.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, log_level="warning")
    await uvicorn.Server(config).serve(sockets=[sock])


if __name__ == "__main__":
    asyncio.run(main())
