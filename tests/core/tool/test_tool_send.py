"""The tool's `send` action against real loopback agents: answers, questions, files, watches, errors, hops."""

from __future__ import annotations

import asyncio
import base64
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from a2aconsole.core import pending
from a2aconsole.core.events import STATE, MemorySink
from a2aconsole.core.files.attachments import Attachment
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.remote.client import Remote
from a2aconsole.core.remote.convert import outgoing_message, send_request
from a2aconsole.core.remote.http import new_http_client
from a2aconsole.core.remote.values import TaskSnapshot
from a2aconsole.core.results import WORKING_NOTE
from a2aconsole.core.tool.send import stale_status
from tests.support.agents import PDF_BYTES, TestAgent
from tests.support.clock import FakeClock
from tests.support.js_agents import SdkAgent
from tests.support.memory import reset_peak, status_kb
from tests.support.toolkit import TARGET, RecordingWatches, entry, make_tool, write_agents
from tests.support.watching import eventually


@pytest.fixture
def echo(workspace: Workspace, agent: TestAgent) -> TestAgent:
    write_agents(workspace, entry("echo", agent))
    return agent


@pytest.fixture
def sdk_echo(workspace: Workspace, sdk_agent: SdkAgent) -> SdkAgent:
    """`echo` on each SDK in turn (python, js)."""
    write_agents(workspace, entry("echo", sdk_agent))
    return sdk_agent


async def test_send_completes_within_wait_returns_answer_and_ids(
    http, workspace: Workspace, sdk_echo: SdkAgent
) -> None:
    result = await make_tool(http, workspace).run("send", {"agent": "echo", "message": "hello there"}, TARGET)
    assert result["state"] == "completed"
    assert result["text"] == "echo: hello there"
    assert result["taskId"] == sdk_echo.received[0].task_id
    assert result["contextId"] == sdk_echo.received[0].context_id
    assert result["artifacts"] == [{"name": "result", "text": "echo: hello there"}]
    assert sdk_echo.received[0].text == "hello there"
    assert pending.read(workspace).records == []


async def test_send_continues_context(http, workspace: Workspace, sdk_echo: SdkAgent) -> None:
    tool = make_tool(http, workspace)
    first = await tool.run("send", {"agent": "echo", "message": "hello one"}, TARGET)
    second = await tool.run("send", {"agent": "echo", "message": "hello two", "contextId": first["contextId"]}, TARGET)
    assert second["contextId"] == first["contextId"] == sdk_echo.received[1].context_id
    assert second["taskId"] != first["taskId"]
    assert second["text"] == "echo: hello two"


async def test_send_input_required_returns_question(http, workspace: Workspace, sdk_echo: SdkAgent) -> None:
    result = await make_tool(http, workspace).run("send", {"agent": "echo", "message": "ask"}, TARGET)
    assert result["state"] == "input-required"
    assert result["question"] == "Which colour?"
    assert "action=send" in result["hint"] and result["taskId"] in result["hint"]
    assert result["contextId"]


async def test_send_auth_required_returns_question(http, workspace: Workspace, sdk_echo: SdkAgent) -> None:
    result = await make_tool(http, workspace).run("send", {"agent": "echo", "message": "auth"}, TARGET)
    assert result["state"] == "auth-required"
    assert result["question"] == "Please sign in at the agent"
    assert "authentication" in result["hint"] and result["taskId"] in result["hint"]


async def test_send_answer_with_task_id_continues_task(http, workspace: Workspace, sdk_echo: SdkAgent) -> None:
    tool = make_tool(http, workspace)
    question = await tool.run("send", {"agent": "echo", "message": "ask"}, TARGET)
    answer = await tool.run(
        "send",
        {"agent": "echo", "message": "blue", "taskId": question["taskId"], "contextId": question["contextId"]},
        TARGET,
    )
    assert answer["state"] == "completed"
    assert answer["taskId"] == question["taskId"]
    assert answer["text"] == "got answer: blue"
    assert sdk_echo.received[1].task_id == question["taskId"]


