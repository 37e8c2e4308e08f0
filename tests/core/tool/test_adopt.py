"""Watch a task the console did not send (the console's `watch`, for the Tasks at the agent view): a running task
gets a watch like a send's, written to pending.json first, and its result comes to the chat; a chat watches a task
once; a settled task's outcome is the answer, with nothing watched. On both SDKs' agents, over the real registry."""

from __future__ import annotations

from a2aconsole.core import pending
from a2aconsole.core.chat import ChatTarget
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.remote.client import Remote
from a2aconsole.core.tool.adopt import WATCHING_NOTE
from a2aconsole.core.tool.tool import A2ATool
from tests.support.watching import settled_at_agent, start_task


async def test_a_task_started_elsewhere_is_watched_until_its_result_comes(
    make_sdk_agent, workspace: Workspace, remote: Remote, clock, registry_for
) -> None:
    agent = make_sdk_agent(streaming=False, push=False)
    workspace.save_agents([{"name": "bot", "url": agent.url}], None)
    reg, delivery, sink = registry_for(workspace)
    await reg.start([workspace])
    task = await start_task(remote, workspace, "bot", "hold ad1")  # another client of the agent started it
    tool = A2ATool(remote, ClientSettings(), reg, clock=clock)
    chat = ChatTarget("chat1", workspace)

    out = await tool.run("watch", {"agent": "bot", "taskId": task.id}, chat)
    assert (out["state"], out["watch"], out["note"]) == ("working", "armed", WATCHING_NOTE), out
    [rec] = pending.read(workspace).records
    assert (rec.target, rec.agent, rec.task_id, rec.source) == ("chat1", "bot", task.id, "poll")
    assert rec.watch_id in reg
    assert "watch.armed" in [e.kind for e in sink.events if e.task_id == task.id]  # in the history: known now

    again = await tool.run("watch", {"agent": "bot", "taskId": task.id}, chat)
    assert again["watch"] == "already" and len(pending.read(workspace).records) == 1, again

    await clock.until(lambda s: 15.0 in s)
    agent.release("ad1")
    entry = workspace.read_agents().get("bot")
    assert entry is not None
    await settled_at_agent(await remote.connect(entry), task.id, "completed")
    await clock.advance(15)
    [(target, text)] = await delivery.wait_for(1)
    assert target == "chat1" and "hold ad1" not in text and pending.read(workspace).records == []


async def test_a_settled_task_gives_its_result_and_no_watch(
    sdk_agent, workspace: Workspace, remote: Remote, clock, registry_for
) -> None:
    workspace.save_agents([{"name": "bot", "url": sdk_agent.url}], None)
    reg, _, _ = registry_for(workspace)
    task = await start_task(remote, workspace, "bot", "hello adopted")
    entry = workspace.read_agents().get("bot")
    assert entry is not None
    await settled_at_agent(await remote.connect(entry), task.id, "completed")
    tool = A2ATool(remote, ClientSettings(), reg, clock=clock)

    out = await tool.run("watch", {"agent": "bot", "taskId": task.id}, ChatTarget("chat1", workspace))
    assert out["state"] == "completed" and "echo: hello adopted" in str(out) and "watch" not in out, out
    assert pending.read(workspace).records == []
