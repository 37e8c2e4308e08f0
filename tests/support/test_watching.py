"""The tests' one bounded wait (`eventually`) and one event sink (`WaitableSink`): a state that never comes fails
in words naming what was awaited and what was last seen; a state that comes is seen at once."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from a2aconsole.core.events import Event, MemorySink
from tests.support.watching import Signal, SignalClock, WaitableSink, eventually


async def test_a_state_that_never_comes_names_what_was_awaited_and_the_last_seen() -> None:
    finished: list[str] = []
    with pytest.raises(TimeoutError, match=r"^timed out waiting for the agent to finish \(0.05 s\); last seen: \[\]$"):
        await eventually(lambda: len(finished) == 1, what="the agent to finish", timeout=0.05, seen=lambda: finished)
    with pytest.raises(TimeoutError, match=r"^timed out waiting for len\(finished\) == 1 \(0.05 s\)$"):
        await eventually(lambda: len(finished) == 1, timeout=0.05)  # no `what`: the check's own text


async def test_an_async_check_is_awaited_and_bounded_by_the_same_deadline() -> None:
    calls: list[int] = []

    async def answered() -> list[int]:
        calls.append(1)
        return calls if len(calls) == 3 else []

    assert await eventually(answered, what="three calls") == [1, 1, 1]

    async def hangs() -> bool:
        await asyncio.Event().wait()
        return True

    with pytest.raises(TimeoutError, match=r"^timed out waiting for hangs \(0.05 s\)$"):
        await eventually(hangs, timeout=0.05)


async def test_a_timeout_inside_the_check_is_not_taken_for_the_wait_running_out() -> None:
    async def fails() -> bool:
        raise TimeoutError("the check's own")

    with pytest.raises(TimeoutError, match="the check's own"):
        await eventually(fails, timeout=5)


async def test_a_signal_wakes_the_wait_without_polling() -> None:
    signal, box = Signal(), []

    async def later() -> None:
        await asyncio.sleep(0)
        box.append("done")
        signal.poke()

    task = asyncio.ensure_future(later())
    assert await eventually(lambda: box, what="the box", timeout=5, signal=signal) == ["done"]
    await task


async def test_the_sink_forwards_to_the_real_sink_first_and_waits_on_kinds() -> None:
    inner = MemorySink()
    sink = WaitableSink(inner)
    waiting = asyncio.ensure_future(sink.until_kind("delivered", 2))
    for kind in ("state", "delivered", "delivered"):
        await sink.emit(Event(kind, "ws", "bot", "t-1", datetime.now(UTC)))
    await asyncio.wait_for(waiting, 5)
    assert inner.kinds() == sink.kinds() == ["state", "delivered", "delivered"]
    with pytest.raises(TimeoutError, match=r"3 undelivered event\(s\) \(0.05 s\); last seen: \['state', 'del"):
        await sink.until_kind("undelivered", 3, timeout=0.05)


async def test_the_clock_says_which_sleeps_it_waited_for_and_had() -> None:
    clock = SignalClock()
    sleeper = asyncio.ensure_future(clock.sleep(15.0))
    await clock.until(lambda s: s == [15.0])
    with pytest.raises(TimeoutError, match=r"sleeps where s == \[30.0\] \(0.05 s\); last seen: \[15.0\]"):
        await clock.until(lambda s: s == [30.0], timeout=0.05)
    await clock.advance(15)
    await sleeper