async def test_send_to_completed_task_names_its_state(http, workspace: Workspace, sdk_echo: SdkAgent) -> None:
    """Answering a task that has completed: the agent's refusal names the state (`completed`), never the SDK's
    enum number (@a2a-js/sdk says "terminal state (3)") nor its constant (a2a-sdk says TASK_STATE_COMPLETED)."""
    tool = make_tool(http, workspace)
    done = await tool.run("send", {"agent": "echo", "message": "hello first"}, TARGET)
    assert done["state"] == "completed"
    again = await tool.run("send", {"agent": "echo", "message": "one more", "taskId": done["taskId"]}, TARGET)
    assert "completed" in again["error"], again
    assert "(3)" not in again["error"] and "TASK_STATE" not in again["error"]


async def test_send_after_auth_required_continues_task(http, workspace: Workspace, sdk_echo: SdkAgent) -> None:
    """The JS SDK's immediate reply to the follow-up is the auth-required task as it was: not the outcome."""
    tool = make_tool(http, workspace)
    asked = await tool.run("send", {"agent": "echo", "message": "auth"}, TARGET)
    done = await tool.run("send", {"agent": "echo", "message": "signed in", "taskId": asked["taskId"]}, TARGET)
    assert done["state"] == "completed" and done["text"] == "got answer: signed in"
    assert done["taskId"] == asked["taskId"]
    assert pending.read(workspace).records == []


async def test_send_answer_still_worked_on_when_wait_ends_starts_watch(
    http, workspace: Workspace, sdk_echo: SdkAgent
) -> None:
    """The JS agent works on this answer silently: its task shows the old question until the wait ends. That
    question is not the outcome: the task goes to a watch, which is told to skip that status."""
    clock = FakeClock()
    tool = make_tool(http, workspace, clock=clock)
    asked = await tool.run("send", {"agent": "echo", "message": "ask"}, TARGET)
    run = asyncio.create_task(
        tool.run("send", {"agent": "echo", "message": "hold q1", "taskId": asked["taskId"]}, TARGET)
    )
    await clock.wait_for_sleepers(1)
    await clock.advance(5)
    result = await asyncio.wait_for(run, 10)
    assert result == {
        "state": "working",
        "agent": "echo",
        "taskId": asked["taskId"],
        "contextId": asked["contextId"],
        "note": WORKING_NOTE,
    }
    (record,) = pending.read(workspace).records
    stale = record.extra.get("staleStatus")
    if sdk_echo.sdk == "python":  # this one says `working` at once
        assert record.state == "working" and stale is None
    else:
        assert record.state == "input-required" and stale["state"] == "input-required"
        assert stale["messageId"] and stale["timestamp"]
    sdk_echo.release("q1")


async def test_an_answer_s_first_state_is_told_and_a_stale_one_is_not(
    http, workspace: Workspace, sdk_echo: SdkAgent
) -> None:
    """The history learns that a question was answered: the Python agent's reply already says `working`, and
    that state is told (before, nothing was until the task moved again, and a live panel showed the question
    once more). The JS agent's task shows the old question until the wait ends: that is not told again."""
    sink = MemorySink()
    clock = FakeClock()
    tool = make_tool(http, workspace, clock=clock, events=sink)
    asked = await tool.run("send", {"agent": "echo", "message": "ask"}, TARGET)
    told, asks = len(sink.events), list(sdk_echo.methods).count("GetTask")
    run = asyncio.create_task(
        tool.run("send", {"agent": "echo", "message": "hold q2", "taskId": asked["taskId"]}, TARGET)
    )
    await clock.wait_for_sleepers(1)
    # the follower's first GetTask is answered (and what it saw told) before the wait runs out
    await eventually(lambda: list(sdk_echo.methods).count("GetTask") > asks, what="the follower's GetTask")
    await eventually(lambda: sdk_echo.sdk != "python" or STATE in [e.kind for e in sink.events[told:]])
    await clock.advance(5)
    assert (await asyncio.wait_for(run, 10))["state"] == "working"
    states = [e.state for e in sink.events[told:] if e.kind == STATE]
    assert "input-required" not in states
    if sdk_echo.sdk == "python":
        assert states == ["working"]
    sdk_echo.release("q2")


