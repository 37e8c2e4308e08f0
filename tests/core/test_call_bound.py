"""The bound of every remote call (`Connection._call`, a plain context manager) ends each race between its
deadline, the call and a cancel from elsewhere as `asyncio.timeout` does: each case runs under both and their
endings are compared. The deadline is the caller's own bound (`within`, raised as TimeoutError as
asyncio.timeout raises it); the call timeout's end is the agent's timeout. Deadlines of 0 s are due on the
loop's next turn: no test sleeps."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from a2a.types import AgentCard

from a2aconsole.core.agents import AgentEntry
from a2aconsole.core.client import Connection, Remote, RemoteError, card_summary
from a2aconsole.core.metrics import REGISTRY

KINDS = ("asyncio.timeout", "call bound")


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def _conn(http: httpx.AsyncClient, call_timeout: float = 60.0) -> Connection:
    entry = AgentEntry(name="boundbot", url="http://127.0.0.1:9/")
    return Connection(Remote(http, call_timeout=call_timeout), entry, card_summary(AgentCard()))


async def _under(conn: Connection, kind: str, awaited: asyncio.Future[Any]) -> tuple[str, Any, int]:
    """The block bounded to 0 s: how it ended (its value or exception's name), and the task's pending cancels
    right after it."""
    task = asyncio.current_task()
    assert task is not None
    try:
        if kind == "asyncio.timeout":
            async with asyncio.timeout(0):
                value = await awaited
        else:
            with conn._call("status", within=0):
                value = await awaited
    except TimeoutError as e:
        return type(e).__name__, None, task.cancelling()
    return "value", value, task.cancelling()


async def _ending(task: asyncio.Task[Any]) -> Any:
    """The task's ending: its result, or the name of what it raised."""
    [outcome] = await asyncio.gather(task, return_exceptions=True)
    return type(outcome).__name__ if isinstance(outcome, BaseException) else outcome


async def test_a_call_past_its_deadline_ends_in_timeout_and_leaves_no_cancel_pending(http: httpx.AsyncClient) -> None:
    conn = _conn(http)
    for kind in KINDS:
        never: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        assert await asyncio.ensure_future(_under(conn, kind, never)) == ("TimeoutError", None, 0), kind
        assert never.cancelled(), kind


async def test_a_call_in_time_ends_plainly_and_nothing_is_cancelled_after(http: httpx.AsyncClient) -> None:
    conn = _conn(http)
    for kind in KINDS:
        answered: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        answered.set_result("the task")

        async def body(kind: str = kind, answered: asyncio.Future[str] = answered) -> tuple[Any, ...]:
            ended = await _under(conn, kind, answered)
            for _ in range(3):  # the deadline's time passes while the task goes on
                await asyncio.sleep(0)
            return ended

        assert await asyncio.ensure_future(body()) == ("value", "the task", 0), kind


async def _race(
    conn: Connection, steps: int, act: Callable[[asyncio.Task[Any], asyncio.Future[str]], None]
) -> list[Any]:
    """Under each bound in turn (deadline 0 s, due meanwhile): `act` on the task and the call it awaits `steps` loop
    turns after starting it; each one's ending."""
    endings = []
    for kind in KINDS:
        awaited: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        task = asyncio.ensure_future(_under(conn, kind, awaited))
        for _ in range(steps):
            await asyncio.sleep(0)
        act(task, awaited)
        endings.append(await _ending(task))
    return endings


def _answer(task: asyncio.Task[Any], awaited: asyncio.Future[str]) -> None:
    if not awaited.done():
        awaited.set_result("the task")


@pytest.mark.parametrize("steps", range(4))
async def test_a_cancel_from_elsewhere_as_the_deadline_comes_ends_as_with_asyncio_timeout(
    http: httpx.AsyncClient, steps: int
) -> None:
    """The caller cancels the task `steps` loop turns after starting it, the deadline due meanwhile."""
    endings = await _race(_conn(http), steps, lambda task, _: task.cancel())
    assert endings[0] == endings[1], endings
    assert endings[0] in ("CancelledError", ("TimeoutError", None, 0)), endings


@pytest.mark.parametrize("steps", range(4))
async def test_an_answer_as_the_deadline_comes_ends_as_with_asyncio_timeout(
    http: httpx.AsyncClient, steps: int
) -> None:
    """The awaited call is answered `steps` loop turns after the block began, the deadline due meanwhile."""
    endings = await _race(_conn(http), steps, _answer)
    assert endings[0] == endings[1], endings


async def test_the_call_timeout_running_out_is_the_agent_s_timeout_timed_and_counted(http: httpx.AsyncClient) -> None:
    """The call's own timeout (no shorter bound of the caller's) ends in RemoteError "timeout", timed and counted
    as the agent's failure; the caller's bound running out is neither (the agent did not fail)."""
    conn = _conn(http, call_timeout=0)
    timed = sample("a2aconsole_remote_call_seconds_count", agent="boundbot", method="status")
    failed = sample("a2aconsole_remote_call_failures_total", agent="boundbot", method="status", kind="timeout")
    never: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    with pytest.raises(RemoteError) as caught, conn._call("status"):
        await never
    assert caught.value.kind == "timeout" and "boundbot" in str(caught.value)
    assert sample("a2aconsole_remote_call_seconds_count", agent="boundbot", method="status") == timed + 1
    assert sample("a2aconsole_remote_call_failures_total", agent="boundbot", method="status", kind="timeout") == (
        failed + 1
    )
    with pytest.raises(TimeoutError, match="the caller's 0 s ran out"), _conn(http)._call("status", within=0):
        await asyncio.get_running_loop().create_future()
    assert sample("a2aconsole_remote_call_seconds_count", agent="boundbot", method="status") == timed + 1
