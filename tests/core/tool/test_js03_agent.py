"""Agents on `@a2a-js/sdk` 0.3 (its last 0.3 release, protocol 0.3: tests/js03/agent.js), over JSON-RPC and HTTP+JSON.

Each wire behaviour where this SDK differs from the 1.3 ones is a named case below, asserting what the console does
about it (issue 26; the rows of docs/compat.md):

- `submitted first`: a send with `blocking: false` is answered with the task of the first event the agent
  publishes (`submitted`, as the SDK's samples publish it), as the events of the same moment left it when written:
  `submitted` with the result's artifact already in it, or the state of the agent's first status. The send's
  first GetTask reads the outcome.
- `silent follow-up`: a follow-up the agent works on without publishing an event first is answered only at its
  first event: past the send's wait the console reads the task (it holds the answer sent) and watches it.
- `whole history`: GetTask with `historyLength` 0 returns the whole history (`slice(-0)`), a send's reply always
  does (its `historyLength` is not read), and GetTask without one returns none: the console asks 1 of 0.3 agents
  where it means none (`transports_03.last_message_for_none`), so the files of a conversation do not push a result
  over the answer budget.
- `snapshot only`: a subscription to a task with no execution running (a question asked, a task finished) is its
  snapshot, then the end of the stream: the watch takes the snapshot's state.
- `cancel`: an interrupted task is canceled by the SDK itself ("Task cancellation requested by user."); a finished
  one is refused (-32002; HTTP 409 over HTTP+JSON, read as "already finished" since `LenientCompatRestTransport`).
- `REST files`: over HTTP+JSON the file's bytes are the proto's bytes (a2a-sdk 0.3 writes base64 text there):
  read as the agent meant them since `raw_file_bytes`; a file the console sends arrives base64-encoded once more
  (the agent's SDK reads it so), and without its name.
- `REST errors`: `{"code": -32001, ...}` with the HTTP status: a task the agent forgot (a restart) is "does not
  know that task", and its watch ends "lost", as over JSON-RPC (it read as a missing method, retried for ever).
- `REST push delete`: the SDK's 0.3 HTTP+JSON transport has no DeleteTaskPushNotificationConfig; the console's
  makes the call, so an ended watch's config is removed over both bindings.
- `subscribe errors`: a subscription the agent refuses (a task it forgot) is an SSE `error` event in an open
  stream over JSON-RPC (read as its JSON-RPC error since `LenientCompatJsonRpcTransport._sse_error`: the watch
  ends at once), and HTTP 500 "Bug: toJson serializer ..." over HTTP+JSON (the SDK's own bug: the console
  retries the stream, then polls, and GetTask's 404 ends the watch).
- `0.3 push`: each push body is the whole 0.3 task (`kind: "task"`); the watch confirms with GetTask.
- `no ListTasks`: protocol 0.3 has none (-32601 at HTTP 200 over JSON-RPC, an HTML 404 over HTTP+JSON): the console
  does not ask.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
from collections.abc import Callable
from typing import Any

import pytest

from a2aconsole.core import pending
from a2aconsole.core.files import AgentEntry
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.remote.client import Connection, Remote
from a2aconsole.core.remote.errors import RemoteError
from a2aconsole.core.remote.http import new_http_client
from a2aconsole.core.watches.registry import WatchRegistry
from tests.support.agents import PDF_BYTES
from tests.support.clock import FakeClock
from tests.support.js_agents import JsAgent
from tests.support.toolkit import TARGET, TargetTool, entry, make_tool, write_agents
from tests.support.watching import PushReceiver, add_record, eventually, start_task

BINDINGS = ["jsonrpc", "rest"]


@pytest.fixture(params=BINDINGS)
def js03(request: pytest.FixtureRequest, workspace: Workspace, make_js03_agent: Callable[..., JsAgent]) -> JsAgent:
    """A default 0.3 agent (streaming, push) as "j3" in the workspace, over each binding in turn."""
    agent = make_js03_agent(rest=request.param == "rest")
    write_agents(workspace, entry("j3", agent))
    return agent


async def _past_the_wait(tool: TargetTool, clock: FakeClock, args: dict[str, Any]) -> dict[str, Any]:
    """A send whose task outlives the wait (the fake clock run past `wait_seconds`): its answer."""
    run = asyncio.create_task(tool.run("send", args, TARGET))
    await clock.wait_for_sleepers(1)
    await clock.advance(5)
    return await asyncio.wait_for(run, 10)


async def _in_state(conn: Connection, task_id: str, state: str) -> bool:
    return (await conn.get_task(task_id)).state == state


async def test_js03_agent_listed(http, workspace: Workspace, js03: JsAgent) -> None:
    (info,) = (await make_tool(http, workspace).run("agents", {}, TARGET))["agents"]
    assert info["protocolVersions"] == ["0.3.0"] and (info["streaming"], info["push"]) == (True, True)


async def test_submitted_first_the_send_reads_the_outcome(http, workspace: Workspace, js03: JsAgent) -> None:
    tool = make_tool(http, workspace)
    done = await tool.run("send", {"agent": "j3", "message": "hello there"}, TARGET)
    assert done.get("state") == "completed" and done["text"] == "echo: hello there", done
    # the reply is the task caught as the agent's first events left it (here submitted, its artifact already in):
    # the send's first check read the outcome
    assert js03.methods in (["SendMessage", "GetTask"], ["SendMessage"])
    assert js03.wire_methods[0] in ("message/send", "POST /v1/message:send")
    failed = await tool.run("send", {"agent": "j3", "message": "fail"}, TARGET)
    assert failed.get("state") == "failed" and failed["text"] == "boom: cannot do that", failed
    only = await tool.run("send", {"agent": "j3", "message": "message hi"}, TARGET)
    assert only.get("message") == "echo: message hi" and "taskId" not in only, only
    assert pending.read(workspace).records == []


async def test_rest_files_are_read_as_sent(http, workspace: Workspace, js03: JsAgent) -> None:
    """Over HTTP+JSON the send failed ("Incorrect padding") before `raw_file_bytes`: the file's bytes read twice."""
    report = await make_tool(http, workspace).run("send", {"agent": "j3", "message": "file"}, TARGET)
    assert report.get("state") == "completed" and report["text"] == "here is the report", report
    assert (workspace.root / report["files"][0]).read_bytes() == PDF_BYTES
    assert report["artifacts"][0]["parts"][1]["link"] == "https://files.example/r.pdf"


