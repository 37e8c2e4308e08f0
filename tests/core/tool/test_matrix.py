"""The matrix: send, status, cancel, multi-turn and watch (push, subscribe, poll, restore after a restart) against
every implementation of tests/support/implementations.py (a2a-sdk 1.3, @a2a-js/sdk 1.3 and a2a-sdk 0.3, each over
JSON-RPC and HTTP+JSON, and fasta2a, JSON-RPC only), real agents on loopback.

A wire behaviour that differs from the plain 1.0 one is a named quirk of the implementation (`QUIRKS`), asserted
here as what the agent does, next to what the console does about it; docs/tool.md's compatibility table has a row
for each (checked by `test_every_quirk_has_a_row_in_the_compatibility_table`).

Every implementation runs every scenario: they cost a few tenths of a second each (the agents of the JS and 0.3 SDKs
live in one process per session). The scripted quirks no real implementation here shows (a stream that ends right
after the snapshot) run one representative scenario each, a subscribe watch, on an a2a-sdk 1.3 agent.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from a2aconsole.core import pending
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.remote import RemoteError
from a2aconsole.core.remote.client import Remote
from a2aconsole.core.remote.values import TaskSnapshot
from tests.support.agents import PDF_BYTES
from tests.support.clock import FakeClock
from tests.support.implementations import IMPLEMENTATIONS, QUIRKS, Implementation
from tests.support.toolkit import TARGET, TargetTool, entry, make_tool, write_agents
from tests.support.watching import PushReceiver, add_record, eventually, settled_at_agent, start_task

DOCS = Path(__file__).resolve().parents[3] / "docs" / "tool.md"
Make = Callable[..., Any]


@pytest.fixture(params=IMPLEMENTATIONS, ids=lambda i: i.name)
def impl(request: pytest.FixtureRequest) -> Implementation:
    return request.param


@pytest.fixture
def make(impl: Implementation, request: pytest.FixtureRequest) -> Make:
    """The implementation's agent factory, its own options (HTTP+JSON) given to every agent."""
    factory = request.getfixturevalue(impl.fixture)
    return lambda **options: factory(**impl.options, **options)


def use(workspace: Workspace, agent: Any) -> None:
    write_agents(workspace, entry("bot", agent))


async def subscribed(agent: Any, task_id: str, calls: int = 1) -> None:
    """Wait until a subscription to the task is open: on a 0.3 agent (it sends nothing first) until it receives the
    task's events, elsewhere until the agent took `calls` SubscribeToTask calls."""
    streaming_to = getattr(agent, "streaming_to", None)
    if streaming_to is not None:
        await eventually(lambda: streaming_to(task_id), what=f"a subscription to {task_id}")
    else:
        await eventually(lambda: agent.methods.count("SubscribeToTask") >= calls, what="the subscription")


def has(impl: Implementation, quirk: str) -> bool:
    return quirk in impl.quirks


async def connection(remote: Remote, workspace: Workspace) -> Any:
    found = workspace.read_agents().get("bot")
    assert found is not None
    return await remote.connect(found)


async def past_the_wait(tool: TargetTool, clock: FakeClock, args: dict[str, Any]) -> dict[str, Any]:
    """A send whose task outlives the wait (the fake clock run past `wait_seconds`): its answer."""
    run = asyncio.create_task(tool.run("send", args, TARGET))
    await clock.wait_for_sleepers(1)
    await clock.advance(5)
    return await asyncio.wait_for(run, 10)


# send, status, cancel, multi-turn (the tool)


async def test_send_status_file_and_failure(impl: Implementation, make: Make, http, workspace: Workspace) -> None:
    use(workspace, make())
    tool = make_tool(http, workspace)
    done = await tool.run("send", {"agent": "bot", "message": "hello there"}, TARGET)
    assert done.get("state") == "completed" and done["text"] == "echo: hello there", done
    status = await tool.run("status", {"agent": "bot", "taskId": done["taskId"]}, TARGET)
    assert status["state"] == "completed" and status["text"] == "echo: hello there", status
    report = await tool.run("send", {"agent": "bot", "message": "file"}, TARGET)
    assert report["state"] == "completed" and report["text"] == "here is the report", report
    assert (workspace.root / report["files"][0]).read_bytes() == PDF_BYTES
    failed = await tool.run("send", {"agent": "bot", "message": "fail"}, TARGET)
    assert failed["state"] == "failed" and failed["text"] == "boom: cannot do that", failed
    assert pending.read(workspace).records == []


