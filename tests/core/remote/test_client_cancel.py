"""A remote call that finishes just as its caller is cancelled must still cancel the caller.

`asyncio.wait_for` on Python 3.11 returns the call's result instead (the cancellation is lost): a watch
stopped at that moment went on to its next sleep, and `WatchRegistry.stop()` waited for it forever. Seen
against the JS SDK's agents (tests/core/watches/test_watches.py, restore, about one run in three); here the same
moment is made on purpose.
"""

from __future__ import annotations

import asyncio

import httpx
import pytest
from a2a.types import AgentCard

from a2aconsole.core.files.agents import AgentEntry
from a2aconsole.core.remote.client import Connection, Remote
from a2aconsole.core.remote.convert import card_summary


@pytest.mark.parametrize("steps", range(4))
async def test_a_cancel_the_caller_accepted_is_never_lost(http: httpx.AsyncClient, steps: int) -> None:
    """The call's answer lands, then `steps` loop turns pass, then the caller is cancelled: whenever it
    accepts the cancel (it had not returned yet), it must end cancelled, not with the answer."""
    conn = Connection(
        Remote(http, call_timeout=5.0), AgentEntry(name="bot", url="http://127.0.0.1:9/"), card_summary(AgentCard())
    )
    answer: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    async def call() -> str:
        async with conn._call("status"):
            return await answer

    caller = asyncio.ensure_future(call())
    for _ in range(3):  # the caller is now waiting for the call
        await asyncio.sleep(0)
    answer.set_result("the task")
    for _ in range(steps):
        await asyncio.sleep(0)
    accepted = caller.cancel()
    [outcome] = await asyncio.gather(caller, return_exceptions=True)
    assert isinstance(outcome, asyncio.CancelledError) == accepted, (accepted, outcome)
    assert outcome == "the task" or accepted