async def test_a_stale_question_is_not_told_when_the_record_came_before_the_first_get_task(
    http, workspace: Workspace, sdk_echo: SdkAgent, monkeypatch
) -> None:
    """The same, when the first GetTask is answered only after the record was written (past the 50 ms bound):
    the follower made then starts from the reply's state, not from the record's "sending" mark."""
    from a2aconsole.core.tool import tool as tool_module

    real_first_check = tool_module.first_check
    answered: list[Any] = []

    async def after_the_record(*args: Any) -> Any:
        await eventually(lambda: pending.read(workspace).records, what="the record written by the timer")
        answered.append(await real_first_check(*args))
        return answered[-1]

    sink = MemorySink()
    clock = FakeClock()
    tool = make_tool(http, workspace, clock=clock, events=sink)
    asked = await tool.run("send", {"agent": "echo", "message": "ask"}, TARGET)
    told = len(sink.events)
    monkeypatch.setattr(tool_module, "first_check", after_the_record)
    run = asyncio.create_task(
        tool.run("send", {"agent": "echo", "message": "hold q3", "taskId": asked["taskId"]}, TARGET)
    )
    await eventually(lambda: answered, what="the first GetTask's answer")
    assert answered[0][0] is not None and answered[0][0].state == (
        "working" if sdk_echo.sdk == "python" else "input-required"
    )
    await clock.wait_for_sleepers(1)  # the send's wait, past the first GetTask
    await clock.advance(5)
    assert (await asyncio.wait_for(run, 10))["state"] == "working"
    states = [e.state for e in sink.events[told:] if e.kind == STATE]
    assert states == (["working"] if sdk_echo.sdk == "python" else []), states
    sdk_echo.release("q3")


async def test_send_failed_task_returns_reason(http, workspace: Workspace, sdk_echo: SdkAgent) -> None:
    result = await make_tool(http, workspace).run("send", {"agent": "echo", "message": "fail"}, TARGET)
    assert result["state"] == "failed" and result["text"] == "boom: cannot do that"


async def test_send_message_only_reply(http, workspace: Workspace, make_sdk_agent: Callable[..., SdkAgent]) -> None:
    write_agents(workspace, entry("talker", make_sdk_agent(message_only=True)))
    result = await make_tool(http, workspace).run("send", {"agent": "talker", "message": "hi"}, TARGET)
    assert result["message"] == "echo: hi"
    assert result["contextId"]
    assert "state" not in result


async def _run_until_wait_expires(tool, clock: FakeClock, args: dict) -> dict:
    run = asyncio.create_task(tool.run("send", args, TARGET))
    await clock.wait_for_sleepers(1)
    await clock.advance(5)
    return await asyncio.wait_for(run, 10)


@pytest.mark.parametrize(
    ("options", "push_base_url", "source"),
    [
        ({}, None, "subscribe"),
        ({"streaming": False}, None, "poll"),
        ({}, "https://console.example", "push"),
        ({"push": False}, "https://console.example", "subscribe"),
    ],
)
async def test_send_slow_task_starts_watch(
    http, workspace: Workspace, make_sdk_agent: Callable[..., SdkAgent], options, push_base_url, source
) -> None:
    agent = make_sdk_agent(**options)
    write_agents(workspace, entry("worker", agent))
    clock, watches = FakeClock(), RecordingWatches()
    tool = make_tool(http, workspace, clock=clock, watches=watches, push_base_url=push_base_url)
    result = await _run_until_wait_expires(tool, clock, {"agent": "worker", "message": "hold g1"})
    assert result == {
        "state": "working",
        "agent": "worker",
        "taskId": agent.received[0].task_id,
        "contextId": agent.received[0].context_id,
        "note": WORKING_NOTE,
    }
    (record,) = pending.read(workspace).records
    assert (record.target, record.agent, record.task_id) == (TARGET, "worker", result["taskId"])
    assert record.context_id == result["contextId"]
    assert record.source == source
    assert record.started_at.startswith("2026-01-01T00:00:0")
    assert record.message == "hold g1"
    assert record.state in ("submitted", "working")  # the last state seen before the wait ran out
    assert (record.push_token is not None) == (source == "push")
    if record.push_token:
        assert len(record.push_token) >= 40 and record.push_token not in str(result)
    assert watches.calls == [("arm", result["taskId"])]
    agent.release("g1")


