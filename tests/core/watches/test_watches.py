"""The watch registry against real loopback agents, on a fake clock: push, subscribe, poll, end, restore.

The tests that follow a task over the wire run against agents on both SDKs (`make_sdk_agent`)."""

from __future__ import annotations

import contextlib
import json
from datetime import timedelta
from typing import Any

import pytest

from a2aconsole.core import pending
from a2aconsole.core.chat import ChatTarget
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.files.atomic import atomic_write
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.tool.tool import A2ATool
from a2aconsole.core.watches.registry import WatchRegistry
from tests.support.agents import TestAgent
from tests.support.watching import (
    PushReceiver,
    add_record,
    eventually,
    settled_at_agent,
    start_task,
)


def use_agent(ws: Workspace, agent: TestAgent, name: str = "bot") -> None:
    ws.save_agents([{"name": name, "url": agent.url}], None)


def pending_ids(ws: Workspace) -> list[str]:
    return [r.watch_id for r in pending.read(ws).records]


async def test_watch_poll_backs_off(make_sdk_agent, workspace, remote, clock, registry_for) -> None:
    agent = make_sdk_agent(streaming=False, push=False)
    use_agent(workspace, agent)
    reg, delivery, _ = registry_for(workspace)
    task = await start_task(remote, workspace, "bot", "hold g")
    rec = await add_record(workspace, task, "bot", clock)
    await reg.arm(workspace, rec)

    schedule = [15.0, 30.0, 60.0, 120.0, 300.0, 300.0]
    for n, step in enumerate(schedule, start=1):
        await clock.until(lambda s, n=n: len(s) == n)
        await clock.advance(step)
    await clock.until(lambda s: len(s) == len(schedule) + 1)
    assert clock.sleeps == [*schedule, 300.0]
    assert agent.methods.count("GetTask") == len(schedule)
    assert reg.snapshot()[0]["source"] == "poll" and reg.snapshot()[0]["state"] == "working"
    assert [w["taskId"] for w in reg.snapshot({("bot", task.id)})] == [task.id]  # one task's watches only
    assert reg.snapshot({("bot", "another-task")}) == [] and reg.snapshot(set()) == []

    agent.release("g")
    await eventually(lambda: task.id in agent.finished, what="the agent to finish")
    await clock.advance(300)
    [(target, text)] = await delivery.wait_for(1)
    assert target == "chat1"
    assert text.startswith(f'[A2A result from "bot", task {task.id} (completed)]')
    assert "released g" in text and f"Context: {task.context_id}" in text
    assert pending_ids(workspace) == [] and len(reg) == 0


async def test_restored_poll_watch_checks_at_once_then_backs_off(
    make_sdk_agent, workspace, remote, clock, registry_for
) -> None:
    """A task that ended while the worker was down is delivered at restore, not after the first 15 s nap (restarts
    less than ~17 s apart never delivered a polled result); a running one then backs off as usual."""
    agent = make_sdk_agent(streaming=False, push=False)
    use_agent(workspace, agent)
    done = await start_task(remote, workspace, "bot", "hello while we were down")
    await eventually(lambda: len(agent.received) == 1, what="the agent to answer")
    running = await start_task(remote, workspace, "bot", "hold p")
    await add_record(workspace, done, "bot", clock)
    await add_record(workspace, running, "bot", clock)
    reg, delivery, _ = registry_for(workspace)

    await reg.start([workspace])
    [(_, text)] = await delivery.wait_for(1)
    assert text.startswith(f'[A2A result from "bot", task {done.id} (completed)]')
    await clock.until(lambda s: s == [15.0])  # the running one: checked once, then the first nap
    assert agent.methods.count("GetTask") == 2
    assert clock.sleeps == [15.0]
    assert [r.task_id for r in pending.read(workspace).records] == [running.id]


async def test_watch_subscribe_delivers_follow_up(make_sdk_agent, workspace, remote, clock, registry_for) -> None:
    agent = make_sdk_agent(push=False)
    use_agent(workspace, agent)
    reg, delivery, sink = registry_for(workspace)
    task = await start_task(remote, workspace, "bot", "hold s")
    rec = await add_record(workspace, task, "bot", clock, source="subscribe")
    await reg.arm(workspace, rec)
    await sink.until(lambda: "working" in sink.states(), what="the stream's snapshot")
    assert agent.methods.count("GetTask") == 0  # the state came from the stream

    agent.release("s")
    [(_, text)] = await delivery.wait_for(1)
    assert "released s" in text and "(completed)" in text
    assert clock.sleeps == [300.0]  # only the stream cap timer: no poll, no retry
    assert agent.methods.count("SubscribeToTask") == 1
    assert pending_ids(workspace) == []
    assert sink.kinds()[0] == "watch.armed" and sink.kinds()[-1] == "delivered"


