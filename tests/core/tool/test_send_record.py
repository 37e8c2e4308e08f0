"""`send` writes its task's watch record before the wait (issue 11 item 1): marked as sending, left alone by
the workers while the send lives, removed when the answer goes back, a plain watch when the wait runs out."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
from datetime import timedelta
from typing import Any

import httpx
import pytest

from a2aconsole.core import pending
from a2aconsole.core.clock import SystemClock
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.pending.store import STORE
from a2aconsole.core.remote.client import Remote
from a2aconsole.core.remote.http import new_http_client
from a2aconsole.core.watches.follower import Follower
from a2aconsole.core.watches.registry import WatchRegistry
from tests.support.js_agents import SdkAgent
from tests.support.locks import held_by_a_thread
from tests.support.toolkit import TARGET, entry, make_tool, write_agents
from tests.support.watching import SignalClock, WaitableDelivery, add_record, eventually, start_task


def sending(ws: Workspace) -> list:
    return [r for r in pending.read(ws).records if r.state == "sending"]


async def test_send_answered_in_its_wait_leaves_no_record_and_delivers_nothing(
    http, workspace: Workspace, sdk_agent: SdkAgent
) -> None:
    write_agents(workspace, entry("echo", sdk_agent))
    remote = Remote(http, call_timeout=10.0, card_timeout=5.0)
    delivery = WaitableDelivery({TARGET: workspace})
    registry = WatchRegistry(remote, ClientSettings(), delivery, SystemClock())
    tool = make_tool(http, workspace, watches=registry, wait_seconds=30)
    send = asyncio.ensure_future(tool.run("send", {"agent": "echo", "message": "hold n1"}, TARGET))
    try:
        await eventually(lambda: bool(sending(workspace)), timeout=20)
        (record,) = sending(workspace)
        assert record.target == TARGET and record.agent == "echo" and record.message == "hold n1"
        assert record.extra["sender"]["pid"] == os.getpid()
        await registry.rescan(workspace)  # a worker looking at the file meanwhile leaves the live send alone
        await registry.start([workspace])
        assert len(registry) == 0
        sdk_agent.release("n1")
        result = await send
    finally:
        await registry.stop()
    assert result["state"] == "completed" and result["taskId"] == record.task_id
    assert pending.read(workspace).records == []
    assert delivery.delivered == [] and delivery.attempts == 0


async def test_send_whose_wait_runs_out_turns_its_record_into_the_watch(
    http, workspace: Workspace, sdk_agent: SdkAgent
) -> None:
    write_agents(workspace, entry("echo", sdk_agent))
    clock = SignalClock()
    tool = make_tool(http, workspace, clock=clock, wait_seconds=5)
    send = asyncio.ensure_future(tool.run("send", {"agent": "echo", "message": "hold w1"}, TARGET))
    await eventually(lambda: bool(sending(workspace)), timeout=20)
    (before,) = sending(workspace)
    await clock.wait_for_sleepers(1)
    await clock.advance(5)
    result = await asyncio.wait_for(send, 10)
    sdk_agent.release("w1")
    assert result["state"] == "working" and result["taskId"] == before.task_id
    (after,) = pending.read(workspace).records
    assert after.watch_id == before.watch_id  # the same record, now a plain watch
    assert after.state in ("submitted", "working") and "sender" not in after.extra


async def test_orphaned_sending_record_is_adopted_and_a_live_one_waits_for_its_time(
    make_sdk_agent, workspace: Workspace
) -> None:
    """A sender on this host whose process is gone is dead at once; a live one is trusted until its time."""
    agent = make_sdk_agent(push=False)
    workspace.save_agents([{"name": "bot", "url": agent.url}], None)
    http = new_http_client()
    remote = Remote(http, call_timeout=10.0, card_timeout=5.0)
    clock = SignalClock()
    registry = WatchRegistry(remote, ClientSettings(), WaitableDelivery({"chat1": workspace}), clock)
    try:
        dead, live = [await start_task(remote, workspace, "bot", f"hold o{i}") for i in (1, 2)]
        gone = await _exited_pid()
        until_at = (clock.now() + timedelta(seconds=90)).isoformat()
        for task, pid in ((dead, gone), (live, os.getppid())):
            sender = {"host": socket.gethostname(), "pid": pid, "instance": "another", "until": until_at}
            await add_record(
                workspace, task, "bot", clock, source="subscribe", state="sending", extra={"sender": sender}
            )
        await registry.start([workspace])
        assert [w["taskId"] for w in registry.snapshot()] == [dead.id]
        by_task = {r.task_id: r for r in pending.read(workspace).records}
        assert "sender" not in by_task[dead.id].extra and by_task[dead.id].state != "sending"
        assert by_task[live.id].state == "sending"

        await clock.advance(91)  # the live sender's time ran out: the next rescan adopts its record
        await registry.rescan(workspace)
        assert sorted(w["taskId"] for w in registry.snapshot()) == sorted([dead.id, live.id])
    finally:
        agent.release("o1")
        agent.release("o2")
        await registry.stop()
        await http.aclose()


async def _exited_pid() -> int:
    proc = await asyncio.create_subprocess_exec("true")
    await proc.wait()
    return proc.pid


def _count_follows(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, bool]]:
    """Every run of a follower from now on: (which follower, begun by a send)."""
    runs: list[tuple[int, bool]] = []
    follow = Follower.follow

    def counted(self: Follower, conn: Any = None, **kw: Any) -> Any:
        runs.append((id(self), conn is not None))
        return follow(self, conn, **kw)

    monkeypatch.setattr(Follower, "follow", counted)
    return runs


def _tool_with_registry(
    http: httpx.AsyncClient, workspace: Workspace
) -> tuple[Any, WatchRegistry, SignalClock, WaitableDelivery]:
    """The tool with this process's watch registry (sharing its pool and a fake clock), as the console runs them,
    and the chat's delivery."""
    clock = SignalClock()
    delivery = WaitableDelivery({TARGET: workspace})
    remote = Remote(http, call_timeout=10.0, card_timeout=5.0)
    tool = make_tool(http, workspace, clock=clock)
    registry = WatchRegistry(remote, ClientSettings(), delivery, clock, pool=tool.pool)
    tool.tool.watches = registry
    return tool, registry, clock, delivery