async def test_send_reply_is_submitted_and_followed(
    impl: Implementation, make: Make, http, workspace: Workspace, remote: Remote
) -> None:
    """send-answers-submitted: every implementation answers the console's SendMessage (returnImmediately) with the
    task submitted, before any work; the send follows the task to its result within the wait."""
    agent = make()
    use(workspace, agent)
    reply = await start_task(remote, workspace, "bot", "hold first")
    # reply-at-first-event: the task as the agent's first event left it (the test agent's first is `working`)
    assert reply.state == ("working" if has(impl, "reply-at-first-event") else "submitted")
    agent.release("first")
    clock = FakeClock()
    tool = make_tool(http, workspace, clock=clock)
    run = asyncio.create_task(tool.run("send", {"agent": "bot", "message": "hold second"}, TARGET))
    await eventually(lambda: len(agent.received) == 2, what="the second message at the agent")
    agent.release("second")
    done = await asyncio.wait_for(run, 10)
    assert done.get("state") == "completed" and done["text"] == "released second", done


async def test_cancel(impl: Implementation, make: Make, http, workspace: Workspace) -> None:
    use(workspace, make())
    clock = FakeClock()
    tool = make_tool(http, workspace, clock=clock)
    sent = await past_the_wait(tool, clock, {"agent": "bot", "message": "hold c"})
    assert sent.get("state") == "working", sent
    out = await tool.run("cancel", {"agent": "bot", "taskId": sent["taskId"]}, TARGET)
    if has(impl, "cancel-answers-working"):  # a cancel only requested: the watch goes on until the task settles
        assert out.get("state") == "working" and out["watch"] == "goes on", out

        async def canceled() -> bool:
            status = await tool.run("status", {"agent": "bot", "taskId": sent["taskId"]}, TARGET)
            return status.get("state") == "canceled"

        await eventually(canceled)
    else:
        assert out.get("state") == "canceled", out
    status = await tool.run("status", {"agent": "bot", "taskId": sent["taskId"]}, TARGET)
    assert status["state"] == "canceled" and pending.read(workspace).records == [], status


async def test_multi_turn(impl: Implementation, make: Make, http, workspace: Workspace) -> None:
    use(workspace, make())
    tool = make_tool(http, workspace)
    asked = await tool.run("send", {"agent": "bot", "message": "ask"}, TARGET)
    assert asked.get("state") == "input-required" and asked["question"] == "Which colour?", asked
    follow_up = {"agent": "bot", "message": "red", "taskId": asked["taskId"], "contextId": asked["contextId"]}
    answer = await tool.run("send", follow_up, TARGET)
    assert answer.get("state") == "completed" and answer["text"] == "got answer: red", answer
    if has(impl, "new-task-per-message"):  # the answer says so, and the new task is the one followed
        assert answer["taskId"] != asked["taskId"] and answer["previousTaskId"] == asked["taskId"], answer
        assert answer["newTask"].startswith(f"the agent started a new task {answer['taskId']}")
    else:
        assert answer["taskId"] == asked["taskId"] and "newTask" not in answer, answer


# watches (the registry)