async def test_watch_push_delivers_follow_up(make_sdk_agent, workspace, remote, clock, registry_for) -> None:
    agent = make_sdk_agent(streaming=False)
    use_agent(workspace, agent)
    holder: list[WatchRegistry] = []
    async with PushReceiver(lambda *a: holder[0].on_push(*a)) as receiver:
        reg, delivery, sink = registry_for(workspace, push_base_url=receiver.url)
        holder.append(reg)
        task = await start_task(remote, workspace, "bot", "hold p")
        rec = await add_record(workspace, task, "bot", clock, source="poll")
        await reg.arm(workspace, rec)
        await sink.until(lambda: "working" in sink.states(), what="the first check")
        [saved] = pending.read(workspace).records
        assert saved.source == "push" and saved.push_token and len(saved.push_token) >= 43
        assert "CreateTaskPushNotificationConfig" in agent.methods

        agent.release("p")
        [(_, text)] = await delivery.wait_for(1)
        assert "released p" in text and "(completed)" in text
        assert "ok" in receiver.results
        # the clock never moved, so no safety check ran: the pushes woke the watch, which confirmed with GetTask
        assert set(clock.sleeps) == {600.0} and clock.monotonic() == 0
        assert agent.methods.count("GetTask") >= 2
        assert pending_ids(workspace) == []
        await eventually(lambda: "DeleteTaskPushNotificationConfig" in agent.methods, what="push config removal")


async def test_watch_push_refused_polls_and_says_why_once(
    make_sdk_agent, workspace, remote, clock, registry_for
) -> None:
    """An agent whose SSRF guard refuses the console's loopback push URL: both watches poll instead, their records
    say poll, and the refusal is kept once for the agent, in the agent's words."""
    agent = make_sdk_agent(streaming=False, safe_push_urls=True)
    use_agent(workspace, agent)
    reg, delivery, _ = registry_for(workspace, push_base_url="http://127.0.0.1:9")
    first = await start_task(remote, workspace, "bot", "hold a")
    second = await start_task(remote, workspace, "bot", "hold b")
    for task in (first, second):
        await reg.arm(workspace, await add_record(workspace, task, "bot", clock, source="poll"))
    await clock.until(lambda s: s.count(15.0) == 2)  # both in their first poll nap
    assert agent.methods.count("CreateTaskPushNotificationConfig") == 2
    assert {r.source for r in pending.read(workspace).records} == {"poll"}
    assert {w["source"] for w in reg.snapshot()} == {"poll"}
    assert all(not w["lastError"] for w in reg.snapshot())  # the agent answered: a refusal, not a failed call
    [refusal] = reg.push_refusals.all()
    assert (refusal.agent, refusal.source) == ("bot", "poll")
    said = "Invalid push notification URL" if isinstance(agent, TestAgent) else "127.0.0.1 is a loopback"
    assert said in refusal.reason and len(refusal.reason) <= 200 and not refusal.reason.startswith("agent ")
    assert refusal.text.startswith("push refused by the agent: ") and refusal.text.endswith("; following by polling")

    agent.release("a")
    await eventually(lambda: first.id in agent.finished, what="the agent to finish")
    await clock.advance(15)
    [(_, text)] = await delivery.wait_for(1)
    assert "released a" in text


