"""Watches and secrets: what a watch delivers is scrubbed of the keys an agent echoes, and a watch that
ends for any reason (cancel, a settled status, its result, timeout, agent removed) takes its push config
off the agent, so the agent stops pushing to it. Real loopback agents, a fake clock."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from a2aconsole.core import pending
from a2aconsole.core.chat import ChatTarget
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.remote.client import Remote
from a2aconsole.core.scrubber import MASK
from a2aconsole.core.tool.tool import A2ATool
from a2aconsole.core.watches.control import PendingFileWatches
from a2aconsole.core.watches.registry import WatchRegistry
from tests.support.watching import (
    PushReceiver,
    SignalClock,
    add_record,
    eventually,
    start_task,
)

KEY = "watch-agent-key-0123456789abcdef"


@pytest.fixture
async def pushed(
    make_agent, workspace: Workspace, remote: Remote, clock: SignalClock, registry_for
) -> AsyncIterator[Callable[..., Any]]:
    """Start a push watch on a held task: returns (agent, registry, delivery, sink, task, record), once the
    agent holds the watch's push config."""
    holder: list[WatchRegistry] = []
    async with PushReceiver(lambda *a: holder[0].on_push(*a)) as receiver:

        async def start(gate: str, **settings: Any) -> tuple[Any, ...]:
            agent = make_agent(streaming=False, key=KEY)
            workspace.save_agents([{"name": "bot", "url": agent.url, "key": KEY}], None)
            reg, delivery, sink = registry_for(workspace, push_base_url=receiver.url, **settings)
            holder.append(reg)
            task = await start_task(remote, workspace, "bot", f"hold {gate}")
            rec = await add_record(workspace, task, "bot", clock)
            await reg.arm(workspace, rec)
            await sink.until(lambda: "working" in sink.states(), what="the first check")
            [config] = await agent.push_configs(task.id)
            assert config["id"] == rec.watch_id and config["url"].endswith(f"/a2a/push/{rec.watch_id}")
            return agent, reg, delivery, sink, task, rec

        yield start


async def test_a_key_echoed_to_a_watch_is_masked_in_its_delivery_and_events(
    make_agent, workspace, remote, clock, registry_for
) -> None:
    agent = make_agent(streaming=False, push=False, key=KEY)
    workspace.save_agents([{"name": "bot", "url": agent.url, "key": KEY}], None)
    reg, delivery, sink = registry_for(workspace)
    task = await start_task(remote, workspace, "bot", "leak hold g")
    await reg.arm(workspace, await add_record(workspace, task, "bot", clock))
    await clock.until(lambda s: s == [15.0])
    await clock.advance(15)  # checked while it works: its status message ("holding (the key was ...)") is progress
    await sink.until(lambda: "progress" in sink.kinds(), what="the status message")
    agent.release("g")
    await eventually(lambda: task.id in agent.finished, what="the agent to finish")
    await clock.until(lambda s: s[-1:] == [30.0])
    await clock.advance(30)
    [(_, text)] = await delivery.wait_for(1)
    assert agent.received[0].headers["x-api-key"] == KEY
    assert f"the key was {MASK}" in text and KEY not in text
    events = json.dumps([e.to_json() for e in sink.events])
    assert KEY not in events and f"the key was {MASK}" in events
    assert {"result", "delivered", "progress"} <= set(
        sink.kinds()
    )  # its status message too: "holding (the key was ***)"


async def test_a_key_in_a_watch_error_is_masked_in_the_watch_table(
    make_agent, workspace, remote, clock, registry_for
) -> None:
    agent = make_agent(streaming=False, push=False, key=KEY)
    workspace.save_agents([{"name": "bot", "url": agent.url, "key": KEY}], None)
    reg, _, _ = registry_for(workspace)
    task = await start_task(remote, workspace, "bot", "hold e")
    rec = await add_record(workspace, task, "bot", clock)
    await reg.arm(workspace, rec)
    await clock.until(lambda s: s == [15.0])
    reg._watches[rec.watch_id].error = f'agent "bot" answered an error to status: InvalidParams: bad key {KEY}'
    [row] = reg.snapshot()
    assert row["lastError"].endswith(f"bad key {MASK}") and KEY not in json.dumps(row)


