"""Cancel says what happened, and the watch is kept until it is confirmed: canceled, only requested (the watch goes
on and delivers what the task settles as, once), refused (the task's outcome), on both SDKs' agents, through the
tool over the real watch registry. (Unreachable: tests/core/watches/test_watches.py, test_tool_status_cancel.py.)"""

from __future__ import annotations

import pytest

from a2aconsole.core import pending
from a2aconsole.core.chat import ChatTarget
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.remote.client import Remote
from a2aconsole.core.tool.cancel import CANCEL_REQUESTED
from a2aconsole.core.tool.tool import A2ATool
from tests.support.watching import add_record, eventually, settled_at_agent, start_task


async def _watched(make_sdk_agent, workspace: Workspace, remote: Remote, clock, registry_for, gate: str):
    agent = make_sdk_agent(streaming=False, push=False)
    workspace.save_agents([{"name": "bot", "url": agent.url}], None)
    reg, delivery, sink = registry_for(workspace)
    task = await start_task(remote, workspace, "bot", f"hold {gate}")
    rec = await add_record(workspace, task, "bot", clock)
    await reg.arm(workspace, rec)
    await clock.until(lambda s: s == [15.0])
    tool = A2ATool(remote, ClientSettings(), reg, clock=clock)

    async def cancel() -> dict:
        return await tool.run("cancel", {"agent": "bot", "taskId": task.id}, ChatTarget("chat1", workspace))

    return agent, reg, delivery, sink, task, rec, cancel


async def test_a_cancel_answered_canceled_ends_the_watch_canceled(
    make_sdk_agent, workspace, remote, clock, registry_for
) -> None:
    agent, reg, delivery, sink, task, rec, cancel = await _watched(
        make_sdk_agent, workspace, remote, clock, registry_for, "cx1"
    )
    out = await cancel()
    assert out["state"] == "canceled" and out["watch"] == "canceled", out
    assert out["note"] == "canceled; the watch of this task ended"
    assert pending.read(workspace).records == [] and rec.watch_id not in reg
    assert [e.data["reason"] for e in sink.events if e.kind == "watch.ended"] == ["canceled"]
    await clock.advance(300)
    assert delivery.delivered == []  # the answer told it; nothing comes to the chat later


@pytest.mark.parametrize("settles", ["completed", "canceled"])
async def test_a_cancel_only_requested_keeps_the_watch_until_the_task_settles(
    make_sdk_agent, workspace, remote, clock, registry_for, settles: str
) -> None:
    agent, reg, delivery, sink, task, rec, cancel = await _watched(
        make_sdk_agent, workspace, remote, clock, registry_for, "cx2"
    )
    agent.cancel_answer = "working"  # the agent takes the cancel and answers before it takes effect
    out = await cancel()
    assert out["state"] == "working" and out["watch"] == "goes on", out
    assert out["note"] == "cancel requested; the task is still working; the watch goes on and delivers its outcome"
    [kept] = pending.read(workspace).records
    assert kept.watch_id == rec.watch_id and kept.extra[CANCEL_REQUESTED] == clock.now().isoformat()
    assert rec.watch_id in reg and "watch.ended" not in sink.kinds()

    entry = workspace.read_agents().get("bot")
    assert entry is not None
    conn = await remote.connect(entry)
    if settles == "completed":
        agent.release("cx2")
        await eventually(lambda: task.id in agent.finished, what="the agent to finish")
    else:  # the cancel takes effect later
        agent.cancel_answer = ""
        await conn.cancel(task.id)
        await settled_at_agent(conn, task.id, "canceled")
    await clock.advance(15)
    [(_, text)] = await delivery.wait_for(1)
    assert f"({settles})]" in text
    await clock.advance(300)
    assert len(delivery.delivered) == 1 and pending.read(workspace).records == []
    assert [e.data["reason"] for e in sink.events if e.kind == "watch.ended"] == ["settled"]


async def test_a_refused_cancel_of_a_running_task_keeps_the_watch(
    make_sdk_agent, workspace, remote, clock, registry_for
) -> None:
    agent, reg, delivery, sink, task, rec, cancel = await _watched(
        make_sdk_agent, workspace, remote, clock, registry_for, "cx3"
    )
    agent.cancel_answer = "refuse"
    out = await cancel()
    assert out["state"] == "working" and out["watch"] == "goes on", out
    assert out["note"].startswith("the agent refused to cancel (") and out["note"].endswith(
        "the task is still working; the watch goes on"
    )
    [kept] = pending.read(workspace).records
    assert CANCEL_REQUESTED not in kept.extra and rec.watch_id in reg

    agent.release("cx3")
    await eventually(lambda: task.id in agent.finished, what="the agent to finish")
    await clock.advance(15)
    [(_, text)] = await delivery.wait_for(1)
    assert "(completed)]" in text and "released cx3" in text


async def test_a_refused_cancel_of_a_finished_task_answers_its_outcome(
    make_sdk_agent, workspace, remote, clock, registry_for
) -> None:
    agent, reg, delivery, sink, task, rec, cancel = await _watched(
        make_sdk_agent, workspace, remote, clock, registry_for, "cx4"
    )
    agent.release("cx4")
    await eventually(lambda: task.id in agent.finished, what="the agent to finish")
    out = await cancel()  # before the watch's next check: the agent refuses, the task is over
    assert out["state"] == "completed" and out["text"] == "released cx4" and out["watch"] == "completed", out
    assert out["note"] == "the task had already finished (completed); it was not canceled"
    assert pending.read(workspace).records == [] and rec.watch_id not in reg
    await clock.advance(300)
    assert delivery.delivered == []
