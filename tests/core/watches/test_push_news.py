"""A push's own news told at once, GetTasks coalesced, and a push answered only once its events are stored.

Real agents on both SDKs push to a loopback receiver in the test's loop (`push_watched`); the clock is fake and
never moves, so every GetTask counted here was caused by a push (or the first check), not by a safety check."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from a2aconsole.core import pending
from a2aconsole.core.events import Event, MemorySink
from a2aconsole.core.remote import Connection, TaskSnapshot
from a2aconsole.core.watches.registry import WatchRegistry
from tests.support.watching import PushReceiver, WaitableSink, add_record, eventually, push_watched, start_task


class GetTaskGate:
    """Counts the console's GetTasks; while `hold` is set, each has its answer read and then waits for `open`: a
    check in flight (the agent answered, the watch has not seen the answer yet)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        self.held = 0
        self.hold = False
        self.opened = asyncio.Event()
        real = Connection.get_task

        async def get_task(conn: Connection, task_id: str) -> TaskSnapshot:
            self.calls += 1
            task = await real(conn, task_id)
            if self.hold:
                self.held += 1
                await self.opened.wait()
            return task

        monkeypatch.setattr(Connection, "get_task", get_task)

    def open(self) -> None:
        self.hold = False
        self.opened.set()


def status_push(task: TaskSnapshot, state: str, text: str = "", message_id: str = "") -> bytes:
    """A push as both SDKs send it: a `StreamResponse` status update as JSON."""
    status: dict[str, Any] = {"state": f"TASK_STATE_{state.upper().replace('-', '_')}"}
    if text:
        status["message"] = {"messageId": message_id or text, "role": "ROLE_AGENT", "parts": [{"text": text}]}
    return json.dumps({"statusUpdate": {"taskId": task.id, "contextId": task.context_id, "status": status}}).encode()


def progress_texts(sink: MemorySink) -> list[str]:
    return [e.text for e in sink.events if e.kind == "progress"]


async def test_push_burst_during_a_check_makes_one_more_gettask(
    make_sdk_agent, workspace, remote, clock, registry_for, monkeypatch
) -> None:
    """A check in flight read the task still working; meanwhile the agent completed it and pushed, and 20 more
    pushes of the end arrived: one more GetTask after the check, not one a push, and the result is delivered."""
    agent = make_sdk_agent(streaming=False)
    gate = GetTaskGate(monkeypatch)
    async with push_watched(agent, workspace, remote, clock, registry_for, "hold b1") as (reg, delivery, sink, task):
        [rec] = pending.read(workspace).records
        before = gate.calls
        gate.hold = True
        reg.wake(rec.watch_id)  # a check now (as a console asking): its answer says working, and waits
        await eventually(lambda: gate.held == 1, what="the check in flight")

        agent.release("b1")  # the agent completes the task and pushes its events (the end among them)
        await sink.until(lambda: "completed" in sink.states(), what="the pushed end, told at once")
        body = status_push(task, "completed", "released b1")
        answers = await asyncio.gather(*(reg.on_push(rec.watch_id, rec.push_token, body) for _ in range(20)))
        assert set(answers) == {"ok"}
        assert gate.calls == before + 1 and not delivery.delivered  # the end is not decided by a push

        gate.open()
        [(_, text)] = await delivery.wait_for(1)
        assert "released b1" in text and "(completed)" in text
        assert gate.calls == before + 2  # the check in flight, and one after it for all the pushes meanwhile
        assert pending.read(workspace).records == []


async def test_push_status_messages_are_told_without_gettask(
    make_sdk_agent, workspace, remote, clock, registry_for, monkeypatch
) -> None:
    """An agent's pushes that carry only a new status message (the state stays working) are told as progress at
    once, in order, without a GetTask each; the end still waits for GetTask."""
    agent = make_sdk_agent(streaming=False)
    gate = GetTaskGate(monkeypatch)
    async with push_watched(agent, workspace, remote, clock, registry_for, "steps 3 s1 e1") as (reg, delivery, sink, _):
        before = gate.calls
        agent.release("s1")
        await sink.until(lambda: "working 3/3" in progress_texts(sink), what="the third status message")
        assert [t for t in progress_texts(sink) if t.startswith("working ")] == [
            "working 1/3",
            "working 2/3",
            "working 3/3",
        ]
        assert gate.calls == before  # no GetTask for news the push carried itself
        assert set(sink.states()) == {"working"}

        agent.release("e1")
        [(_, text)] = await delivery.wait_for(1)
        assert "3 steps done" in text
        assert before < gate.calls <= before + 2  # the end, confirmed by GetTask