async def test_watch_push(
    impl: Implementation, make: Make, workspace: Workspace, remote: Remote, clock, registry_for
) -> None:
    if not impl.push:
        agent = make()
        use(workspace, agent)
        assert (await connection(remote, workspace)).push is False  # its card says so: watches stream or poll
        return
    agent = make(streaming=False)
    use(workspace, agent)
    holder: list[Any] = []
    async with PushReceiver(lambda *a: holder[0].on_push(*a)) as receiver:
        reg, delivery, sink = registry_for(workspace, push_base_url=receiver.url)
        holder.append(reg)
        task = await start_task(remote, workspace, "bot", "hold p")
        await reg.arm(workspace, await add_record(workspace, task, "bot", clock, source="poll"))
        await sink.until(lambda: "working" in sink.states(), what="the first check")
        assert pending.read(workspace).records[0].source == "push"
        assert "CreateTaskPushNotificationConfig" in agent.methods
        agent.release("p")
        [(_, text)] = await delivery.wait_for(1)
        assert "released p" in text and "(completed)" in text
        # the agent's own push woke the watch (the clock never moved); its answer is recorded once sent
        await eventually(lambda: "ok" in receiver.results, what="the push answered", seen=lambda: receiver.results)
    assert pending.read(workspace).records == []


async def test_watch_subscribe(
    impl: Implementation, make: Make, workspace: Workspace, remote: Remote, clock, registry_for
) -> None:
    agent = make(push=False)
    use(workspace, agent)
    reg, delivery, _ = registry_for(workspace)
    task = await start_task(remote, workspace, "bot", "hold s")
    await reg.arm(workspace, await add_record(workspace, task, "bot", clock, source="subscribe"))
    await subscribed(agent, task.id)
    agent.release("s")
    [(_, text)] = await delivery.wait_for(1)
    assert "released s" in text and "(completed)" in text
    assert pending.read(workspace).records == []


async def test_watch_poll(
    impl: Implementation, make: Make, workspace: Workspace, remote: Remote, clock, registry_for
) -> None:
    if not impl.options_offered:  # a stock fasta2a card always streams: its watches subscribe
        use(workspace, make())
        assert (await connection(remote, workspace)).streaming is True
        return
    agent = make(streaming=False, push=False)
    use(workspace, agent)
    reg, delivery, _ = registry_for(workspace)
    task = await start_task(remote, workspace, "bot", "hold q")
    await reg.arm(workspace, await add_record(workspace, task, "bot", clock))
    await clock.until(lambda s: s == [15.0])
    agent.release("q")
    await settled_at_agent(await connection(remote, workspace), task.id, "completed")
    await clock.advance(15)
    [(_, text)] = await delivery.wait_for(1)
    assert "released q" in text and "SubscribeToTask" not in agent.methods


async def test_watch_restored_after_a_restart(
    impl: Implementation, make: Make, workspace: Workspace, remote: Remote, clock, registry_for
) -> None:
    """Two watches in pending.json when the worker starts: a task that ended while it was down is delivered at
    once, a running one when it ends."""
    agent = make(push=False)
    use(workspace, agent)
    done = await start_task(remote, workspace, "bot", "hello while we were down")
    await settled_at_agent(await connection(remote, workspace), done.id, "completed")
    running = await start_task(remote, workspace, "bot", "hold r")
    await add_record(workspace, done, "bot", clock, source="subscribe")
    await add_record(workspace, running, "bot", clock, source="subscribe")
    reg, delivery, _ = registry_for(workspace)
    await reg.start([workspace])
    [(_, first)] = await delivery.wait_for(1)
    assert f"task {done.id} (completed)" in first and "echo: hello while we were down" in first
    await subscribed(agent, running.id, calls=2)
    agent.release("r")
    second = (await delivery.wait_for(2))[1][1]
    assert f"task {running.id} (completed)" in second and "released r" in second
    assert pending.read(workspace).records == []


# the quirks, each asserted as what the agent does, beside what the console does


async def _events(conn: Any, task_id: str, *, first: bool = False) -> list[Any]:
    """Every event of one SubscribeToTask (`first`: its first only, for a stream that stays open), or the RemoteError
    it ended with (last)."""
    seen: list[Any] = []
    try:
        async with contextlib.aclosing(conn.subscribe(task_id)) as stream:
            async for ev in stream:
                seen.append(ev)
                if first:
                    break
    except RemoteError as e:
        seen.append(e)
    return seen


