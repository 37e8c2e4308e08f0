"""The watch worker as a Channels consumer on the `a2a-watches` channel (`manage.py runworker a2a-watches`).

Web processes without the registry send it wake-ups; the messages only say where to look, since the
files are the truth and channel messages are at-most-once. `manage.py runworker` (our subclass) starts the
registry, restoring every enabled workspace, before it listens; it also rescans the files every minute.

Messages: `watch.arm` / `watch.stop` {workspace} (re-read that pending.json), `watch.push` {workspace,
watch_id} (a push the web process verified), `watch.rescan` {workspace?}, `target.flush` {target}.
A message about a workspace whose lease another worker holds is dropped here: that worker finds the
change at its own rescan (within a minute), which the at-most-once channel requires anyway.
"""

from __future__ import annotations

import logging
from typing import Any

from channels.consumer import AsyncConsumer
from channels.db import database_sync_to_async

from a2aconsole.core.watches import WatchRegistry
from a2aconsole.core.workspace import Workspace
from a2aconsole.web.runtime import Runtime, enabled_workspaces, start_worker

log = logging.getLogger(__name__)


class WatchWorker(AsyncConsumer):
    """One handler per message type; a malformed message is logged and dropped, never fatal."""

    async def _registry(self) -> WatchRegistry | None:
        rt = await start_worker()
        return rt.registry if rt is not None else None

    async def _workspace(self, message: dict[str, Any]) -> Workspace | None:
        """The message's workspace, if it is one this console knows (the channel layer is not trusted more)
        and this worker holds its lease."""
        path = message.get("workspace")
        if not isinstance(path, str) or not path:
            return None
        ws = Workspace(path)
        known = await database_sync_to_async(enabled_workspaces)()
        if ws not in known:
            log.warning("watch worker: ignoring a message about an unknown workspace")
            return None
        rt = await start_worker()
        if rt is None or not rt.leases.acquire(ws):
            return None
        return ws

    async def watch_arm(self, message: dict[str, Any]) -> None:
        registry = await self._registry()
        ws = await self._workspace(message)
        if registry is not None and ws is not None:
            await registry.rescan(ws)

    watch_stop = watch_arm

    async def watch_rescan(self, message: dict[str, Any]) -> None:
        rt: Runtime | None = await start_worker()
        if rt is None:
            return
        if message.get("workspace"):
            ws = await self._workspace(message)
            await rt.rescan([ws] if ws is not None else [])
        else:
            await rt.rescan(await database_sync_to_async(enabled_workspaces)())

    async def watch_push(self, message: dict[str, Any]) -> None:
        registry = await self._registry()
        ws = await self._workspace(message)
        watch_id = message.get("watch_id")
        if registry is None or ws is None or not isinstance(watch_id, str):
            return
        if watch_id not in registry:
            await registry.rescan(ws)
        registry.wake(watch_id)

    async def target_flush(self, message: dict[str, Any]) -> None:
        rt = await start_worker()
        target = message.get("target")
        if rt is not None and rt.registry is not None and isinstance(target, str) and target:
            rt.request_flush(target)  # only for a target whose workspace this worker holds