@pytest.mark.parametrize("streaming", [True, False])
async def test_send_completes_while_waiting(
    http, workspace: Workspace, make_sdk_agent: Callable[..., SdkAgent], streaming: bool
) -> None:
    agent = make_sdk_agent(streaming=streaming)
    write_agents(workspace, entry("worker", agent))
    clock = FakeClock()
    tool = make_tool(http, workspace, clock=clock)
    run = asyncio.create_task(tool.run("send", {"agent": "worker", "message": "hold g2"}, TARGET))
    await clock.wait_for_sleepers(2 if not streaming else 1)
    agent.release("g2")
    await eventually(lambda: len(agent.finished) == 1)
    if not streaming:
        await clock.advance(0.5)  # the next poll
    result = await asyncio.wait_for(run, 10)
    assert result["state"] == "completed" and result["text"] == "released g2"
    assert pending.read(workspace).records == []
    if not streaming:  # the wait's time (the first GetTask's, then the follower's) and the poll's first nap
        assert sorted(set(clock.sleeps[:3])) == [0.5, 5]


async def test_send_file_artifact_saved_to_inbox(http, workspace: Workspace, sdk_echo: SdkAgent) -> None:
    folder = workspace.inbox_dir / "echo"
    folder.mkdir(parents=True)
    (folder / "report.pdf").write_bytes(b"an older report")
    result = await make_tool(http, workspace).run("send", {"agent": "echo", "message": "file"}, TARGET)
    assert result["state"] == "completed"
    assert result["files"] == ["inbox/a2a/echo/report-1.pdf"]
    assert (workspace.root / result["files"][0]).read_bytes() == PDF_BYTES
    assert (folder / "report.pdf").read_bytes() == b"an older report"  # never overwritten
    assert result["links"] == ["https://files.example/r.pdf"]
    assert result["text"] == "here is the report"