async def test_subscribe_first_event(impl: Implementation, make: Make, workspace: Workspace, remote: Remote) -> None:
    """subscribe-starts-without-task: the stream brings the task's events, not the task first. The console reads a
    stream's events against the task it already has (the send's first GetTask, the watch's state)."""
    agent = make(push=False)
    use(workspace, agent)
    conn = await connection(remote, workspace)
    task = await start_task(remote, workspace, "bot", "hold f")
    reader = asyncio.ensure_future(_events(conn, task.id))
    await subscribed(agent, task.id)
    agent.release("f")
    seen = await asyncio.wait_for(reader, 10)
    if has(impl, "subscribe-starts-without-task"):
        assert seen and not any(isinstance(ev, TaskSnapshot) for ev in seen), seen
    else:
        assert isinstance(seen[0], TaskSnapshot), seen
    await settled_at_agent(conn, task.id, "completed")


async def test_subscribe_to_a_question(
    impl: Implementation, make: Make, workspace: Workspace, remote: Remote, clock, registry_for
) -> None:
    """subscribe-idle-not-found (0.3 JSON-RPC) and subscribe-refusal-breaks-stream (0.3 HTTP+JSON): a task asking a
    question has no work running, and SubscribeToTask is refused. The watch checks with GetTask at once and delivers
    the question, the clock never moved (no retry naps)."""
    agent = make(push=False)
    use(workspace, agent)
    conn = await connection(remote, workspace)
    task = await start_task(remote, workspace, "bot", "ask")
    await settled_at_agent(conn, task.id, "input-required")
    seen = await _events(conn, task.id, first=True)
    if has(impl, "subscribe-idle-not-found"):
        assert isinstance(seen[0], RemoteError) and seen[0].kind == "not_found", seen
    elif has(impl, "subscribe-refusal-breaks-stream"):
        assert isinstance(seen[0], RemoteError) and seen[0].kind == "network", seen
    else:
        assert isinstance(seen[0], TaskSnapshot) and seen[0].state == "input-required", seen
    reg, delivery, _ = registry_for(workspace)
    await reg.arm(workspace, await add_record(workspace, task, "bot", clock, source="subscribe"))
    [(_, text)] = await delivery.wait_for(1)
    assert "(input-required)" in text and "Which colour?" in text and clock.monotonic() == 0


async def test_a_send_whose_stream_finds_the_task_asking(
    make_py03_agent: Make, http, workspace: Workspace, remote: Remote
) -> None:
    """subscribe-idle-not-found during a send's wait (a2a-sdk 0.3): the task asks its question between the send's
    first check and its stream, which the agent then refuses as not found. The send checks with GetTask and
    answers with the question, not with "does not know that task"."""
    agent = make_py03_agent(push=False)
    use(workspace, agent)
    agent.hold("SubscribeToTask")
    tool = make_tool(http, workspace, clock=FakeClock())
    run = asyncio.create_task(tool.run("send", {"agent": "bot", "message": "later q"}, TARGET))
    await eventually(lambda: "SubscribeToTask" in agent.methods, what="the send's stream")
    agent.release("q")
    await settled_at_agent(await connection(remote, workspace), agent.received[0].task_id, "input-required")
    agent.release("calls")
    asked = await asyncio.wait_for(run, 10)
    assert asked.get("state") == "input-required" and asked["question"] == "Which colour?", asked


