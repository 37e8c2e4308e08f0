"""Time as an injected dependency, so backoff and timeouts are tested with fake time, not sleeps."""

from __future__ import annotations

import asyncio
import contextlib
import time
from contextlib import AbstractAsyncContextManager
from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime: ...
    def monotonic(self) -> float: ...
    async def sleep(self, seconds: float) -> None: ...
    def timeout(self, seconds: float) -> AbstractAsyncContextManager[None]:
        """`async with clock.timeout(seconds):` raises TimeoutError once `seconds` pass on this clock, cancelling
        what the body awaits then (`asyncio.timeout`'s endings)."""
        ...


class SystemClock:
    """The real clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))

    def timeout(self, seconds: float) -> AbstractAsyncContextManager[None]:
        return asyncio.timeout(seconds)


async def wait_done(clock: Clock, fut: asyncio.Future[object], seconds: float) -> None:
    """Until `fut` is done or `seconds` pass on `clock`; `fut` is left running."""
    if fut.done() or seconds <= 0:
        return
    with contextlib.suppress(TimeoutError):
        async with clock.timeout(seconds):
            await asyncio.wait({fut})