async def test_cancel_takes_the_push_config_off_the_agent(pushed, workspace, remote, clock) -> None:
    agent, reg, delivery, _, task, rec = await pushed("c")
    tool = A2ATool(remote, ClientSettings(), reg, clock=clock)
    out = await tool.run("cancel", {"agent": "bot", "taskId": task.id}, ChatTarget("chat1", workspace))
    assert out["state"] == "canceled" and out["note"] == "canceled; the watch of this task ended"
    assert await agent.push_configs(task.id) == []
    assert "DeleteTaskPushNotificationConfig" in agent.methods and delivery.delivered == []


async def test_a_failed_cancel_keeps_the_push_config(pushed, workspace, remote, clock) -> None:
    agent, reg, delivery, _, task, rec = await pushed("f")
    workspace.save_agents([{"name": "bot", "url": "http://127.0.0.1:9/", "key": KEY}], None)
    tool = A2ATool(remote, ClientSettings(), reg, clock=clock)
    out = await tool.run("cancel", {"agent": "bot", "taskId": task.id}, ChatTarget("chat1", workspace))
    assert out["error"].endswith("Could not reach the agent; the watch goes on")
    assert [c["id"] for c in await agent.push_configs(task.id)] == [rec.watch_id]


async def test_a_finished_watch_takes_its_push_config_off_the_agent(pushed, workspace) -> None:
    agent, _, delivery, _, task, _ = await pushed("done")
    agent.release("done")
    [(_, text)] = await delivery.wait_for(1)
    assert "released done" in text

    async def gone() -> bool:
        return await agent.push_configs(task.id) == []

    await eventually(gone, what="the push config removal")


async def test_a_timed_out_watch_takes_its_push_config_off_the_agent(pushed, workspace, clock) -> None:
    agent, _, delivery, sink, task, _ = await pushed("late", watch_timeout=600.0)
    await clock.until(lambda s: s == [600.0])
    await clock.advance(600)
    [(_, text)] = await delivery.wait_for(1)
    assert "gave no result" in text

    async def gone() -> bool:
        return await agent.push_configs(task.id) == []

    await eventually(gone, what="the push config removal")


async def test_a_removed_agent_is_told_to_drop_the_push_config(pushed, workspace, clock) -> None:
    agent, reg, delivery, _, task, rec = await pushed("rm")
    workspace.save_agents([], None)
    reg.wake(rec.watch_id)
    [(_, text)] = await delivery.wait_for(1)
    assert 'agent "bot" was removed from agents.json' in text

    async def gone() -> bool:
        return await agent.push_configs(task.id) == []

    await eventually(gone, what="the push config removal")


async def test_a_settled_status_takes_the_push_config_off_the_agent(
    make_agent, workspace: Workspace, remote: Remote, clock
) -> None:
    """Without a registry (a web process, the CLI): status finds the task settled, ends the watch in the file
    and removes the config the worker made."""
    agent = make_agent(streaming=False)
    workspace.save_agents([{"name": "bot", "url": agent.url}], None)
    task = await start_task(remote, workspace, "bot", "hold s")
    rec = await add_record(workspace, task, "bot", clock, source="push", push_token="t" * 43)
    conn = await remote.connect(workspace.read_agents().get("bot"))  # type: ignore[arg-type]
    await conn.create_push(task.id, f"http://127.0.0.1:9/a2a/push/{rec.watch_id}", "t" * 43, rec.watch_id)
    assert len(await agent.push_configs(task.id)) == 1
    agent.release("s")
    await eventually(lambda: task.id in agent.finished, what="the agent to finish")
    tool = A2ATool(remote, ClientSettings(), PendingFileWatches(), clock=clock)
    out = await tool.run("status", {"agent": "bot", "taskId": task.id}, ChatTarget("chat1", workspace))
    assert out["state"] == "completed" and pending.read(workspace).records == []
    assert await agent.push_configs(task.id) == []
