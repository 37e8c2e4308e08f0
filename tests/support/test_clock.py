"""The fake clock's `timeout`: `asyncio.timeout`'s endings on fake time, so a send's wait is bounded by fake time in
tests (on the real clock `Clock.timeout` is `asyncio.timeout` itself, which every real send goes through)."""

from __future__ import annotations

import asyncio

import pytest

from tests.support.clock import FakeClock


async def _wait_under(clock: FakeClock, seconds: float, never: asyncio.Future[None]) -> None:
    async with clock.timeout(seconds):
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
    async with clock.timeout(5):
        await asyncio.sleep(0)
    assert clock.sleeping == 0  # its timer is gone: advancing later cancels nothing
    await clock.advance(10)


class _GateClock(FakeClock):
    """A clock whose every sleep ends when the test opens `gate`: the deadline's time passes at a chosen instant."""

    def __init__(self) -> None:
        super().__init__()
        self.gate: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    async def sleep(self, seconds: float) -> None:
        await self.gate


async def test_a_deadline_that_passes_as_its_body_ends_cancels_nothing_after() -> None:
    """The time passes in the loop turn in which the body's awaited call is answered: the body ends plainly (it
    was answered) and what the task does after the block is not cancelled (the deadline's firing was already
    scheduled when the block ended: a send's task was cancelled so while it awaited its record's write)."""
    clock = _GateClock()
    answered: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    async def body() -> str:
        async with clock.timeout(5):
            await answered
        for _ in range(3):
            await asyncio.sleep(0)
        return "went on"

    task = asyncio.ensure_future(body())
    for _ in range(3):
        await asyncio.sleep(0)  # inside the block, awaiting
    clock.gate.set_result(None)  # the time passes (its timer's step runs first in the next turn) ...
    answered.set_result(None)  # ... and the call is answered in the same turn
    assert await task == "went on"
