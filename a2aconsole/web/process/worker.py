"""The watch worker as a Channels consumer on the `a2a-watches` channel (`manage.py runworker a2a-watches`).

`manage.py runworker` (our subclass) starts the registry, restoring every enabled workspace, before it listens;
it also rescans the files every minute. The messages and what each does: `wakeups.py`."""

from __future__ import annotations

from typing import Any

from channels.consumer import AsyncConsumer

from a2aconsole.web.process.runtime import start_worker
from a2aconsole.web.process.wakeups import dispatch


async def handle(message: dict[str, Any]) -> None:
    """A wake-up on the shared channel, handled by this loop's worker (started first; none: the client is off)."""
    rt = await start_worker()
    if rt is not None:
        await dispatch(message, rt)


class WatchWorker(AsyncConsumer):
    """The shared `a2a-watches` channel's consumer: every message type goes to `dispatch`."""

    async def watch_arm(self, message: dict[str, Any]) -> None:
        await handle(message)

    watch_stop = watch_rescan = watch_push = target_flush = watch_arm
