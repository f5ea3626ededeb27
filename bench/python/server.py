"""The benchmark's tools on the official MCP Python SDK (mcp==2.3.0).

- `echo {text}` returns its text as one text block;
- `confirm_delete {path}` asks the boolean `confirm` (a multi round-trip request; the SDK
  seals `requestState` with its default ephemeral key);
- `subscriptions/listen` is served by the SDK's in-process subscription bus, with the
  cap on concurrent streams raised from 1024 to 20,000.

Streamable HTTP runs stateless with JSON responses, logging at WARNING so that no access
log line is written per request.

    python server.py http PORT      # http://127.0.0.1:PORT/mcp
    python server.py stdio
"""

import atexit
import os
import shutil
import sys
import tempfile
from typing import Annotated

from pydantic import BaseModel

from mcp import types
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.server.mcpserver import (
    AcceptedElicitation,
    Elicit,
    ElicitationResult,
    MCPServer,
    Resolve,
)

# The benchmark holds 10,000 listen streams open; the SDK's listen handler refuses more
# than 1024 by default, so the bench registers one with a higher cap on the same bus.
MAX_LISTEN_STREAMS = 20_000

bus = InMemorySubscriptionBus()
mcp = MCPServer("python-bench", log_level="WARNING", subscriptions=bus)
mcp._lowlevel_server.add_request_handler(
    "subscriptions/listen",
    types.SubscriptionsListenRequestParams,
    ListenHandler(bus, max_subscriptions=MAX_LISTEN_STREAMS),
)


def fresh_sandbox() -> str:
    """A folder made fresh for the process, as ferry-everything's sandbox is: a lookup
    costs the kernel what ferry-everything's does (a name not seen before in an existing
    folder). Removed at exit; the folders of processes that were killed are removed by
    the next one."""
    base = tempfile.gettempdir()
    for name in os.listdir(base):
        pid = name.removeprefix("ferry-bench-python-")
        if pid != name and pid.isdigit() and not alive(int(pid)):
            shutil.rmtree(os.path.join(base, name), ignore_errors=True)
    path = os.path.join(base, f"ferry-bench-python-{os.getpid()}")
    os.makedirs(path, exist_ok=True)
    atexit.register(shutil.rmtree, path, True)
    return path


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


SANDBOX = fresh_sandbox()


class Confirm(BaseModel):
    confirm: bool


def ask_confirm(path: str) -> Elicit[Confirm]:
    return Elicit(f"Delete {path}?", Confirm)


@mcp.tool()
def echo(text: str) -> str:
    """Returns its text as one text block."""
    return text


@mcp.tool()
def confirm_delete(path: str, confirm: Annotated[ElicitationResult[Confirm], Resolve(ask_confirm)]) -> str:
    """Deletes a path after the user confirms."""
    # ferry-everything's shape: it looks in a folder (one lstat) and, as a benchmark
    # server, never deletes anything.
    if isinstance(confirm, AcceptedElicitation) and confirm.data.confirm:
        if os.path.lexists(os.path.join(SANDBOX, path)):
            return f"Nothing deleted: {path} is kept (this benchmark server deletes nothing)"
        return f"Nothing deleted: {path} does not exist in {SANDBOX}"
    return f"Kept {path}: nothing deleted"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "http":
        mcp.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]), stateless_http=True, json_response=True)
    elif len(sys.argv) == 2 and sys.argv[1] == "stdio":
        mcp.run("stdio")
    else:
        sys.exit("usage: server.py http PORT | server.py stdio")