async def test_forged_push_tells_nothing(make_sdk_agent, workspace, remote, clock, registry_for, monkeypatch) -> None:
    """A push with a wrong token (or none) is refused: no state, no progress, no GetTask."""
    agent = make_sdk_agent(streaming=False)
    gate = GetTaskGate(monkeypatch)
    async with push_watched(agent, workspace, remote, clock, registry_for, "hold f1") as (reg, _, sink, task):
        [rec] = pending.read(workspace).records
        seen, before = len(sink.events), gate.calls
        for state in ("working", "completed"):
            body = status_push(task, state, f"forged {state}")
            assert await reg.on_push(rec.watch_id, "not-the-token", body) == "not_found"
            assert await reg.on_push(rec.watch_id, None, body) == "not_found"
            assert await reg.on_push(rec.watch_id, (rec.push_token or "")[:-1], body) == "not_found"
        await asyncio.sleep(0)  # a woken watch would have started its check by now
        assert len(sink.events) == seen and gate.calls == before
        assert rec.watch_id in reg


class HeldSink(WaitableSink):
    """A sink whose storing of events waits while `held` (a database slow to commit); `die` ends those waits
    without storing, as a process that dies does."""

    def __init__(self) -> None:
        super().__init__()
        self.held = True
        self.waiting: list[Event] = []
        self._waits: list[asyncio.Future[None]] = []

    async def emit(self, event: Event) -> None:
        if self.held:
            self.waiting.append(event)
            wait = asyncio.get_running_loop().create_future()
            self._waits.append(wait)
            self.signal.poke()
            await wait
        await super().emit(event)

    def die(self) -> None:
        for wait in self._waits:
            wait.cancel()


async def test_push_answered_once_its_events_are_stored_and_restored_after_a_crash(
    make_sdk_agent, workspace, remote, clock, registry_for
) -> None:
    """The answer to a push waits for its events to be stored: a process that dies before that never answered it
    (the agent sees a failed push), and the restored watch's first GetTask finds what the push said."""
    agent = make_sdk_agent(streaming=False)
    workspace.save_agents([{"name": "bot", "url": agent.url}], None)
    held = HeldSink()
    holder: list[WatchRegistry] = []
    async with PushReceiver(lambda *a: holder[0].on_push(*a)) as receiver:
        reg, _, sink = registry_for(workspace, push_base_url=receiver.url)
        reg.events = held
        holder.append(reg)
        held.held = False
        task = await start_task(remote, workspace, "bot", "steps 1 c1 c2")
        await reg.arm(workspace, await add_record(workspace, task, "bot", clock, source="poll"))
        await held.until(lambda: "working" in held.states(), what="the first check")
        assert pending.read(workspace).records[0].source == "push"
        [rec] = pending.read(workspace).records

        held.held = True
        push = asyncio.ensure_future(reg.on_push(rec.watch_id, rec.push_token, status_push(task, "working", "step")))
        await held.until(lambda: any(e.kind == "progress" for e in held.waiting), what="the push's event")
        await asyncio.sleep(0)
        assert not push.done()  # not answered while its event is not stored

        agent.release("c1")  # the agent's own pushes meanwhile: held the same way
        await eventually(lambda: len(held.waiting) >= 2, what="the agent's push to wait too")
        await reg.stop()  # the process dies: nothing it held was stored, no push of them answered "ok"
        held.die()
        await asyncio.gather(push, return_exceptions=True)
        assert "ok" not in receiver.results
        assert not any(e.text == "working 1/1" for e in held.events)

    # the next start: the restored watch's first GetTask tells the state the lost pushes said
    again, _, after = registry_for(workspace)
    await again.start([workspace])
    await after.until(lambda: "working 1/1" in progress_texts(after), what="the status message, from GetTask")
    agent.release("c2")