async def test_subscribe_to_a_settled_task(
    impl: Implementation, make: Make, workspace: Workspace, remote: Remote, clock, registry_for
) -> None:
    """A task that settled before the watch subscribed (between its check and its stream): 1.0 agents refuse it as
    terminal; subscribe-terminal-invalid-params (0.3 JSON-RPC) answers invalid params, subscribe-refusal-breaks-stream
    (0.3 HTTP+JSON) breaks the stream, subscribe-terminal-snapshot (fasta2a) sends the task and ends. The watch
    delivers the result at once in each case."""
    agent = make(push=False)
    use(workspace, agent)
    conn = await connection(remote, workspace)
    task = await start_task(remote, workspace, "bot", "hello")
    await settled_at_agent(conn, task.id, "completed")
    seen = await _events(conn, task.id)
    first = seen[0]
    if has(impl, "subscribe-terminal-invalid-params"):  # read as the refusal of a settled task it is
        assert isinstance(first, RemoteError) and first.kind == "terminal", seen
        body = {"jsonrpc": "2.0", "id": 1, "method": "tasks/resubscribe", "params": {"id": task.id}}
        async with httpx.AsyncClient() as client:
            answer = (await client.post(agent.url, json=body)).text
        assert '"code":-32602' in answer.replace(" ", "") and "terminal state" in answer, answer
    elif has(impl, "subscribe-refusal-breaks-stream"):
        assert isinstance(first, RemoteError) and first.kind == "network", seen
    elif has(impl, "subscribe-terminal-snapshot"):
        assert isinstance(first, TaskSnapshot) and first.state == "completed", seen
    else:
        assert isinstance(first, RemoteError) and first.kind == "terminal", seen
    reg, delivery, _ = registry_for(workspace)
    await reg.arm(workspace, await add_record(workspace, task, "bot", clock, source="subscribe"))
    [(_, text)] = await delivery.wait_for(1)
    assert "(completed)" in text and "echo: hello" in text and clock.monotonic() == 0


async def test_history_length_zero(
    impl: Implementation, make: Make, http, workspace: Workspace, remote: Remote
) -> None:
    """history-length-0-all: GetTask with `historyLength: 0` answered with the whole history. The console reads a
    GetTask's status and artifacts only, the answer bounded by its budget: the result is the same."""
    use(workspace, make())
    conn = await connection(remote, workspace)
    task = await start_task(remote, workspace, "bot", "hello history")
    await settled_at_agent(conn, task.id, "completed")
    raw = await conn._get_task(task.id, 0)
    assert (len(raw.history) > 0) == has(impl, "history-length-0-all"), raw.history
    status = await make_tool(http, workspace).run("status", {"agent": "bot", "taskId": task.id}, TARGET)
    assert status["state"] == "completed" and status["text"] == "echo: hello history", status


async def test_unknown_method(impl: Implementation, make: Make, workspace: Workspace, remote: Remote) -> None:
    """unknown-method-http-500: a JSON-RPC method the agent does not know answered HTTP 500 (fasta2a), not -32601.
    The console calls no method fasta2a does not know (ListTasks and the push methods it refuses as unsupported);
    any other call answered HTTP 500 is a passing failure, retried."""
    agent = make()
    use(workspace, agent)
    if impl.options.get("rest"):  # no JSON-RPC here: an unknown REST path is a 404
        async with httpx.AsyncClient() as client:
            assert (await client.get(agent.url + "v1/no-such-thing")).status_code == 404
        return
    body = {"jsonrpc": "2.0", "id": 1, "method": "NoSuchMethod", "params": {}}
    async with httpx.AsyncClient() as client:
        resp = await client.post(agent.url, json=body, headers={"A2A-Version": impl.protocol})
    if has(impl, "unknown-method-http-500"):
        assert resp.status_code == 500
        # every method the console calls it knows: ListTasks it refuses as unsupported, the push methods likewise
        with pytest.raises(RemoteError) as refused:
            await (await connection(remote, workspace)).list_tasks()
        assert refused.value.kind == "not_listing" and "unsupported operation" in str(refused.value), refused.value
    else:
        assert resp.status_code == 200 and resp.json()["error"]["code"] == -32601, resp.text