async def test_watch_push_bad_token_rejected(make_sdk_agent, workspace, remote, clock, registry_for) -> None:
    agent = make_sdk_agent(streaming=False)
    use_agent(workspace, agent)
    reg, _, sink = registry_for(workspace, push_base_url="http://127.0.0.1:9")
    task = await start_task(remote, workspace, "bot", "hold b")
    rec = await add_record(workspace, task, "bot", clock)
    await reg.arm(workspace, rec)
    await sink.until(lambda: "working" in sink.states(), what="the first check")
    token = pending.read(workspace).records[0].push_token
    body = json.dumps({"statusUpdate": {"taskId": task.id, "status": {"state": "TASK_STATE_COMPLETED"}}}).encode()
    checks = agent.methods.count("GetTask")

    assert await reg.on_push(rec.watch_id, "wrong-token", body) == "not_found"
    assert await reg.on_push(rec.watch_id, None, body) == "not_found"
    assert await reg.on_push(rec.watch_id, token[:-1], body) == "not_found"
    assert await reg.on_push("no-such-watch", token, body) == "not_found"
    other = json.dumps({"statusUpdate": {"taskId": "another-task"}}).encode()
    assert await reg.on_push(rec.watch_id, token, other) == "bad_request"
    assert await reg.on_push(rec.watch_id, token, b"not json") == "bad_request"
    assert await reg.on_push(rec.watch_id, token, b"[1, 2]") == "bad_request"
    assert agent.methods.count("GetTask") == checks  # nothing woke the watch
    assert rec.watch_id in reg

    # the good token wakes it: it confirms with GetTask, sees `working`, and keeps watching
    assert await reg.on_push(rec.watch_id, token, body) == "ok"
    await eventually(lambda: agent.methods.count("GetTask") == checks + 1, what="the confirming check")
    assert rec.watch_id in reg and pending_ids(workspace) == [rec.watch_id]


async def test_watch_timeout_delivers_notice(make_agent, workspace, remote, clock, registry_for) -> None:
    agent = make_agent(streaming=False, push=False)
    use_agent(workspace, agent)
    reg, delivery, sink = registry_for(workspace, watch_timeout=600.0)
    task = await start_task(remote, workspace, "bot", "hold t")
    rec = await add_record(workspace, task, "bot", clock)
    await reg.arm(workspace, rec)
    for n, step in enumerate([15.0, 30.0, 60.0, 120.0, 300.0, 75.0], start=1):
        await clock.until(lambda s, n=n: len(s) == n)
        assert clock.sleeps[-1] == step
        await clock.advance(step)
    [(_, text)] = await delivery.wait_for(1)
    assert text == (
        f"bot gave no result for task {task.id} within 10min (timed out); you can check it with action=status"
    )
    assert pending_ids(workspace) == [] and len(reg) == 0
    assert [e.data["reason"] for e in sink.events if e.kind == "watch.ended"] == ["timeout"]


async def test_watch_timeout_text_says_24h(make_agent, workspace, remote, clock, registry_for) -> None:
    agent = make_agent(streaming=False, push=False)
    use_agent(workspace, agent)
    reg, delivery, _ = registry_for(workspace)
    task = await start_task(remote, workspace, "bot", "hold old")
    two_days_ago = (clock.now() - timedelta(days=2)).isoformat()
    await add_record(workspace, task, "bot", clock)
    async with pending.transaction(workspace) as tx:
        tx.edit(tx.records[0].watch_id).started_at = two_days_ago
    await reg.start([workspace])  # restored a day after its deadline: the notice goes out at once
    [(_, text)] = await delivery.wait_for(1)
    assert text == (
        f"bot gave no result for task {task.id} within 24h (timed out); you can check it with action=status"
    )


async def test_watch_restore_from_pending_file(make_sdk_agent, workspace, remote, clock, registry_for) -> None:
    agent = make_sdk_agent(streaming=True, push=True)
    use_agent(workspace, agent)
    done = await start_task(remote, workspace, "bot", "hello while we were down")
    await eventually(lambda: len(agent.received) == 1)
    running = await start_task(remote, workspace, "bot", "hold r")
    pushed = await add_record(workspace, done, "bot", clock, source="push", push_token="t" * 43)
    streamed = await add_record(workspace, running, "bot", clock, source="subscribe")
    kept = await add_record(workspace, done, "bot", clock, target="chat1", undelivered="[kept result]")
    reg, delivery, sink = registry_for(workspace, push_base_url="http://127.0.0.1:9")
    armed_at_flush: list[set[str]] = []
    deliver = delivery.deliver

    async def recording(target: str, text: str, record: Any = None) -> bool:
        if text == "[kept result]":
            armed_at_flush.append({w["watchId"] for w in reg.snapshot()})
        return await deliver(target, text, record)

    delivery.deliver = recording  # type: ignore[method-assign]

    await reg.start([workspace])
    delivered = await delivery.wait_for(2)
    texts = sorted((t for _, t in delivered), key=lambda t: t != "[kept result]")
    assert texts[0] == "[kept result]"
    assert texts[1].startswith(f'[A2A result from "bot", task {done.id} (completed)]')
    assert "echo: hello while we were down" in texts[1]
    assert pending_ids(workspace) == [streamed.watch_id]
    assert [w["watchId"] for w in reg.snapshot()] == [streamed.watch_id]
    # every watch was re-armed before the kept result was flushed
    assert len(armed_at_flush) == 1 and streamed.watch_id in armed_at_flush[0]
    assert "watch.armed" not in sink.kinds()  # restoring is not arming anew: no duplicate history
    assert agent.methods.count("GetTask") >= 1  # the push watch checked at once
    assert pushed.watch_id not in reg and kept.watch_id not in pending_ids(workspace)


