"""A `send` as its own process, for the kill-during-the-wait test: `python -m tests.support.send_process <ws>
<agent> <message> <wait seconds>`. It sends once with the tool (no watch registry, like the CLI) and prints
the tool's answer as one JSON line when the wait ends."""

from __future__ import annotations

import asyncio
import json
import sys

from a2aconsole.core.chat import ChatTarget
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.remote.client import Remote
from a2aconsole.core.remote.http import new_http_client
from a2aconsole.core.tool.tool import A2ATool

TARGET = "chat1"


async def main(root: str, agent: str, message: str, wait_seconds: str) -> None:
    ws = Workspace(root)
    http = new_http_client()
    tool = A2ATool(Remote(http, call_timeout=10.0, card_timeout=5.0), ClientSettings(wait_seconds=int(wait_seconds)))
    result = await tool.run("send", {"agent": agent, "message": message}, ChatTarget(TARGET, ws))
    print(json.dumps(result), flush=True)
    await http.aclose()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