async def test_status_timestamps(impl: Implementation, make: Make, workspace: Workspace, remote: Remote) -> None:
    """naive-timestamps: a status timestamp without a time zone (fasta2a's storage), which the SDK's strict parse
    refuses; the console reads it as UTC (the send and status scenarios above pass over it). status-without-timestamp
    (a2a-sdk 0.3 over HTTP+JSON): none at all; a follow-up's reply is then told stale without it (test_multi_turn)."""
    agent = make()
    use(workspace, agent)
    conn = await connection(remote, workspace)
    task = await start_task(remote, workspace, "bot", "hello time")
    await settled_at_agent(conn, task.id, "completed")
    if impl.options.get("rest"):
        async with httpx.AsyncClient() as client:
            if impl.protocol == "0.3":  # the card's own URL (the JS agent serves HTTP+JSON under its path's /rest)
                card = (await client.get(agent.url + ".well-known/agent-card.json")).json()
                url = f"{card['url'].rstrip('/')}/v1/tasks/{task.id}"
            else:
                url = f"{agent.url}rest/tasks/{task.id}"
            answer = (await client.get(url, headers={"A2A-Version": impl.protocol})).json()
    else:
        method = "tasks/get" if impl.protocol == "0.3" else "GetTask"
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"id": task.id}}
        async with httpx.AsyncClient() as client:
            answer = (await client.post(agent.url, json=body, headers={"A2A-Version": impl.protocol})).json()["result"]
    status = answer.get("task", answer)["status"]
    if has(impl, "status-without-timestamp"):
        assert "timestamp" not in status, status
        assert (await conn.get_task(task.id)).status.at is None
        return
    zoned = bool(re.search(r"(Z|[+-]\d\d:\d\d)$", status["timestamp"]))
    assert zoned != has(impl, "naive-timestamps"), status
    assert (await conn.get_task(task.id)).status.at is not None


async def test_stream_that_ends_after_the_snapshot(
    make_agent, workspace: Workspace, remote: Remote, clock, registry_for
) -> None:
    """stream-ends-after-snapshot (scripted: no implementation here does it, the issue saw it on a 0.3 SDK): every
    SubscribeToTask sends the task and ends. Each end is checked with GetTask at once and counts as a failed stream;
    after three the watch polls, and the result comes."""
    agent = make_agent(push=False, snapshot_streams=True)
    use(workspace, agent)
    reg, delivery, _ = registry_for(workspace)
    task = await start_task(remote, workspace, "bot", "hold e")
    await reg.arm(workspace, await add_record(workspace, task, "bot", clock, source="subscribe"))
    naps = lambda s: [x for x in s if x != 300.0]  # noqa: E731 (the stream cap timers aside)
    await clock.until(lambda s: naps(s) == [5.0])
    await clock.advance(5)
    await clock.until(lambda s: naps(s) == [5.0, 15.0])
    await clock.advance(15)
    await clock.until(lambda s: naps(s) == [5.0, 15.0, 15.0])  # the first poll nap
    assert agent.methods.count("SubscribeToTask") == 3
    agent.release("e")
    await eventually(lambda: task.id in agent.finished, what="the agent to finish")
    await clock.advance(15)
    [(_, text)] = await delivery.wait_for(1)
    assert "released e" in text


# the compatibility table


def _table_quirks() -> dict[str, set[str]]:
    """The quirk each row of docs/tool.md's compatibility table names (its first cell, `quirk-name`), and the
    implementations its second cell names."""
    text = DOCS.read_text()
    section = text.split("## Compatibility", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, set[str]] = {}
    for line in section.splitlines():
        m = re.match(r"\|\s*`([a-z0-9-]+)`\s*\|([^|]*)\|", line)
        if m:
            rows[m.group(1)] = {name.strip() for name in m.group(2).split(",") if name.strip()}
    return rows


def test_every_quirk_has_a_row_in_the_compatibility_table() -> None:
    """Each named case has a row naming the implementations that show it, and each row is a case."""
    rows = _table_quirks()
    assert set(rows) == set(QUIRKS), f"rows without a case: {set(rows) - set(QUIRKS)}, cases without a row: " + str(
        set(QUIRKS) - set(rows)
    )
    for quirk, names in rows.items():
        shown = {i.name for i in IMPLEMENTATIONS if quirk in i.quirks} or {"scripted"}
        assert names == shown, f"{quirk}: the table names {names}, the matrix {shown}"