async def test_watch_restored_push_without_url_subscribes(
    make_sdk_agent, workspace, remote, clock, registry_for
) -> None:
    agent = make_sdk_agent(streaming=True, push=True)
    use_agent(workspace, agent)
    task = await start_task(remote, workspace, "bot", "hold u")
    rec = await add_record(workspace, task, "bot", clock, source="push", push_token="x" * 43)
    reg, delivery, sink = registry_for(workspace)  # no push base URL
    await reg.start([workspace])
    await sink.until(lambda: "working" in sink.states(), what="the stream's snapshot")
    assert pending.read(workspace).records[0].source == "subscribe"
    assert reg.snapshot()[0]["source"] == "subscribe"
    agent.release("u")
    [(_, text)] = await delivery.wait_for(1)
    assert "released u" in text
    assert rec.watch_id not in pending_ids(workspace)


async def test_watch_no_live_session_delivered_on_next_session_start(
    make_agent, workspace, remote, clock, registry_for
) -> None:
    agent = make_agent(streaming=False, push=False)
    use_agent(workspace, agent)
    reg, delivery, sink = registry_for(workspace, available=False)
    task = await start_task(remote, workspace, "bot", "hello later")
    rec = await add_record(workspace, task, "bot", clock)
    await reg.arm(workspace, rec)
    await clock.until(lambda s: s == [15.0])
    await clock.advance(15)
    await delivery.wait_attempts(1)
    await sink.until(lambda: "undelivered" in sink.kinds())
    [kept] = pending.read(workspace).records
    assert kept.watch_id == rec.watch_id and kept.undelivered and "echo: hello later" in kept.undelivered
    assert delivery.delivered == []

    delivery.available = True  # the chat's session starts
    flush = __import__("asyncio").ensure_future(reg.flush(ChatTarget("chat1", workspace)))
    await clock.until(lambda s: s[-1] == 1.0)
    await clock.advance(1.0)
    assert await flush == 1
    [(_, text)] = delivery.delivered
    assert text == kept.undelivered
    assert pending_ids(workspace) == []


async def test_watch_undelivered_retried_with_backoff(make_agent, workspace, remote, clock, registry_for) -> None:
    agent = make_agent(streaming=False, push=False)
    use_agent(workspace, agent)
    reg, delivery, _ = registry_for(workspace, available=False)
    task = await start_task(remote, workspace, "bot", "hello retry")
    await reg.arm(workspace, await add_record(workspace, task, "bot", clock))
    await clock.until(lambda s: s == [15.0])
    await clock.advance(15)
    await clock.until(lambda s: s == [15.0, 30.0])
    await clock.advance(30)
    await clock.until(lambda s: s == [15.0, 30.0, 60.0])
    delivery.available = True
    await clock.advance(60)
    await delivery.wait_for(1)
    assert pending_ids(workspace) == []


async def test_watch_agent_removed_ends_watch(make_agent, workspace, remote, clock, registry_for) -> None:
    agent = make_agent(streaming=False, push=False)
    use_agent(workspace, agent)
    reg, delivery, sink = registry_for(workspace)
    task = await start_task(remote, workspace, "bot", "hold gone")
    rec = await add_record(workspace, task, "bot", clock)
    await reg.arm(workspace, rec)
    await clock.until(lambda s: s == [15.0])
    workspace.save_agents([], None)
    await clock.advance(15)
    [(_, text)] = await delivery.wait_for(1)
    assert 'agent "bot" was removed from agents.json' in text and task.id in text
    assert pending_ids(workspace) == [] and len(reg) == 0
    assert [e.data["reason"] for e in sink.events if e.kind == "watch.ended"] == ["agent removed"]
    assert agent.methods.count("GetTask") == 0


