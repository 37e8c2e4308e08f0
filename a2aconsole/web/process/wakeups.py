"""Wake-ups: the messages web processes send the watch worker, and how it handles them.

Web processes without the registry send them; the messages only say where to look, since the files are the
truth and channel messages are at-most-once. `watch.arm` / `watch.stop` {workspace} (re-read that
pending.json), `watch.push` {workspace, watch_id} (a push the web process verified), `watch.rescan`
{workspace?}, `target.flush` {target, workspace}. They arrive on the shared channel (`worker.WatchWorker`) or,
with Redis leases, on the lease holder's own channel (`listen`). A message about a workspace whose lease
another worker holds is handed to that worker's channel once; with no holder to name (file leases) it is
dropped, and the holder finds the change at its own rescan.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer

from a2aconsole.core.chat import ChatTarget
from a2aconsole.core.files import Workspace
from a2aconsole.web.chats import enabled_workspaces

if TYPE_CHECKING:
    from a2aconsole.web.process.runtime import Runtime

log = logging.getLogger(__name__)


async def _workspace(rt: Runtime, message: dict[str, Any]) -> Workspace | None:
    """The message's workspace, if it is one this console knows (the channel layer is not trusted more) and
    this worker holds its lease; else the message goes to the holder (once) and None."""
    path = message.get("workspace")
    if not isinstance(path, str) or not path:
        return None
    ws = Workspace(path)
    known = await database_sync_to_async(enabled_workspaces)()
    if ws not in known:
        log.warning("watch worker: ignoring a message about an unknown workspace")
        return None
    if await rt.leases.acquire(ws):
        return ws
    if not rt.leases.expires:  # file leases name no channel: the holder finds the change at its rescan
        return None
    holder = await rt.leases.holder_of(ws)
    layer = get_channel_layer()
    if holder and holder != rt.leases.holder and not message.get("forwarded") and layer is not None:
        await layer.send(holder, {**message, "forwarded": True})
    return None


async def watch_arm(rt: Runtime, message: dict[str, Any]) -> None:
    ws = await _workspace(rt, message)
    if rt.registry is not None and ws is not None:
        await rt.registry.rescan(ws)


async def watch_rescan(rt: Runtime, message: dict[str, Any]) -> None:
    if message.get("workspace"):
        ws = await _workspace(rt, message)
        await rt.rescan([ws] if ws is not None else [])
    else:
        await rt.rescan(await database_sync_to_async(enabled_workspaces)())


async def watch_push(rt: Runtime, message: dict[str, Any]) -> None:
    ws = await _workspace(rt, message)
    watch_id = message.get("watch_id")
    if rt.registry is None or ws is None or not isinstance(watch_id, str):
        return
    if watch_id not in rt.registry:
        await rt.registry.rescan(ws)
    rt.registry.wake(watch_id)


async def target_flush(rt: Runtime, message: dict[str, Any]) -> None:
    """Deliver a target's kept results: the message names its workspace (the sender resolved the target), so the
    worker reads no chat target; only a workspace whose lease it holds is flushed here."""
    target = message.get("target")
    if rt.registry is None or not isinstance(target, str) or not target:
        return
    ws = await _workspace(rt, message)
    if ws is not None:
        rt.registry.request_flush(ChatTarget(target, ws))


HANDLERS: dict[str, Callable[[Runtime, dict[str, Any]], Awaitable[None]]] = {
    "watch.arm": watch_arm,
    "watch.stop": watch_arm,
    "watch.rescan": watch_rescan,
    "watch.push": watch_push,
    "target.flush": target_flush,
}


async def dispatch(message: dict[str, Any], rt: Runtime) -> None:
    """Handle one wake-up in the worker `rt`; an unknown message is logged and dropped."""
    handler = HANDLERS.get(str(message.get("type")))
    if handler is None:
        log.warning("watch worker: ignoring a message of unknown type")
        return
    await handler(rt, message)


async def listen(rt: Runtime) -> None:
    """Wake-ups sent to this worker's own channel (the holder's, named in its leases)."""
    layer = get_channel_layer()
    if layer is None:
        return
    while rt.registry is not None and not rt.registry.stopped:
        try:
            message = await layer.receive(rt.leases.holder)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            log.warning("watch worker: receiving wake-ups failed (%s); retrying", type(e).__name__)
            await rt.clock.sleep(1.0)
            continue
        try:
            await dispatch(message, rt)
        except Exception:
            log.exception("watch worker: a wake-up failed")
