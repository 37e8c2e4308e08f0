"""Ending asyncio tasks: cancel them and wait until they are over, without swallowing the caller's cancellation.

`t.cancel()` then `with suppress(CancelledError): await t` also swallows a cancellation of the caller that
arrives meanwhile (a registry's stop, a timeout around a close): the caller goes on as if nobody had asked it
to end. A watch stopped as its stream ended went on following that way (`Follower._stream`).
"""

from __future__ import annotations

import asyncio
from typing import Any


async def cancel_and_wait(*tasks: asyncio.Future[Any]) -> None:
    """Cancel the tasks not done yet and wait until all have ended. What they raised is read (never logged as
    "never retrieved"), not raised; a cancellation of the caller meanwhile is raised."""
    running = [t for t in tasks if not t.done()]
    for t in running:
        t.cancel()
    if running:
        await asyncio.wait(running)
    for t in tasks:
        if not t.cancelled():
            t.exception()