async def test_watch_malformed_agents_file_is_a_passing_failure(
    make_agent, workspace, remote, clock, registry_for
) -> None:
    agent = make_agent(streaming=False, push=False)
    use_agent(workspace, agent)
    good = workspace.agents_path.read_bytes()
    reg, delivery, _ = registry_for(workspace)
    task = await start_task(remote, workspace, "bot", "hold m")
    await reg.arm(workspace, await add_record(workspace, task, "bot", clock))
    await clock.until(lambda s: s == [15.0])
    atomic_write(workspace.agents_path, b"[{broken")
    await clock.advance(15)
    await clock.until(lambda s: s == [15.0, 30.0])
    [row] = reg.snapshot()
    assert "agents.json is not valid JSON" in row["lastError"]
    assert delivery.delivered == []

    atomic_write(workspace.agents_path, good)
    agent.release("m")
    await eventually(lambda: task.id in agent.finished)
    await clock.advance(30)
    [(_, text)] = await delivery.wait_for(1)
    assert "released m" in text


async def test_watch_reconnects_when_entry_changes(make_sdk_agent, workspace, remote, clock, registry_for) -> None:
    agent = make_sdk_agent(streaming=False, push=False, key="k1")
    good, bad = {"name": "bot", "url": agent.url, "key": "k1"}, {"name": "bot", "url": agent.url, "key": "wrong"}
    reg, delivery, _ = registry_for(workspace)
    workspace.save_agents([good], None)
    task = await start_task(remote, workspace, "bot", "hello keyed")
    workspace.save_agents([bad], None)
    await reg.arm(workspace, await add_record(workspace, task, "bot", clock))
    await clock.until(lambda s: s == [15.0])
    await clock.advance(15)
    await clock.until(lambda s: s == [15.0, 30.0])
    assert "key" in reg.snapshot()[0]["lastError"]  # refused with the wrong key: a passing failure
    workspace.save_agents([good], None)  # the owner fixes the key: the next check reconnects
    await clock.advance(30)
    [(_, text)] = await delivery.wait_for(1)
    assert "echo: hello keyed" in text and "k1" not in text


async def test_stream_cap_reopens_without_counting_a_failure(
    make_sdk_agent, workspace, remote, clock, registry_for
) -> None:
    agent = make_sdk_agent(push=False)
    use_agent(workspace, agent)
    reg, delivery, sink = registry_for(workspace)
    task = await start_task(remote, workspace, "bot", "hold cap")
    await reg.arm(workspace, await add_record(workspace, task, "bot", clock, source="subscribe"))
    for n in range(1, 5):
        await eventually(lambda n=n: agent.methods.count("SubscribeToTask") == n, what=f"subscription {n}")
        await clock.until(lambda s, n=n: len(s) == n)
        await clock.advance(300)
    await eventually(lambda: agent.methods.count("SubscribeToTask") == 5, what="subscription 5")
    assert clock.sleeps == [300.0] * 5  # no retry naps: a cap is a pause, not a failure
    assert agent.methods.count("GetTask") == 4  # each pause checks the task
    assert reg.snapshot()[0]["source"] == "subscribe"
    agent.release("cap")
    [(_, text)] = await delivery.wait_for(1)
    assert "released cap" in text


@pytest.mark.parametrize("refused", [False, True], ids=["no-push", "push-refused"])
async def test_three_stream_failures_fall_back_to_polling(
    make_agent, workspace, remote, clock, registry_for, refused: bool
) -> None:
    """Also after a refused push: its row then says it follows by polling, not by the stream it fell back to first."""
    agent = make_agent(push=refused, drop_streams=True, safe_push_urls=refused)
    use_agent(workspace, agent)
    reg, delivery, sink = registry_for(workspace, push_base_url="http://127.0.0.1:9" if refused else None)
    task = await start_task(remote, workspace, "bot", "hold drop")
    rec = await add_record(workspace, task, "bot", clock, source="subscribe")
    await reg.arm(workspace, rec)
    naps = lambda s: [x for x in s if x != 300.0]  # noqa: E731 (the stream cap timers aside)
    await clock.until(lambda s: naps(s) == [5.0])
    await clock.advance(5)
    await clock.until(lambda s: naps(s) == [5.0, 15.0])
    await clock.advance(15)
    await clock.until(lambda s: naps(s) == [5.0, 15.0, 15.0])  # the first poll nap
    assert agent.methods.count("SubscribeToTask") == 3
    assert pending.read(workspace).records[0].source == "poll"
    assert reg.snapshot()[0]["source"] == "poll"
    said = reg.snapshot()[0]["pushRefused"]
    assert said.endswith("; following by polling") if refused else said == ""
    assert any(e.kind == "watch.update" and e.data.get("source") == "poll" for e in sink.events)
    agent.release("drop")
    await eventually(lambda: task.id in agent.finished)
    # The poll nap ends and the check finds the result. On a loaded machine that check can fail (its card fetch
    # or GetTask over its real-time timeout): the watch then naps again, so time moves on until it delivers.
    for step in (15.0, 30.0, 60.0):
        await clock.advance(step)
        with contextlib.suppress(TimeoutError):
            await eventually(lambda: len(delivery.delivered) == 1, timeout=10, what="the polled result")
            break
    [(_, text)] = await delivery.wait_for(1)
    assert "released drop" in text


