"""The tool's `status` and `cancel` actions, their order with watches, and keys never leaking."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable

import pytest

from a2aconsole.core import pending
from a2aconsole.core.events import QUESTION, RESULT, SENT, MemorySink
from a2aconsole.core.files.attachments import Attachment
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.pending.records import WatchRecord
from a2aconsole.core.remote.client import Remote
from a2aconsole.core.remote.convert import outgoing_message
from a2aconsole.core.remote.http import new_http_client
from a2aconsole.core.remote.values import TaskSnapshot
from tests.support.clock import FakeClock
from tests.support.js_agents import SdkAgent
from tests.support.toolkit import TARGET, RecordingWatches, entry, make_tool, write_agents
from tests.support.watching import eventually


async def _watched_hold(tool, clock: FakeClock, gate: str, agent: str = "echo") -> dict:
    run = asyncio.create_task(tool.run("send", {"agent": agent, "message": f"hold {gate}"}, TARGET))
    await clock.wait_for_sleepers(1)
    await clock.advance(5)
    result = await asyncio.wait_for(run, 10)
    assert result["state"] == "working"
    return result


async def test_status_returns_task(http, workspace: Workspace, sdk_agent: SdkAgent) -> None:
    write_agents(workspace, entry("echo", sdk_agent))
    tool = make_tool(http, workspace)
    sent = await tool.run("send", {"agent": "echo", "message": "file"}, TARGET)
    status = await tool.run("status", {"agent": "echo", "taskId": sent["taskId"]}, TARGET)
    assert status == sent  # the same shape as a finished send (the file is not saved twice)
    assert status["files"] == ["inbox/a2a/echo/report.pdf"]


async def test_a_task_whose_history_outgrew_the_answer_budget_is_still_checked(
    workspace: Workspace, sdk_agent: SdkAgent, remote: Remote
) -> None:
    """The core asks GetTask for no history (`historyLength` 0), which it never reads: a task whose conversation
    holds a 60 KB file the user sent (the JS agent takes requests up to 100 KB) is checked within a 32 KB answer
    budget, and its small result read (asked with its history, the answer was refused as too big, and a watch
    of it would have ended so). An owner's budget is megabytes; so can a long conversation be."""
    write_agents(workspace, entry("echo", sdk_agent))
    echo = workspace.read_agents().get("echo")
    assert echo is not None
    conn = await remote.connect(echo)  # the test's own client, with the usual budget
    big = Attachment("notes.bin", "application/octet-stream", b"\x00" * (60 * 1024))
    task = await conn.send(outgoing_message("hold hist", [big], "", "", {}))
    assert isinstance(task, TaskSnapshot)
    sdk_agent.release("hist")
    await eventually(lambda: task.id in sdk_agent.finished, what="the agent to finish")
    async with new_http_client(max_response_bytes=32 * 1024) as small:
        status = await make_tool(small, workspace).run("status", {"agent": "echo", "taskId": task.id}, TARGET)
    assert status.get("state") == "completed" and status["text"] == "released hist", status


async def test_status_of_running_task_keeps_watch(http, workspace: Workspace, sdk_agent: SdkAgent) -> None:
    write_agents(workspace, entry("echo", sdk_agent))
    clock, watches = FakeClock(), RecordingWatches()
    tool = make_tool(http, workspace, clock=clock, watches=watches)
    sent = await _watched_hold(tool, clock, "s1")
    status = await tool.run("status", {"agent": "echo", "taskId": sent["taskId"]}, TARGET)
    assert status["state"] == "working" and status["text"] == "holding s1"
    assert len(pending.read(workspace).records) == 1
    sdk_agent.release("s1")


async def test_status_settled_task_ends_watch(http, workspace: Workspace, sdk_agent: SdkAgent) -> None:
    write_agents(workspace, entry("echo", sdk_agent))
    tool = make_tool(http, workspace)
    sent = await tool.run("send", {"agent": "echo", "message": "ask"}, TARGET)
    async with pending.transaction(workspace) as tx:  # as if a watch had taken the task over
        tx.add(WatchRecord("w1", TARGET, "echo", sent["taskId"], sent["contextId"]))
        tx.add(WatchRecord("w2", "other-chat", "echo", sent["taskId"], sent["contextId"]))
    status = await tool.run("status", {"agent": "echo", "taskId": sent["taskId"]}, TARGET)
    assert status["state"] == "input-required" and status["question"] == "Which colour?"
    assert [r.watch_id for r in pending.read(workspace).records] == ["w2"]  # only this chat's watch ends


async def test_status_unknown_task_error(http, workspace: Workspace, sdk_agent: SdkAgent) -> None:
    write_agents(workspace, entry("echo", sdk_agent))
    result = await make_tool(http, workspace).run("status", {"agent": "echo", "taskId": "no-such-task"}, TARGET)
    assert 'agent "echo" does not know that task' in result["error"]
    assert "taskId is required" in (await make_tool(http, workspace).run("status", {"agent": "echo"}, TARGET))["error"]