async def test_send_follower_goes_on_as_the_watch(http, workspace: Workspace, make_sdk_agent, monkeypatch) -> None:
    """Issue 10: when the wait runs out, the same follower (same object, same run) goes on as the watch of this
    process's registry: no second follow, no second card fetch; the result reaches the chat once."""
    agent = make_sdk_agent(streaming=False, push=False)  # polled: every check is a GetTask
    write_agents(workspace, entry("bot", agent))
    runs = _count_follows(monkeypatch)
    tool, registry, clock, delivery = _tool_with_registry(http, workspace)
    try:
        send = asyncio.ensure_future(tool.run("send", {"agent": "bot", "message": "hold h1"}, TARGET))
        await clock.until(lambda sleeps: 5 in sleeps and 0.5 in sleeps)  # the wait, and the first poll's nap
        await clock.advance(5)
        result = await asyncio.wait_for(send, 10)
        assert result["state"] == "working" and len(registry) == 1
        await clock.until(lambda sleeps: 15.0 in sleeps)  # the watch's first poll nap, on the same follower
        agent.release("h1")
        await eventually(lambda: len(agent.finished) == 1)
        await clock.advance(15)
        [(target, text)] = await delivery.wait_for(1)
        await eventually(lambda: pending.read(workspace).records == [])  # settled once delivered
    finally:
        agent.release("h1")
        await registry.stop()
    assert target == TARGET and "released h1" in text
    assert [sent for _, sent in runs] == [True]  # one run of one follower: the send's
    assert sum(1 for _, path, _ in agent.requests if path == "/.well-known/agent-card.json") == 1


