"""`clock.deadline`: `asyncio.timeout` on the injected clock, so a send's wait is bounded by fake time in tests
(on the real clock it is `asyncio.timeout` itself, which every real send goes through)."""

from __future__ import annotations

import asyncio

import pytest

from a2aconsole.core.clock import FakeClock, deadline


async def _wait_under(clock: FakeClock, seconds: float, never: asyncio.Future[None]) -> None:
    async with deadline(clock, seconds):
        await never


async def test_the_deadline_raises_timeout_once_its_time_passes_on_the_clock() -> None:
    clock = FakeClock()
    never: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    waiting = asyncio.ensure_future(_wait_under(clock, 5, never))
    await clock.wait_for_sleepers(1)
    await clock.advance(4)
    assert not waiting.done()
    await clock.advance(1)
    with pytest.raises(TimeoutError):
        await waiting
    assert never.cancelled() and clock.sleeping == 0


async def test_a_cancel_from_elsewhere_stays_a_cancel_and_a_body_in_time_ends_plainly() -> None:
    clock = FakeClock()
    never: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    waiting = asyncio.ensure_future(_wait_under(clock, 5, never))
    await clock.wait_for_sleepers(1)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert clock.sleeping == 0
    async with deadline(clock, 5):
        await asyncio.sleep(0)
    assert clock.sleeping == 0  # its timer is gone: advancing later cancels nothing
    await clock.advance(10)
