"""The official Python SDK's client (mcp 2.3.0) against ferry-everything, for Ferry's
interop tests: it calls `confirm_delete`, answers the confirmation through its
elicitation callback, and prints what happened as one JSON line.

    python3 client.py http://127.0.0.1:PORT/mcp MODE ACTION
    python3 client.py stdio:/path/to/ferry-everything MODE ACTION

MODE is the SDK's `mode=`: "2026-07-28", "auto" or "legacy". ACTION is how the user
answers: accept, decline or cancel.
"""

import asyncio
import json
import sys

from mcp import Client, StdioServerParameters, types


async def main() -> None:
    target, mode, action = sys.argv[1], sys.argv[2], sys.argv[3]
    asked = []

    async def elicit(context, params):
        asked.append(params.message)
        if action == "accept":
            return types.ElicitResult(action="accept", content={"confirm": True})
        return types.ElicitResult(action=action)

    if target.startswith("stdio:"):
        server = StdioServerParameters(command=target[len("stdio:"):], args=["--stdio"])
    else:
        server = target
    async with Client(server, mode=mode, elicitation_callback=elicit) as client:
        result = await client.call_tool("confirm_delete", {"path": "report.txt"})
        text = result.content[0].text if result.content else ""
        print(json.dumps({
            "protocol": client.protocol_version,
            "asked": asked,
            "text": text,
            "is_error": bool(result.is_error),
        }))


if __name__ == "__main__":
    asyncio.run(main())