async def test_cancel_rearms_when_remote_unreachable(make_sdk_agent, workspace, remote, clock, registry_for) -> None:
    agent = make_sdk_agent(streaming=False, push=False)
    use_agent(workspace, agent)
    reg, delivery, _ = registry_for(workspace)
    task = await start_task(remote, workspace, "bot", "hold c")
    rec = await add_record(workspace, task, "bot", clock, push_token="tok" * 15)
    await reg.arm(workspace, rec)
    await clock.until(lambda s: s == [15.0])
    workspace.save_agents([{"name": "bot", "url": "http://127.0.0.1:9/"}], None)  # a port nobody listens on
    tool = A2ATool(remote, ClientSettings(), reg, clock=clock)

    out = await tool.run("cancel", {"agent": "bot", "taskId": task.id}, ChatTarget("chat1", workspace))
    assert out["error"].endswith("Could not reach the agent; the watch goes on")
    [back] = pending.read(workspace).records
    assert (back.watch_id, back.push_token, back.started_at) == (rec.watch_id, rec.push_token, rec.started_at)
    assert rec.watch_id in reg

    use_agent(workspace, agent)  # reachable again: the cancel goes through and the watch ends for good
    out = await tool.run("cancel", {"agent": "bot", "taskId": task.id}, ChatTarget("chat1", workspace))
    assert out.get("state") == "canceled", out
    assert pending_ids(workspace) == [] and rec.watch_id not in reg
    assert delivery.delivered == []


async def test_stop_keeps_records_and_starts_nothing(make_agent, workspace, remote, clock, registry_for) -> None:
    agent = make_agent(streaming=False, push=False)
    use_agent(workspace, agent)
    reg, delivery, _ = registry_for(workspace)
    task = await start_task(remote, workspace, "bot", "hold x")
    rec = await add_record(workspace, task, "bot", clock)
    kept = await add_record(workspace, task, "bot", clock, target="chat1", undelivered="kept")
    await reg.stop()
    await reg.stop()  # idempotent
    await reg.start([workspace])
    await reg.arm(workspace, rec)
    assert len(reg) == 0 and clock.sleeps == [] and delivery.attempts == 0
    assert pending_ids(workspace) == [rec.watch_id, kept.watch_id]


async def test_a_chat_watches_a_task_at_most_once(make_agent, workspace, remote, clock, registry_for) -> None:
    agent = make_agent(streaming=False, push=False)
    use_agent(workspace, agent)
    reg, _, _ = registry_for(workspace)
    task = await start_task(remote, workspace, "bot", "hold once")
    first = await add_record(workspace, task, "bot", clock)
    second = await add_record(workspace, task, "bot", clock)
    other_chat = await add_record(workspace, task, "bot", clock, target="chat2")
    for rec in (first, second, other_chat):
        await reg.arm(workspace, rec)
    assert pending_ids(workspace) == [first.watch_id, other_chat.watch_id]
    assert {w["watchId"] for w in reg.snapshot()} == {first.watch_id, other_chat.watch_id}
    assert await reg.stop_watching(workspace, "chat1", "bot", task.id) == first
    assert pending_ids(workspace) == [other_chat.watch_id] and first.watch_id not in reg


