"""A small MCP server built with the official Python SDK (mcp 2.3.0), for Ferry's
interop tests.

The SDK serves both eras from one server: a 2026-07-28 client gets the question inside
an InputRequiredResult, a 2025-11-25 client (after `initialize`) gets an
`elicitation/create` request in the middle of the call.

    python3 server.py stdio
    python3 server.py http PORT      # Streamable HTTP at http://127.0.0.1:PORT/mcp
"""

import sys
from typing import Annotated

from pydantic import BaseModel

from mcp.server.mcpserver import (
    AcceptedElicitation,
    DeclinedElicitation,
    Elicit,
    ElicitationResult,
    MCPServer,
    Resolve,
)

mcp = MCPServer("python-interop")


class Confirm(BaseModel):
    confirm: bool


def ask_confirm(path: str) -> Elicit[Confirm]:
    return Elicit(f"Delete {path}?", Confirm)


@mcp.tool()
def delete_file(path: str, answer: Annotated[ElicitationResult[Confirm], Resolve(ask_confirm)]) -> str:
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


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "http":
        mcp.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        mcp.run("stdio")
