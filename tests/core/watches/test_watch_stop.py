"""Stopping a watch (cancel, a settled status) does the same in the worker's registry and in the file-only control
of the CLI and scale-out web processes: every active watch of that chat on that task goes, duplicates included;
a kept, undelivered result of that task stays and is delivered as usual."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest

from a2aconsole.core import pending
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.events import WATCH_ENDED
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.remote.client import Remote
from a2aconsole.core.watches.control import PendingFileWatches
from a2aconsole.core.watches.follower import STREAM_CAP
from a2aconsole.core.watches.registry import WatchRegistry
from tests.support.watching import SignalClock, WaitableDelivery, WaitableSink, add_record, start_task


@pytest.fixture
async def registry(workspace: Workspace, remote: Remote) -> AsyncIterator[WatchRegistry]:
    sink = WaitableSink()
    reg = WatchRegistry(remote, ClientSettings(), WaitableDelivery({"chat1": workspace}), SignalClock(), sink)
    yield reg
    await reg.stop()


@pytest.mark.parametrize("control", ["registry", "files"])
async def test_stop_watching_takes_duplicates_and_keeps_kept_results(
    control: str, make_agent, workspace: Workspace, remote: Remote, registry: WatchRegistry
) -> None:
    agent = make_agent(streaming=False, push=False)
    workspace.save_agents([{"name": "bot", "url": agent.url}], None)
    clock = registry.clock
    task = await start_task(remote, workspace, "bot", "hold stop")
    first = await add_record(workspace, task, "bot", clock)
    if control == "registry":
        await registry.arm(workspace, first)
        assert first.watch_id in registry
    # a second watch of the same chat on the same task, written (by a CLI) before any worker saw the first
    duplicate = await add_record(workspace, task, "bot", clock)
    kept = await add_record(workspace, task, "bot", clock, undelivered="[A2A result] kept, not delivered yet")
    other_chat = await add_record(workspace, task, "bot", clock, target="chat2")

    stopper = registry if control == "registry" else PendingFileWatches()
    assert await stopper.stop_watching(workspace, "chat1", "bot", task.id) == first

    left = pending.read(workspace).records
    assert [r.watch_id for r in left] == [kept.watch_id, other_chat.watch_id]
    assert left[0].undelivered == "[A2A result] kept, not delivered yet"
    assert await stopper.stop_watching(workspace, "chat1", "bot", task.id) is None  # nothing more to stop
    if control == "registry":
        assert first.watch_id not in registry and len(registry) == 0
        sink = registry.events
        assert isinstance(sink, WaitableSink)
        ended = [e.data["watchId"] for e in sink.events if e.kind == WATCH_ENDED]
        assert ended == [first.watch_id, duplicate.watch_id]


class StreamEndClock(SignalClock):
    """Calls `on_stream_end` once, as a stream's cap timer winds down (the stream ended): the moment the watch
    waits for that timer."""

    def __init__(self) -> None:
        super().__init__()
        self.on_stream_end: Callable[[], None] | None = None

    async def sleep(self, seconds: float) -> None:
        try:
            await super().sleep(seconds)
        except asyncio.CancelledError:
            hook, self.on_stream_end = self.on_stream_end, None
            if hook is not None and seconds == STREAM_CAP:
                hook()
            raise


def cancel_watch_runs() -> None:
    """What a stop does to each watch (`WatchRegistry.stop`, a cancel's `stop_watching`): cancel its run."""
    for task in asyncio.all_tasks():
        if task.get_coro().__qualname__ == "WatchRegistry._run":
            task.cancel()


async def test_a_stop_as_a_stream_ends_stops_the_watch(make_agent, workspace: Workspace, remote: Remote) -> None:
    """A stop that came as the watch's stream ended, while it waited for the stream's timer to wind down, was
    swallowed there: the watch went on to its retry nap, and the registry's stop waited on it for ever."""
    agent = make_agent(push=False, drop_streams=True)  # its streams end at once
    workspace.save_agents([{"name": "bot", "url": agent.url}], None)
    clock = StreamEndClock()
    ended = asyncio.Event()
    clock.on_stream_end = lambda: (cancel_watch_runs(), ended.set())
    reg = WatchRegistry(remote, ClientSettings(), WaitableDelivery({"chat1": workspace}), clock, WaitableSink())
    task = await start_task(remote, workspace, "bot", "hold end")
    await reg.arm(workspace, await add_record(workspace, task, "bot", clock, source="subscribe"))
    await asyncio.wait_for(ended.wait(), 10)
    stopping = asyncio.ensure_future(reg.stop())
    done, _ = await asyncio.wait({stopping}, timeout=10)  # not wait_for: a cancelled stop would pass
    assert clock.sleeps == [STREAM_CAP], "the watch took no stop: it began its retry nap"
    assert stopping in done
