"""The broadcast writer's close: it ends the writer, and a cancellation of the close itself is not swallowed."""

from __future__ import annotations

import asyncio

from a2aconsole.web import broadcast


async def test_a_close_cancelled_while_the_writer_ends_is_cancelled() -> None:
    """A close that waited for its writer inside suppress(CancelledError) went on as if nobody had stopped it (a
    timeout around the runtime's close could not interrupt it)."""
    writer = broadcast._Writer(asyncio.get_running_loop())
    await asyncio.sleep(0)  # the writer waits for events
    closing = asyncio.ensure_future(writer.aclose())
    await asyncio.sleep(0)  # the close has nothing to drain and waits for the writer to end
    closing.cancel()
    await asyncio.wait({closing})
    assert closing.cancelled()
    assert writer.task.done()


async def test_a_close_ends_the_writer() -> None:
    writer = broadcast._Writer(asyncio.get_running_loop())
    await writer.aclose()
    assert writer.task.cancelled()
