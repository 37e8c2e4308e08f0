"""Inbound hops: how many agent-to-agent steps led to a chat target's last inbound message.

The count is kept on the target (`ChatTarget.inbound_hops`, the one copy) and read with the target each time
a call resolves it (`web.chats`). The API takes the target from its token check, which keeps a live token with
its target for `api.tokens.CACHE_SECONDS`: a count saved in this process is seen at the next call, one saved by
another process (`runworker a2a-inbound`) within that time. Every outgoing message carries inbound + 1
(`volcanic.hops`), so a chain of agents calling each other can be stopped by its length. A host sets it with
its API call's `hops`, or, inside the process, with a message on the `a2a-inbound` channel:
`{"type": "a2a.inbound", "target": "<id>", "hops": N}`. Bad messages are logged and dropped. The serving
process listens on the channel itself (`start_listening`); `manage.py runworker a2a-inbound` serves it elsewhere.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from channels.consumer import AsyncConsumer
from channels.layers import get_channel_layer

from a2aconsole.core.chat import MAX_HOPS
from a2aconsole.core.tasks import cancel_and_wait
from a2aconsole.web import db_threads
from a2aconsole.web.models import ChatTarget

log = logging.getLogger(__name__)

CHANNEL = "a2a-inbound"


async def set_inbound_hops(target: ChatTarget | str, hops: int) -> None:
    """Keep the hop count of the target's last inbound message (the API's `hops`, or an `a2a.inbound` message), on a
    kept database connection (`db_threads`): an API call's, not one opened for it."""
    if isinstance(target, str):
        target = await ChatTarget.objects.aget(pk=target)
    if target.inbound_hops != hops:
        await db_threads.run(_keep_hops, target, hops)


def _keep_hops(target: ChatTarget, hops: int) -> None:
    target.inbound_hops = hops
    target.save(update_fields=["inbound_hops"])


async def handle_inbound(message: dict[str, Any]) -> None:
    """Apply one `a2a.inbound` message; a bad one is logged and dropped, never raised."""
    target, hops = message.get("target"), message.get("hops")
    if not isinstance(target, str) or isinstance(hops, bool) or not isinstance(hops, int):
        log.warning("a2a.inbound message dropped: expected target (string) and hops (whole number)")
        return
    if not 0 <= hops <= MAX_HOPS:
        log.warning("a2a.inbound for target %s dropped: hops %s out of range", target, hops)
        return
    try:
        await set_inbound_hops(target, hops)
    except ChatTarget.DoesNotExist:
        log.warning("a2a.inbound for unknown target %s dropped", target)
    except Exception:
        log.exception("a2a.inbound for target %s failed", target)


class InboundConsumer(AsyncConsumer):
    """The channel's consumer, for `manage.py runworker a2a-inbound`."""

    async def a2a_inbound(self, message: dict[str, Any]) -> None:
        await handle_inbound(message)


_listener: asyncio.Task[None] | None = None


async def _listen(layer: Any) -> None:
    while True:
        try:
            message = await layer.receive(CHANNEL)
        except Exception as e:  # the layer is down (Redis): try again shortly
            log.warning("a2a-inbound: receiving failed (%s); retrying in 5 s", type(e).__name__)
            await asyncio.sleep(5)
            continue
        if message.get("type") == "a2a.inbound":
            await handle_inbound(message)


async def start_listening() -> None:
    """Serve the `a2a-inbound` channel inside this process (the embedded default runs no `runworker`)."""
    global _listener
    layer = get_channel_layer()
    if layer is None or (_listener is not None and not _listener.done()):
        return
    _listener = asyncio.ensure_future(_listen(layer))


async def stop_listening() -> None:
    """Stop the listener (idempotent)."""
    global _listener
    task, _listener = _listener, None
    if task is not None:
        await cancel_and_wait(task)