async def test_a_quick_task_ends_with_the_first_get_task_in_the_send_s_own_task(
    http, workspace: Workspace, sdk_agent: SdkAgent, monkeypatch
) -> None:
    """The send's first GetTask runs in the send's own task (`first_check`): a task that settled by then needs no
    run of its follower (nor a task of its own), and leaves no record when the send answers."""
    from a2aconsole.core.tool import tool as tool_module

    write_agents(workspace, entry("echo", sdk_agent))
    firsts: list[str] = []
    runs: list[bool] = []
    first_check, follow = tool_module.first_check, Follower.follow

    async def first(conn: Any, task_id: str, *args: Any) -> Any:
        firsts.append(task_id)
        return await first_check(conn, task_id, *args)

    def counted(self: Follower, conn: Any = None, **kw: Any) -> Any:
        runs.append(conn is not None)
        return follow(self, conn, **kw)

    monkeypatch.setattr(tool_module, "first_check", first)
    monkeypatch.setattr(Follower, "follow", counted)
    tool = make_tool(http, workspace, wait_seconds=30)
    for i in range(5):  # a fast agent may still say "submitted" at the first check: then its task goes on
        result = await tool.run("send", {"agent": "echo", "message": f"hello {i}"}, TARGET)
        assert result["state"] == "completed" and pending.read(workspace).records == []
    assert len(firsts) == 5 and len(runs) < 5 and all(runs)  # a follower runs only for a task that went on


async def test_a_wait_that_runs_out_during_the_first_get_task_hands_the_follower_over(
    http, workspace: Workspace, make_agent, monkeypatch
) -> None:
    """The first GetTask is bounded by the wait on the injected clock (`clock.timeout`): when the wait runs out
    with it still unanswered, the call is cut short, the follower goes on in its own task as the watch of this
    process's registry (one follower, no second card fetch), and the result reaches the chat."""
    agent = make_agent(streaming=False, push=False)
    agent.hold_methods = {"GetTask"}  # every GetTask waits until the test releases "calls"
    write_agents(workspace, entry("bot", agent))
    runs = _count_follows(monkeypatch)
    tool, registry, clock, delivery = _tool_with_registry(http, workspace)
    try:
        send = asyncio.ensure_future(tool.run("send", {"agent": "bot", "message": "hello there"}, TARGET))
        await eventually(lambda: agent.in_flight["calls"] == 1 and agent.methods[-1] == "GetTask")
        await clock.until(lambda sleeps: 5 in sleeps)  # the wait's time, on the clock
        await clock.advance(5)
        result = await asyncio.wait_for(send, 10)
        assert result["state"] == "working" and len(registry) == 1
        [(record)] = pending.read(workspace).records
        assert record.state != "sending"  # a plain watch now
        agent.release("calls")  # the follower's own GetTask, asked again at once, is answered: the task is done
        [(target, text)] = await delivery.wait_for(1)
        await eventually(lambda: pending.read(workspace).records == [])
    finally:
        agent.release("calls")
        await registry.stop()
    assert target == TARGET and "echo: hello there" in text
    assert [sent for _, sent in runs] == [True]  # the one run, begun by the send, went on as the watch
    assert sum(1 for _, path, _ in agent.requests if path == "/.well-known/agent-card.json") == 1


