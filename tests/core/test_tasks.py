"""`tasks.cancel_and_wait`: tasks cancelled and waited for, their failures read, the caller's own stop kept."""

from __future__ import annotations

import asyncio

import pytest

from a2aconsole.core.tasks import cancel_and_wait


async def test_running_tasks_end_cancelled_and_a_failed_one_raises_nothing() -> None:
    never = asyncio.Event()

    async def fails() -> None:
        raise ValueError("its own failure")

    waiting = asyncio.ensure_future(never.wait())
    failed = asyncio.ensure_future(fails())
    await asyncio.wait({failed})
    await cancel_and_wait(waiting, failed)
    assert waiting.cancelled() and isinstance(failed.exception(), ValueError)
    await cancel_and_wait()  # nothing to end


async def test_a_cancellation_of_the_caller_meanwhile_is_not_swallowed() -> None:
    """The task takes its time to wind down; the caller is stopped meanwhile and stops (with `suppress` around
    `await task`, it went on as if nothing had happened)."""
    started, winding, done_winding = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def slow_to_end() -> None:
        try:
            started.set()
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            winding.set()
            await done_winding.wait()
            raise

    task = asyncio.ensure_future(slow_to_end())
    await started.wait()
    after: list[str] = []

    async def closer() -> None:
        await cancel_and_wait(task)
        after.append("went on")

    closing = asyncio.ensure_future(closer())
    await winding.wait()
    closing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await closing
    assert after == []
    done_winding.set()
    await asyncio.wait({task})
    assert task.cancelled()