async def test_send_never_writes_through_an_inbox_folder_linked_outside(
    http, workspace: Workspace, sdk_echo: SdkAgent, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    workspace.inbox_dir.mkdir(parents=True)
    (workspace.inbox_dir / "echo").symlink_to(elsewhere, target_is_directory=True)
    result = await make_tool(http, workspace).run("send", {"agent": "echo", "message": "file"}, TARGET)
    assert result["state"] == "completed" and result["text"] == "here is the report"  # the answer still arrives
    assert result["files"] == [] and list(elsewhere.iterdir()) == []
    reason = "the folder inbox/a2a/echo leads outside the workspace (a symlink)"
    assert result["skipped"] == [{"name": "report.pdf", "bytes": len(PDF_BYTES), "reason": reason}]


async def test_send_oversized_artifact_skipped(http, workspace: Workspace, sdk_echo: SdkAgent) -> None:
    tool = make_tool(http, workspace, max_file_bytes=1000)
    result = await tool.run("send", {"agent": "echo", "message": "bigfile 2000"}, TARGET)
    assert result["skipped"] == [{"name": "big.bin", "bytes": 2000}]
    assert result["files"] == [] and not (workspace.inbox_dir / "echo" / "big.bin").exists()


async def test_send_files_argument_sent_as_parts(http, workspace: Workspace, sdk_echo: SdkAgent) -> None:
    (workspace.root / "docs").mkdir()
    (workspace.root / "docs" / "notes.txt").write_text("my notes", encoding="utf-8")
    (workspace.root / "pic.png").write_bytes(b"\x89PNG fake")
    args = {"agent": "echo", "message": "hello files", "files": ["docs/notes.txt", "pic.png"]}
    result = await make_tool(http, workspace).run("send", args, TARGET)
    assert result["state"] == "completed"
    text, notes, pic = sdk_echo.received[0].parts
    assert text == {"text": "hello files"}
    assert notes == {
        "raw": base64.b64encode(b"my notes").decode(),
        "mediaType": "text/plain",
        "filename": "notes.txt",
    }
    assert pic["filename"] == "pic.png" and pic["mediaType"] == "image/png"


def test_a_send_s_request_holds_one_copy_of_each_file() -> None:
    """The message is built inside the request: built apart (the parts, the message), then put into a request,
    a 64 MB file took four times its size at the peak."""
    size = 64 * 1024 * 1024
    message = outgoing_message("hi", [Attachment("a.bin", "application/octet-stream", b"x" * size)], "", "", {})
    reset_peak()
    before = status_kb("VmRSS")
    req = send_request(message, 0)
    grown = (status_kb("VmHWM") - before) * 1024
    assert len(req.message.parts[1].raw) == size
    assert grown < size * 1.5, f"{grown / size:.2f} copies"


async def test_a_new_task_s_reply_does_not_echo_the_files_sent(workspace: Workspace, sdk_echo: SdkAgent) -> None:
    """A new task's reply is asked without its history (`historyLength` 0): the files just sent do not come
    back in it. With an answer budget under the files' size (MaxResponseBytes below MaxFileBytes) the reply was
    refused as too big, and the task the agent had started was followed by nobody."""
    (workspace.root / "notes.bin").write_bytes(b"\x00" * (50 * 1024))  # the JS agent takes requests up to 100 KB
    args = {"agent": "echo", "message": "hello", "files": ["notes.bin"]}
    async with new_http_client(max_response_bytes=32 * 1024) as small:
        result = await make_tool(small, workspace, max_file_bytes=64 * 1024).run("send", args, TARGET)
    assert result.get("state") == "completed" and result["text"] == "echo: hello", result


async def test_a_long_conversation_s_reply_carries_only_its_last_turn(workspace: Workspace, sdk_echo: SdkAgent) -> None:
    """A follow-up's reply carries the task's last two messages (the question and the answer sent), not the
    whole conversation: two 50 KB files sent in turn fit a 96 KB answer budget (the whole history, both files,
    did not: the answer's reply was refused and the task, answered, was followed by nobody)."""
    for name in ("first.bin", "second.bin"):
        (workspace.root / name).write_bytes(b"\x00" * (50 * 1024))  # the JS agent takes requests up to 100 KB
    async with new_http_client(max_response_bytes=96 * 1024) as small:
        tool = make_tool(small, workspace, max_file_bytes=64 * 1024)
        asked = await tool.run("send", {"agent": "echo", "message": "ask", "files": ["first.bin"]}, TARGET)
        assert asked.get("state") == "input-required", asked
        args = {"agent": "echo", "message": "blue", "files": ["second.bin"], "taskId": asked["taskId"]}
        answered = await tool.run("send", args, TARGET)
    assert answered.get("state") == "completed" and answered["text"] == "got answer: blue", answered


async def test_a_stale_reply_is_told_by_the_last_two_messages_alone(
    workspace: Workspace, sdk_agent: SdkAgent, remote: Remote
) -> None:
    """The last two messages a follow-up's reply carries are the question and the answer sent, so a stale reply
    (the JS agent's) is told by its history, not by the fallback on timestamps (here made to say "not stale")."""
    write_agents(workspace, entry("echo", sdk_agent))
    echo = workspace.read_agents().get("echo")
    assert echo is not None
    conn = await remote.connect(echo)
    asked = await conn.send(outgoing_message("ask", [], "", "", {}))
    assert isinstance(asked, TaskSnapshot)
    await eventually(lambda: _state(conn, asked.id, "input-required"), what="the question")
    answer = outgoing_message("hold st", [], asked.context_id, asked.id, {})
    reply = await conn.send(answer)
    sdk_agent.release("st")
    assert isinstance(reply, TaskSnapshot) and reply.history_ids[-1] == answer.message_id
    if sdk_agent.sdk == "python":  # this one answers with the task already working
        assert reply.state == "working"
        return
    assert reply.state == "input-required" and reply.status.message is not None
    assert reply.history_ids == (reply.status.message.message_id, answer.message_id)
    assert stale_status(reply, answer, datetime(1970, 1, 1, tzinfo=UTC)) == reply.status


async def _state(conn: Any, task_id: str, state: str) -> bool:
    return (await conn.get_task(task_id)).state == state


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    p = tmp_path / "secret.txt"
    p.write_text("outside the workspace", encoding="utf-8")
    return p


@pytest.mark.parametrize("kind", ["dotdot", "absolute", "symlink", "fifo", "folder", "missing"])
async def test_send_attachment_refused(http, workspace: Workspace, echo: TestAgent, outside: Path, kind: str) -> None:
    if kind == "dotdot":
        path, expect = "../secret.txt", "outside the workspace"
    elif kind == "absolute":
        path, expect = str(outside), "outside the workspace"
    elif kind == "symlink":
        (workspace.root / "link.txt").symlink_to(outside)
        path, expect = "link.txt", "outside the workspace"
    elif kind == "fifo":
        os.mkfifo(workspace.root / "pipe")
        path, expect = "pipe", "not a regular file"
    elif kind == "folder":
        (workspace.root / "dir").mkdir()
        path, expect = "dir", "is a folder"
    else:
        path, expect = "nope.txt", "does not exist"
    result = await make_tool(http, workspace).run(
        "send", {"agent": "echo", "message": "hello", "files": [path]}, TARGET
    )
    assert expect in result["error"]
    assert echo.received == []


async def test_send_attachment_symlink_inside_workspace_allowed(http, workspace: Workspace, echo: TestAgent) -> None:
    (workspace.root / "real.txt").write_text("inside", encoding="utf-8")
    (workspace.root / "alias.txt").symlink_to(workspace.root / "real.txt")
    result = await make_tool(http, workspace).run(
        "send", {"agent": "echo", "message": "hello", "files": ["alias.txt"]}, TARGET
    )
    assert result["state"] == "completed"
    assert echo.received[0].parts[1]["filename"] == "real.txt"


async def test_send_attachments_capped_together(http, workspace: Workspace, echo: TestAgent) -> None:
    (workspace.root / "a.bin").write_bytes(b"a" * 600)
    (workspace.root / "b.bin").write_bytes(b"b" * 600)
    tool = make_tool(http, workspace, max_file_bytes=1000)
    ok = await tool.run("send", {"agent": "echo", "message": "hello", "files": ["a.bin"]}, TARGET)
    assert ok["state"] == "completed"
    result = await tool.run("send", {"agent": "echo", "message": "hello", "files": ["a.bin", "b.bin"]}, TARGET)
    assert "larger than 1000 bytes" in result["error"]
    assert len(echo.received) == 1


async def test_send_unknown_agent_error(http, workspace: Workspace, echo: TestAgent) -> None:
    result = await make_tool(http, workspace).run("send", {"agent": "nobody", "message": "hi"}, TARGET)
    assert 'unknown agent "nobody"' in result["error"]
    assert "echo" in result["error"] and "action=agents" in result["error"]


@pytest.mark.parametrize(
    ("args", "expect"),
    [
        ({"message": "hi"}, "agent is required"),
        ({"agent": "echo"}, "send needs a message, files or data"),
        ({"agent": "echo", "message": 3}, "message must be a string"),
        ({"agent": "echo", "message": "hi", "files": "a.txt"}, "files must be a list"),
        ({"agent": "echo", "message": "hi", "taskId": 7}, "taskId must be a string"),
    ],
)
async def test_send_bad_arguments(http, workspace: Workspace, echo: TestAgent, args: dict, expect: str) -> None:
    assert expect in (await make_tool(http, workspace).run("send", args, TARGET))["error"]


async def test_send_401_readable_error(http, workspace: Workspace, make_sdk_agent: Callable[..., SdkAgent]) -> None:
    agent = make_sdk_agent(key="right-key-1")
    write_agents(workspace, entry("locked", agent, key="wrong-key-2"), entry("keyless", agent))
    tool = make_tool(http, workspace)
    for name in ("locked", "keyless"):
        result = await tool.run("send", {"agent": name, "message": "hello"}, TARGET)
        assert f'agent "{name}" refused the request (HTTP 401)' in result["error"]
        assert "key in agents.json" in result["error"]
        assert "wrong-key-2" not in result["error"]


async def test_send_unreachable_agent_error(http, workspace: Workspace) -> None:
    write_agents(workspace, entry("gone", "http://127.0.0.1:9/"))
    result = await make_tool(http, workspace).run("send", {"agent": "gone", "message": "hello"}, TARGET)
    assert 'agent "gone" is unreachable' in result["error"]


async def test_send_bearer_only_card_uses_bearer(
    http, workspace: Workspace, make_sdk_agent: Callable[..., SdkAgent]
) -> None:
    agent = make_sdk_agent(key="bearer-key-3", bearer_only=True)
    write_agents(workspace, entry("bearer", agent, key="bearer-key-3"))
    result = await make_tool(http, workspace).run("send", {"agent": "bearer", "message": "hello"}, TARGET)
    assert result["state"] == "completed"
    rpc = [h for method, path, h in agent.requests if method == "POST"]
    assert rpc and all(h["authorization"] == "Bearer bearer-key-3" and "x-api-key" not in h for h in rpc)


async def test_send_api_key_sent_as_header(http, workspace: Workspace, make_sdk_agent: Callable[..., SdkAgent]) -> None:
    agent = make_sdk_agent(key="api-key-4")
    write_agents(workspace, entry("keyed", agent, key="api-key-4"))
    result = await make_tool(http, workspace).run("send", {"agent": "keyed", "message": "hello"}, TARGET)
    assert result["state"] == "completed"
    assert all(h.get("x-api-key") == "api-key-4" for m, _, h in agent.requests if m == "POST")


async def test_key_never_sent_to_another_origin(
    http, workspace: Workspace, make_agent: Callable[..., TestAgent]
) -> None:
    other = make_agent()
    decoy = make_agent(key="origin-key-5", interface_url=other.url)  # its card sends calls to `other`
    write_agents(workspace, entry("decoy", decoy, key="origin-key-5", trustedOrigins=[other.url]))  # confirmed
    await make_tool(http, workspace).run("send", {"agent": "decoy", "message": "hello"}, TARGET)
    assert other.requests, "the call went to the interface URL"
    for _, _, headers in other.requests:
        assert "x-api-key" not in headers and "authorization" not in headers
        assert "origin-key-5" not in str(headers)


async def test_hops_incremented(http, workspace: Workspace, sdk_echo: SdkAgent) -> None:
    tool = make_tool(http, workspace, hops=2)
    await tool.run("send", {"agent": "echo", "message": "hello"}, TARGET)
    assert sdk_echo.received[0].metadata["volcanic.hops"] == 3


async def test_hops_default_is_one(http, workspace: Workspace, sdk_echo: SdkAgent) -> None:
    await make_tool(http, workspace).run("send", {"agent": "echo", "message": "hello"}, TARGET)
    assert sdk_echo.received[0].metadata["volcanic.hops"] == 1


async def test_send_context_busy_names_watched_task(
    http, workspace: Workspace, make_agent: Callable[..., TestAgent]
) -> None:
    agent = make_agent(one_task_per_context=True)
    write_agents(workspace, entry("single", agent))
    clock = FakeClock()
    tool = make_tool(http, workspace, clock=clock)
    watched = await _run_until_wait_expires(tool, clock, {"agent": "single", "message": "hold b1"})
    before = pending.read(workspace).records
    args = {"agent": "single", "message": "hello more", "contextId": watched["contextId"]}
    result = await tool.run("send", args, TARGET)
    assert "busy" in result["error"]
    assert f"already watches task {watched['taskId']}" in result["error"]
    assert "arrive here by itself" in result["error"]
    assert pending.read(workspace).records == before  # a refusal never touches a watch
    agent.release("b1")