async def test_watch_saves_file_artifacts_to_inbox(make_sdk_agent, workspace, remote, clock, registry_for) -> None:
    """A settled task with files: they are saved (in a thread) under the inbox and listed in the text."""
    agent = make_sdk_agent(streaming=False, push=False)
    use_agent(workspace, agent)
    reg, delivery, _ = registry_for(workspace)
    task = await start_task(remote, workspace, "bot", "file")
    conn = await remote.connect(workspace.read_agents().get("bot"))
    await settled_at_agent(conn, task.id, "completed")
    await reg.arm(workspace, await add_record(workspace, task, "bot", clock))
    await clock.until(lambda s: len(s) == 1)
    await clock.advance(15.0)
    [(_, text)] = await delivery.wait_for(1)
    [files] = [line for line in text.splitlines() if line.startswith("Files: ")]
    saved = workspace.root / files.removeprefix("Files: ")
    assert saved.is_file() and saved.parent == workspace.inbox_dir / "bot"
    assert "Links: " in text and pending_ids(workspace) == []


async def test_watch_result_and_question_events_carry_the_outcome(
    make_sdk_agent, workspace, remote, clock, registry_for
) -> None:
    """The console renders a watch's RESULT / QUESTION like the tool's: final text or question, files, links,
    skipped files in the event; the chat still gets the spec's header text."""
    agent = make_sdk_agent(streaming=False, push=False)
    use_agent(workspace, agent)
    reg, delivery, sink = registry_for(workspace)
    done = await start_task(remote, workspace, "bot", "file")
    asked = await start_task(remote, workspace, "bot", "ask")
    conn = await remote.connect(workspace.read_agents().get("bot"))
    for task, settled in ((done, "completed"), (asked, "input-required")):
        await settled_at_agent(conn, task.id, settled)
    for task in (done, asked):
        await reg.arm(workspace, await add_record(workspace, task, "bot", clock))
    await clock.until(lambda s: len(s) == 2)
    await clock.advance(15.0)
    texts = [text for _, text in await delivery.wait_for(2)]
    assert all(t.startswith("[A2A ") for t in texts) and any("Files: inbox/a2a/bot/report.pdf" in t for t in texts)

    [result] = [e for e in sink.events if e.kind == "result"]
    assert result.task_id == done.id and result.state == "completed" and result.text == "here is the report"
    assert result.data["files"] == ["inbox/a2a/bot/report.pdf"] and (workspace.root / result.data["files"][0]).is_file()
    assert result.data["links"] == ["https://files.example/r.pdf"] and result.data["skipped"] == []
    [question] = [e for e in sink.events if e.kind == "question"]
    assert question.task_id == asked.id and question.state == "input-required"
    assert question.text == "Which colour?" and question.data["files"] == []
    assert result.data["watchId"] != question.data["watchId"]


async def test_watch_of_an_answer_skips_the_stale_question(
    make_sdk_agent, workspace, remote, clock, registry_for
) -> None:
    """An answer still unanswered when the wait ends goes to a watch; on the JS SDK the task goes on showing the
    old question meanwhile (its reply, its stream's first event, GetTask): the watch must not deliver that."""
    agent = make_sdk_agent(push=False)
    use_agent(workspace, agent)
    reg, delivery, sink = registry_for(workspace)
    tool = A2ATool(remote, ClientSettings(wait_seconds=5), reg, clock=clock)
    chat = ChatTarget("chat1", workspace)
    asked = await tool.run("send", {"agent": "bot", "message": "ask"}, chat)
    assert asked["state"] == "input-required", asked
    answer = {"agent": "bot", "message": "hold a1", "taskId": asked["taskId"]}
    run = __import__("asyncio").ensure_future(tool.run("send", answer, chat))
    await clock.until(lambda s: s.count(5.0) == 2)  # the answer's wait
    await clock.advance(5)
    handed = await run
    assert handed["state"] == "working" and handed["taskId"] == asked["taskId"], handed
    [record] = pending.read(workspace).records
    if agent.sdk != "python":  # the JS agent works on the answer silently: the task still shows the question
        assert record.extra["staleStatus"]["state"] == "input-required"
    await eventually(lambda: "SubscribeToTask" in agent.methods, what="the watch's stream")

    agent.release("a1")
    [(_, text)] = await delivery.wait_for(1)
    assert "got answer: hold a1" in text and "(completed)" in text
    assert "Which colour?" not in text and "question" not in sink.kinds()
    assert pending_ids(workspace) == []
