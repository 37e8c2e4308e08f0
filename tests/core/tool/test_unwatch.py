"""Stop watching (`unwatch`): the watch ends "stopped", says who stopped it, nothing more is delivered, the task goes
on at the agent and a push watch's config is removed there; on both SDKs' agents, over the real watch registry."""

from __future__ import annotations

from a2aconsole.core import pending
from a2aconsole.core.chat import ChatTarget
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.remote.client import Remote
from a2aconsole.core.tool.tool import WATCHED_NOTE, A2ATool
from a2aconsole.core.tool.unwatch import STOPPED_NOTE
from tests.support.watching import add_record, eventually, push_watched, settled_at_agent, start_task


def _use(ws: Workspace, url: str) -> None:
    ws.save_agents([{"name": "bot", "url": url}], None)


async def test_unwatch_ends_the_watch_stopped_and_delivers_nothing_more(
    make_sdk_agent, workspace: Workspace, remote: Remote, clock, registry_for
) -> None:
    agent = make_sdk_agent(streaming=False, push=False)
    _use(workspace, agent.url)
    reg, delivery, sink = registry_for(workspace)
    task = await start_task(remote, workspace, "bot", "hold uw1")
    rec = await add_record(workspace, task, "bot", clock)
    await reg.arm(workspace, rec)
    await clock.until(lambda s: s == [15.0])
    tool = A2ATool(remote, ClientSettings(), reg, clock=clock)
    chat = ChatTarget("chat1", workspace)

    status = await tool.run("status", {"agent": "bot", "taskId": task.id}, chat)
    assert status["state"] == "working" and status["note"] == WATCHED_NOTE, status

    out = await tool.run("unwatch", {"agent": "bot", "taskId": task.id}, chat, by="owner")
    assert out == {
        "agent": "bot",
        "taskId": task.id,
        "contextId": task.context_id,
        "watch": "stopped",
        "note": STOPPED_NOTE,
    }
    assert pending.read(workspace).records == [] and rec.watch_id not in reg
    [ended] = [e for e in sink.events if e.kind == "watch.ended"]
    assert ended.data == {"reason": "stopped", "watchId": rec.watch_id, "by": "owner"}
    assert ended.at == clock.now()

    agent.release("uw1")  # the task goes on at the agent, and finishes there
    entry = workspace.read_agents().get("bot")
    assert entry is not None
    await settled_at_agent(await remote.connect(entry), task.id, "completed")
    await clock.advance(600)
    assert delivery.delivered == []  # nothing more comes to the chat
    after = await tool.run("status", {"agent": "bot", "taskId": task.id}, chat)
    assert after["state"] == "completed" and "watch" not in after and "note" not in after, after

    again = await tool.run("unwatch", {"agent": "bot", "taskId": task.id}, chat, by="owner")
    assert again["error"].startswith(f'this chat does not watch task {task.id} of "bot"'), again


async def test_unwatch_of_a_push_watch_removes_its_config_at_the_agent(
    make_sdk_agent, workspace: Workspace, remote: Remote, clock, registry_for
) -> None:
    agent = make_sdk_agent(streaming=False)
    async with push_watched(agent, workspace, remote, clock, registry_for, "hold uw2") as (reg, delivery, sink, task):
        tool = A2ATool(remote, ClientSettings(), reg, clock=clock)

        out = await tool.run("unwatch", {"agent": "bot", "taskId": task.id}, ChatTarget("chat1", workspace), by="api")
        assert out["watch"] == "stopped", out
        assert "DeleteTaskPushNotificationConfig" in agent.methods
        assert [e.data.get("by") for e in sink.events if e.kind == "watch.ended"] == ["api"]

        agent.release("uw2")
        await eventually(lambda: task.id in agent.finished, what="the agent to finish")
        await clock.advance(600)
        assert delivery.delivered == [] and len(reg) == 0