async def test_the_record_is_written_before_the_first_get_task_and_gone_when_the_send_answers(
    http, workspace: Workspace, make_agent
) -> None:
    """The record is in pending.json as soon as the reply names the task, before the first GetTask goes out (a
    process dying from then on leaves a watch), and removed when the send answers with the result: one journal
    line each way."""
    agent = make_agent(streaming=False, push=False)
    agent.hold_methods = {"GetTask"}  # the first GetTask waits until the task is done and the test lets it go
    write_agents(workspace, entry("bot", agent))
    tool = make_tool(http, workspace, wait_seconds=30)
    send = asyncio.ensure_future(tool.run("send", {"agent": "bot", "message": "hold q1"}, TARGET))
    try:
        await eventually(lambda: agent.in_flight["calls"] == 1 and agent.methods[-1] == "GetTask")
        [record] = pending.read(workspace).records
        assert record.state == "sending" and record.agent == "bot" and record.task_id
        agent.release("q1")
        await eventually(lambda: len(agent.finished) == 1, what="the agent to finish")
        agent.release("calls")
        result = await asyncio.wait_for(send, 10)
    finally:
        agent.release("q1")
        agent.release("calls")
    assert result["state"] == "completed" and result["text"] == "released q1"
    assert agent.methods.count("GetTask") == 1  # the first GetTask ended the send
    assert pending.read(workspace).records == []
    assert pending.journal_path(workspace).read_bytes().count(b"\n") == 2  # the record's add and remove lines


async def test_a_caller_that_gives_up_during_the_first_get_task_leaves_the_watch(
    http, workspace: Workspace, make_agent, monkeypatch
) -> None:
    """The caller gives up (cancelled) while the first GetTask is out: the sending record becomes a plain watch
    that this process's registry takes over with the follower, and the result reaches the chat."""
    agent = make_agent(streaming=False, push=False)
    agent.hold_methods = {"GetTask"}
    write_agents(workspace, entry("bot", agent))
    runs = _count_follows(monkeypatch)
    tool, registry, clock, delivery = _tool_with_registry(http, workspace)
    try:
        send = asyncio.ensure_future(tool.run("send", {"agent": "bot", "message": "hold g1"}, TARGET))
        await eventually(lambda: agent.in_flight["calls"] == 1 and agent.methods[-1] == "GetTask")
        [sending_record] = pending.read(workspace).records
        assert sending_record.state == "sending"
        send.cancel()
        with pytest.raises(asyncio.CancelledError):
            await send
        [record] = pending.read(workspace).records
        assert record.state != "sending" and len(registry) == 1
        agent.release("g1")
        await eventually(lambda: len(agent.finished) == 1, what="the agent to finish")
        agent.release("calls")
        for step in (15.0, 30.0, 60.0):  # a check that found the task still working naps on the clock
            with contextlib.suppress(TimeoutError):
                await eventually(lambda: len(delivery.delivered) == 1, timeout=5, what="the result")
                break
            await clock.advance(step)
        [(target, text)] = await delivery.wait_for(1)
    finally:
        agent.release("g1")
        agent.release("calls")
        await registry.stop()
    assert target == TARGET and "released g1" in text
    assert [sent for _, sent in runs] == [True]  # the send's follower, started as it gave up, went on as the watch


@pytest.mark.parametrize("current", [True, False], ids=["files-as-left", "files-moved"])
async def test_a_send_s_record_waits_for_the_lock_another_holder_has(workspace: Workspace, current: bool) -> None:
    """A lock another holder has (another process, or a thread of this one) is waited for, off the loop, and the
    record is written once it is given back, beside what the files hold."""
    from a2aconsole.core.pending.records import WatchRecord
    from a2aconsole.core.tool.send import write_sending

    async with pending.transaction(workspace, durable=False) as tx:
        tx.add(WatchRecord("w0", "other-chat", "echo", "t0"))
    if not current:
        STORE.forget(workspace)  # as after another process's write: the files must be read again
    now = SystemClock().now()
    async with held_by_a_thread(workspace.lock) as release:
        record = WatchRecord("w1", TARGET, "echo", "t1", "c1", started_at="2026-12-03T00:00:00Z")
        writing = asyncio.ensure_future(write_sending(workspace, record, now, 30))
        for _ in range(5):
            await asyncio.sleep(0)
        assert not writing.done() and [r.watch_id for r in pending.read(workspace).records] == ["w0"]
        release()
        assert await writing == (record, None)
    assert [(r.watch_id, r.state) for r in pending.read(workspace).records] == [("w0", ""), ("w1", "sending")]