async def test_rest_a_file_sent_arrives_encoded_once_more(http, workspace: Workspace, js03: JsAgent) -> None:
    """What the agent gets of a file the console sends: over JSON-RPC the file; over HTTP+JSON its base64 text,
    encoded again, and no name (a2a-sdk 0.3's proto convention, which this SDK reads as bytes)."""
    sent = b"attached \x00\xff"
    (workspace.root / "a.bin").write_bytes(sent)
    done = await make_tool(http, workspace).run("send", {"agent": "j3", "message": "hi", "files": ["a.bin"]}, TARGET)
    assert done.get("state") == "completed", done
    (got,) = [p["file"] for p in js03.received[0].parts if p.get("kind") == "file"]
    if js03.wire_methods[0].startswith("POST "):  # HTTP+JSON
        assert base64.b64decode(got["bytes"]) == base64.b64encode(sent) and "name" not in got
    else:
        assert base64.b64decode(got["bytes"]) == sent and got["name"] == "a.bin"


async def test_whole_history_is_not_asked(remote: Remote, workspace: Workspace, js03: JsAgent) -> None:
    task = await start_task(remote, workspace, "j3", "hello history")
    assert len(task.history_ids) == 1  # the send's reply: the submitted task, with the message sent
    conn = await remote.connect(AgentEntry(name="j3", url=js03.url))
    await eventually(lambda: _in_state(conn, task.id, "completed"), what="the task to complete")
    asked_none = await conn._get_task(task.id, 0)  # what `get_task` asks: 0.3 reads 0 as all, so 1 is asked
    assert len(asked_none.history) == 1 and asked_none.artifacts[0].name == "result"
    raw = await conn.get_task_json(task.id)  # no historyLength: this SDK then sends none
    assert raw.get("history", []) == [] and raw["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_a_result_beside_the_files_sent_is_read_within_the_budget(workspace: Workspace, js03: JsAgent) -> None:
    """A task whose history holds a file the user sent, and whose result is a file as big: the whole history and the
    result together are over the answer budget (each alone is within it). Before the console asked `historyLength`
    1 of 0.3 agents, every GetTask of the task was refused as too big and its watch ended without the result."""
    clock = FakeClock()
    (workspace.root / "brief.bin").write_bytes(b"s" * 30_000)
    async with contextlib.AsyncExitStack() as stack:
        http = new_http_client(64 * 1024)
        stack.push_async_callback(http.aclose)
        tool = make_tool(http, workspace, clock=clock)
        sent = await _past_the_wait(tool, clock, {"agent": "j3", "message": "later g2 30000", "files": ["brief.bin"]})
        assert sent.get("state") == "working", sent
        js03.release("g2")

        async def done() -> dict[str, Any]:
            status = await tool.run("status", {"agent": "j3", "taskId": sent["taskId"]}, TARGET)
            return status if status.get("state") == "completed" or "error" in status else {}

        status = await eventually(done, what="the result")
        assert "error" not in status, status
        assert (workspace.root / status["files"][0]).read_bytes() == (b"later\n" * 5000)


async def test_multi_turn_question_and_answer(http, workspace: Workspace, js03: JsAgent) -> None:
    tool = make_tool(http, workspace)
    asked = await tool.run("send", {"agent": "j3", "message": "ask"}, TARGET)
    assert asked.get("state") == "input-required" and asked["question"] == "Which colour?", asked
    follow_up = {"agent": "j3", "taskId": asked["taskId"], "contextId": asked["contextId"]}
    answer = await tool.run("send", {**follow_up, "message": "red"}, TARGET)
    assert answer.get("state") == "completed" and answer["text"] == "got answer: red", answer
    assert answer["taskId"] == asked["taskId"] and "newTask" not in answer
    # a follow-up to the finished task: refused as an invalid request (-32600), in the agent's words
    again = await tool.run("send", {**follow_up, "message": "blue"}, TARGET)
    assert "is in a terminal state (completed) and cannot be modified" in again.get("error", ""), again


async def test_silent_follow_up_is_read_from_its_task_at_the_end_of_the_wait(
    http, workspace: Workspace, js03: JsAgent
) -> None:
    """`blocking: false` is answered with the first event the agent publishes: a follow-up it works on without one
    (this agent's answer `hold <gate>`) holds the reply. Past the wait the console reads the task (which holds the
    answer sent) and watches it; before, the send failed at the call timeout and the task went unwatched."""
    clock = FakeClock()
    tool = make_tool(http, workspace, clock=clock)
    asked = await tool.run("send", {"agent": "j3", "message": "ask"}, TARGET)
    follow_up = {"agent": "j3", "taskId": asked["taskId"], "contextId": asked["contextId"], "message": "hold g1"}
    answer = await _past_the_wait(tool, clock, follow_up)
    assert answer.get("state") == "working" and answer["taskId"] == asked["taskId"], answer
    assert js03.methods.count("SendMessage") == 2 and js03.methods[-2:] == ["SendMessage", "GetTask"]
    (record,) = pending.read(workspace).records
    assert record.task_id == asked["taskId"] and record.source == "subscribe"
    js03.release("g1")

    async def answered() -> bool:
        status = await tool.run("status", {"agent": "j3", "taskId": asked["taskId"]}, TARGET)
        return status.get("state") == "completed" and status["text"] == "got answer: hold g1"

    await eventually(answered, what="the answer's outcome")


async def test_snapshot_only_subscription(remote: Remote, workspace: Workspace, js03: JsAgent) -> None:
    """A subscription to a task without a running execution is one snapshot, then the stream ends."""
    conn = await remote.connect(AgentEntry(name="j3", url=js03.url))
    asked = await start_task(remote, workspace, "j3", "ask")
    await eventually(lambda: _in_state(conn, asked.id, "input-required"), what="the question")
    events = [ev async for ev in conn.subscribe(asked.id)]
    assert [type(e).__name__ for e in events] == ["TaskSnapshot"] and events[0].state == "input-required"


async def test_snapshot_only_watch_delivers_the_question(
    workspace: Workspace, remote: Remote, js03: JsAgent, clock, registry_for
) -> None:
    reg, delivery, _ = registry_for(workspace)
    asked = await start_task(remote, workspace, "j3", "ask")
    await reg.arm(workspace, await add_record(workspace, asked, "j3", clock, source="subscribe"))
    [(_, text)] = await delivery.wait_for(1)
    assert "(input-required)" in text and "Which colour?" in text
    assert js03.methods.count("SubscribeToTask") == 1


async def test_watch_by_subscribe_delivers(
    workspace: Workspace, remote: Remote, js03: JsAgent, clock, registry_for
) -> None:
    reg, delivery, sink = registry_for(workspace)
    task = await start_task(remote, workspace, "j3", "hold s")
    await reg.arm(workspace, await add_record(workspace, task, "j3", clock, source="subscribe"))
    await sink.until(lambda: "working" in sink.states(), what="the stream's snapshot")
    js03.release("s")
    [(_, text)] = await delivery.wait_for(1)
    assert "released s" in text and "(completed)" in text
    assert pending.read(workspace).records == []


async def test_0_3_push_bodies_wake_the_watch(
    workspace: Workspace, remote: Remote, js03: JsAgent, clock, registry_for
) -> None:
    holder: list[WatchRegistry] = []
    async with PushReceiver(lambda *a: holder[0].on_push(*a)) as receiver:
        reg, delivery, sink = registry_for(workspace, push_base_url=receiver.url)
        holder.append(reg)
        task = await start_task(remote, workspace, "j3", "hold p")
        await reg.arm(workspace, await add_record(workspace, task, "j3", clock, source="poll"))
        await sink.until(lambda: "working" in sink.states(), what="the first check")
        [saved] = pending.read(workspace).records
        assert saved.source == "push" and "CreateTaskPushNotificationConfig" in js03.methods
        js03.release("p")
        [(_, text)] = await delivery.wait_for(1)
        assert "released p" in text and "(completed)" in text
        assert "ok" in receiver.results  # the 0.3 task bodies were taken
        assert clock.monotonic() == 0  # no safety check ran: the pushes woke the watch
        await eventually(lambda: "DeleteTaskPushNotificationConfig" in js03.methods, what="push config removal")


async def test_cancel_running_interrupted_and_finished(http, workspace: Workspace, js03: JsAgent) -> None:
    """Over HTTP+JSON the finished task's refusal (409) read "could not reach the agent" before
    `LenientCompatRestTransport`."""
    clock = FakeClock()
    tool = make_tool(http, workspace, clock=clock)
    running = await _past_the_wait(tool, clock, {"agent": "j3", "message": "hold c"})
    out = await tool.run("cancel", {"agent": "j3", "taskId": running["taskId"]}, TARGET)
    assert out.get("state") == "canceled" and out["text"] == "cancelled by request", out
    asked = await tool.run("send", {"agent": "j3", "message": "ask"}, TARGET)
    out = await tool.run("cancel", {"agent": "j3", "taskId": asked["taskId"]}, TARGET)
    assert out.get("state") == "canceled" and out["text"] == "Task cancellation requested by user.", out
    done = await tool.run("send", {"agent": "j3", "message": "hello"}, TARGET)
    out = await tool.run("cancel", {"agent": "j3", "taskId": done["taskId"]}, TARGET)
    assert out.get("state") == "completed" and "already finished" in out["note"], out
    assert pending.read(workspace).records == []


async def test_a_task_forgotten_by_a_restart_is_unknown(http, workspace: Workspace, js03: JsAgent) -> None:
    """Over HTTP+JSON the agent's 404 `{"code": -32001}` read as a missing method before
    `LenientCompatRestTransport`."""
    tool = make_tool(http, workspace)
    done = await tool.run("send", {"agent": "j3", "message": "hello"}, TARGET)
    js03.forget()
    out = await tool.run("status", {"agent": "j3", "taskId": done["taskId"]}, TARGET)
    assert out.get("error") == 'agent "j3" does not know that task (it may have been deleted)', out


async def test_no_list_tasks_is_asked(remote: Remote, js03: JsAgent) -> None:
    conn = await remote.connect(AgentEntry(name="j3", url=js03.url))
    with pytest.raises(RemoteError) as e:
        await conn.list_tasks()
    assert e.value.kind == "not_listing" and "A2A 0.3" in str(e.value)
    assert "ListTasks" not in js03.methods and js03.methods == []


@pytest.mark.parametrize("rest", [False, True], ids=BINDINGS)
async def test_a_watch_whose_task_the_agent_forgot_ends_lost(
    workspace: Workspace, remote: Remote, make_js03_agent: Callable[..., JsAgent], rest: bool, clock, registry_for
) -> None:
    """The agent restarted (its in-memory store forgot the task): the polling watch ends "lost" with one notice,
    over both bindings (over HTTP+JSON the 404 read as a missing method, retried for ever, before
    `LenientCompatRestTransport`)."""
    agent = make_js03_agent(rest=rest, streaming=False, push=False)
    write_agents(workspace, entry("j3", agent))
    reg, delivery, _ = registry_for(workspace)
    task = await start_task(remote, workspace, "j3", "hold r")
    await reg.arm(workspace, await add_record(workspace, task, "j3", clock))
    await clock.until(lambda s: len(s) == 1)
    await clock.advance(15)  # the first check: working
    await clock.until(lambda s: len(s) == 2)
    agent.forget()
    await clock.advance(30)
    [(_, text)] = await delivery.wait_for(1)
    assert text.startswith(f'[A2A: "j3" no longer knows task {task.id[:4]}'), text
    assert pending.read(workspace).records == [] and len(reg) == 0


async def test_a_subscription_to_a_task_the_agent_forgot_ends_lost(
    workspace: Workspace, remote: Remote, make_js03_agent: Callable[..., JsAgent], clock, registry_for
) -> None:
    """Restored by subscribe after the agent restarted: the SDK answers with the stream already open, its error
    (-32001) an SSE `error` event, which the console read as a failed stream, retried, before
    `LenientCompatJsonRpcTransport` read the error in it. The watch ends at once."""
    agent = make_js03_agent(push=False)
    write_agents(workspace, entry("j3", agent))
    task = await start_task(remote, workspace, "j3", "hold q")
    await add_record(workspace, task, "j3", clock, source="subscribe")
    agent.forget()
    reg, delivery, _ = registry_for(workspace)
    await reg.start([workspace])
    [(_, text)] = await delivery.wait_for(1)
    assert text.startswith(f'[A2A: "j3" no longer knows task {task.id[:4]}'), text
    assert agent.methods == ["SendMessage", "SubscribeToTask", "GetTask"] and clock.monotonic() == 0


async def test_rest_a_subscription_to_a_task_the_agent_forgot_ends_lost_at_once(
    workspace: Workspace, remote: Remote, make_js03_agent: Callable[..., JsAgent], clock, registry_for
) -> None:
    """Over HTTP+JSON the SDK answers a subscription it refuses before the first event with HTTP 500 ("Bug: toJson
    serializer and body must be provided", its own bug) whatever the error: the console confirms a failed stream
    with GetTask at once, whose 404 ends the watch."""
    agent = make_js03_agent(rest=True, push=False)
    write_agents(workspace, entry("j3", agent))
    task = await start_task(remote, workspace, "j3", "hold q")
    await add_record(workspace, task, "j3", clock, source="subscribe")
    agent.forget()
    reg, delivery, _ = registry_for(workspace)
    await reg.start([workspace])
    [(_, text)] = await delivery.wait_for(1)
    assert text.startswith(f'[A2A: "j3" no longer knows task {task.id[:4]}'), text
    assert agent.methods == ["SendMessage", "SubscribeToTask", "GetTask"]


@pytest.mark.parametrize("bearer", [False, True])
async def test_a_key_goes_as_the_0_3_card_says(
    http, workspace: Workspace, make_js03_agent: Callable[..., JsAgent], bearer: bool
) -> None:
    agent = make_js03_agent(key="k-03", bearer_only=bearer)
    write_agents(workspace, entry("j3", agent, key="k-03"))
    done = await make_tool(http, workspace).run("send", {"agent": "j3", "message": "hello key"}, TARGET)
    assert done.get("state") == "completed", done
    headers = agent.requests[-1][2]
    assert (headers.get("authorization"), headers.get("x-api-key")) == (
        ("Bearer k-03", None) if bearer else (None, "k-03")
    )