async def test_cancel_cancels_remote_and_drops_watch(http, workspace: Workspace, sdk_agent: SdkAgent) -> None:
    write_agents(workspace, entry("echo", sdk_agent))
    clock, watches = FakeClock(), RecordingWatches()
    tool = make_tool(http, workspace, clock=clock, watches=watches)
    sent = await _watched_hold(tool, clock, "c1")
    assert len(pending.read(workspace).records) == 1
    result = await tool.run("cancel", {"agent": "echo", "taskId": sent["taskId"]}, TARGET)
    assert result["state"] == "canceled" and result["text"] == "cancelled by request"
    assert pending.read(workspace).records == []
    assert watches.calls == [("arm", sent["taskId"]), ("stop", sent["taskId"])]
    remote = await tool.run("status", {"agent": "echo", "taskId": sent["taskId"]}, TARGET)
    assert remote["state"] == "canceled"


async def test_cancel_finished_task_returns_outcome(http, workspace: Workspace, sdk_agent: SdkAgent) -> None:
    write_agents(workspace, entry("echo", sdk_agent))
    tool = make_tool(http, workspace)
    sent = await tool.run("send", {"agent": "echo", "message": "hello done"}, TARGET)
    result = await tool.run("cancel", {"agent": "echo", "taskId": sent["taskId"]}, TARGET)
    assert result["state"] == "completed" and result["text"] == "echo: hello done"
    assert "already finished" in result["note"]


async def test_cancel_unreachable_keeps_the_watch(
    http, workspace: Workspace, make_sdk_agent: Callable[..., SdkAgent]
) -> None:
    agent = make_sdk_agent()
    write_agents(workspace, entry("echo", agent))
    clock, watches = FakeClock(), RecordingWatches()
    tool = make_tool(http, workspace, clock=clock, watches=watches)
    sent = await _watched_hold(tool, clock, "c2")
    (before,) = pending.read(workspace).records
    write_agents(workspace, entry("echo", "http://127.0.0.1:9/"))  # the agent moved away
    result = await tool.run("cancel", {"agent": "echo", "taskId": sent["taskId"]}, TARGET)
    assert 'agent "echo" is unreachable' in result["error"]
    assert result["error"].endswith("Could not reach the agent; the watch goes on")
    (after,) = pending.read(workspace).records
    assert after.to_json() == before.to_json()  # nothing removed, nothing marked
    assert [c[0] for c in watches.calls] == ["arm"]
    agent.release("c2")


async def test_result_never_contains_key(
    http, workspace: Workspace, make_sdk_agent: Callable[..., SdkAgent], caplog: pytest.LogCaptureFixture
) -> None:
    key = "sk-live-NEVER-SHOW-4242"
    good = make_sdk_agent(key=key, extended=True)
    wrong = make_sdk_agent(key="another-key")
    write_agents(
        workspace,
        entry("good", good, key=key),
        entry("wrong", wrong, key=key),
        entry("gone", "http://127.0.0.1:9/", key=key),
    )
    sink = MemorySink()
    clock = FakeClock()
    tool = make_tool(http, workspace, events=sink, clock=clock, push_base_url="https://console.example")
    caplog.set_level(logging.DEBUG)
    results = [await tool.run("agents", {}, TARGET)]
    for name in ("good", "wrong", "gone"):
        results.append(await tool.run("send", {"agent": name, "message": "file"}, TARGET))
        results.append(await tool.run("send", {"agent": name, "message": "ask"}, TARGET))
        results.append(await tool.run("status", {"agent": name, "taskId": "t-unknown"}, TARGET))
        results.append(await tool.run("cancel", {"agent": name, "taskId": "t-unknown"}, TARGET))
    results.append(await _watched_hold(tool, clock, "k1", agent="good"))
    results.append(await tool.run("cancel", {"agent": "good", "taskId": results[-1]["taskId"]}, TARGET))
    assert results[1]["state"] == "completed" and "error" in results[5]  # the calls really ran
    ours = "\n".join(r.getMessage() for r in caplog.records if not r.name.startswith("a2a.server"))  # not the agent's
    dumped = json.dumps(results) + json.dumps([e.to_json() for e in sink.events], default=str) + ours
    assert key not in dumped
    assert {SENT, RESULT, QUESTION} <= set(sink.kinds())


async def test_malformed_pending_file_reported(http, workspace: Workspace, sdk_agent: SdkAgent) -> None:
    write_agents(workspace, entry("echo", sdk_agent))
    pending.file_path(workspace).write_text("[{", encoding="utf-8")
    clock = FakeClock()
    tool = make_tool(http, workspace, clock=clock)
    run = asyncio.create_task(tool.run("send", {"agent": "echo", "message": "hold p1"}, TARGET))
    await clock.wait_for_sleepers(1)
    await clock.advance(5)
    result = await asyncio.wait_for(run, 10)
    # the file is named from the workspace: answers go to API hosts and models, not the server's folders
    assert result["error"].startswith(".volcanic/a2a/pending.json is not valid JSON")
    assert "cannot be watched" in result["error"] and str(workspace.root) not in result["error"]
    assert result["taskId"] == sdk_agent.received[0].task_id
    sdk_agent.release("p1")
    done = await tool.run("send", {"agent": "echo", "message": "ask"}, TARGET)
    status = await tool.run("status", {"agent": "echo", "taskId": done["taskId"]}, TARGET)
    assert status["state"] == "input-required" and "pending.json" in status["warning"]
    assert pending.file_path(workspace).read_text(encoding="utf-8") == "[{"  # never overwritten
