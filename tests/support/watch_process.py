"""A watch worker as its own process, for the restart tests: `python -m tests.support.watch_process <ws> <out>`.

It restores the workspace's watches on the real clock and "delivers" each result by appending one JSON
line (target, watchId, text) to <out>, fsynced, before reporting success: what reached the chat is on disk.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from a2aconsole.core.clock import SystemClock
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.pending.records import WatchRecord
from a2aconsole.core.remote.client import Remote
from a2aconsole.core.remote.http import new_http_client
from a2aconsole.core.watches.registry import WatchRegistry


def _append(path: Path, line: str) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write(line + "\n")
        f.flush()
        os.fsync(f.fileno())


class FileDelivery:
    def __init__(self, ws: Workspace, out: Path) -> None:
        self.ws, self.out = ws, out

    async def deliver(self, target: str, text: str, record: WatchRecord | None = None) -> bool:
        line = json.dumps({"target": target, "watchId": record.watch_id if record else "", "text": text})
        _append(self.out, line)
        return True


async def main(root: str, out: str) -> None:
    ws = Workspace(root)
    http = new_http_client()
    registry = WatchRegistry(
        Remote(http, call_timeout=10.0, card_timeout=5.0), ClientSettings(), FileDelivery(ws, Path(out)), SystemClock()
    )
    await registry.start([ws])
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
