"""The watch worker inside the serving process (the embedded default): `start()` / `stop()` for the serve command.

Daphne runs no ASGI lifespan events, so the serve command calls these from inside daphne's running loop.
With `A2ACONSOLE_WATCH_WORKER=external` the registry runs in `manage.py runworker a2a-watches` instead;
this process then only wakes that worker up.
"""

from __future__ import annotations

import logging

from django.conf import settings

from a2aconsole.web.inbound import start_listening, stop_listening
from a2aconsole.web.process.runtime import start_worker, stop_worker, wake_worker, worker_mode

log = logging.getLogger(__name__)


async def start() -> None:
    """Start the watch registry in this process and restore every enabled chat target's watches.

    With `A2AClient__Enabled=false` nothing is armed or restored; it only logs that the client is off.
    """

    await start_listening()  # a2a.inbound hop messages from hosts inside this process (chat targets work)
    if not settings.A2A_CLIENT.enabled:
        log.info("the A2A client is off (A2AClient__Enabled=false): no watches are restored or armed")
        return
    if worker_mode() == "external":
        log.info("watches run in the external worker (manage.py runworker a2a-watches); waking it")
        await wake_worker({"type": "watch.rescan"})
        return
    await start_worker()


async def stop() -> None:
    """Stop the registry (idempotent): no loop starts afterwards and every record stays in pending.json."""

    await stop_listening()
    await stop_worker()
