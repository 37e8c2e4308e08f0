"""A finished watch's closing events (result or question, then `watch.ended`) are kept in its record with the
result, under stable keys: whoever delivers a kept record emits them first, so a process that died between
the claim and the events still gets them into the history (which keeps one per key)."""

from __future__ import annotations

import json

from a2aconsole.core import pending
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.events import watch_event_key
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.pending.records import WatchRecord, dump_pending, parse_pending
from a2aconsole.core.remote.client import Remote
from a2aconsole.core.watches.registry import WatchRegistry
from tests.support.watching import SignalClock, WaitableDelivery, WaitableSink, add_record, start_task


async def registry(ws: Workspace, remote: Remote, clock: SignalClock, *, available: bool):
    delivery = WaitableDelivery({"chat1": ws}, available=available)
    sink = WaitableSink()
    delivery.sink = sink
    reg = WatchRegistry(remote, ClientSettings(), delivery, clock, sink)
    await reg.start([ws])
    return reg, delivery, sink


def closing(sink: WaitableSink) -> list[tuple[str, str, str]]:
    return [(e.kind, e.key, e.at.isoformat()) for e in sink.events if e.kind in ("result", "question", "watch.ended")]


async def test_a_kept_result_brings_its_events_to_the_next_start(make_agent, workspace, remote) -> None:
    agent = make_agent(streaming=False, push=False)
    workspace.save_agents([{"name": "bot", "url": agent.url}], None)
    clock = SignalClock()
    task = await start_task(remote, workspace, "bot", "hello kept")
    rec = await add_record(workspace, task, "bot", clock)

    # the chat is away: the result is claimed and kept, with its closing events
    first, delivery, sink = await registry(workspace, remote, clock, available=False)
    await delivery.wait_attempts(1)
    await sink.until(lambda: "undelivered" in sink.kinds())
    await first.stop()
    raw = json.loads(pending.file_path(workspace).read_text())
    [kept] = raw
    assert [e["kind"] for e in kept["endEvents"]] == ["result", "watch.ended"]
    assert kept["endEvents"][0]["text"] == "echo: hello kept" and kept["endEvents"][0]["state"] == "completed"
    # restored at the start and already finished: it finished while no console followed it
    assert kept["endEvents"][1]["data"] == {"reason": "settled", "watchId": rec.watch_id, "away": True}
    root = str(workspace.root)
    keys = [watch_event_key(root, rec.watch_id, k) for k in ("result", "watch.ended")]
    emitted = closing(sink)
    assert [(k, key) for k, key, _ in emitted] == list(zip(("result", "watch.ended"), keys, strict=True))

    # the next process emits them again, same keys and times, before it delivers
    second, delivery2, sink2 = await registry(workspace, remote, clock, available=True)
    try:
        [(_, text)] = await delivery2.wait_for(1)
        assert "echo: hello kept" in text
        assert closing(sink2) == emitted
        kinds = sink2.kinds()
        assert kinds.index("watch.ended") < kinds.index("delivered")
        [delivered] = [e for e in sink2.events if e.kind == "delivered"]
        assert delivered.key == watch_event_key(root, rec.watch_id, "delivered")
        assert pending.read(workspace).records == []
    finally:
        await second.stop()


async def test_a_result_delivered_at_once_emits_each_closing_event_once(make_agent, workspace, remote) -> None:
    agent = make_agent(streaming=False, push=False)
    workspace.save_agents([{"name": "bot", "url": agent.url}], None)
    clock = SignalClock()
    task = await start_task(remote, workspace, "bot", "ask")
    rec = await add_record(workspace, task, "bot", clock)
    reg, delivery, sink = await registry(workspace, remote, clock, available=True)
    try:
        [(_, text)] = await delivery.wait_for(1)
        assert "Which colour?" in text
        root = str(workspace.root)
        assert [(k, key) for k, key, _ in closing(sink)] == [
            ("question", watch_event_key(root, rec.watch_id, "question")),
            ("watch.ended", watch_event_key(root, rec.watch_id, "watch.ended")),
        ]
        assert sink.kinds().count("delivered") == 1
    finally:
        await reg.stop()


def test_kept_events_round_trip_and_a_hand_edited_value_is_ignored() -> None:
    events = [{"kind": "result", "at": "2026-12-03T07:00:00+00:00", "text": "done", "data": {"files": []}}]
    rec = WatchRecord("w1", "chat1", "bot", "t1", undelivered="done", end_events=events)
    [back] = parse_pending(dump_pending([rec]).decode())
    assert back.end_events == events and "endEvents" not in back.extra
    odd = '[{"watchId": "w2", "target": "c", "agent": "a", "taskId": "t", "endEvents": "not a list"},' + (
        '{"watchId": "w3", "target": "c", "agent": "a", "taskId": "t", "endEvents": [1, {"kind": "result"}]}]'
    )
    w2, w3 = parse_pending(odd)
    assert w2.end_events is None and w3.end_events == [{"kind": "result"}]


async def test_the_batched_file_is_what_dump_pending_writes(make_agent, workspace, remote) -> None:
    """A claimed record with its events goes through the batched writer's reuse of record texts unchanged."""
    agent = make_agent(streaming=False, push=False)
    workspace.save_agents([{"name": "bot", "url": agent.url}], None)
    clock = SignalClock()
    tasks = [await start_task(remote, workspace, "bot", f"hello {i}") for i in range(3)]
    for t in tasks:
        await add_record(workspace, t, "bot", clock)
    reg, delivery, sink = await registry(workspace, remote, clock, available=False)
    try:
        await delivery.wait_attempts(3)
        await sink.until(lambda: sink.kinds().count("undelivered") >= 3)
        records = pending.read(workspace).records
        assert all(r.end_events for r in records)
        assert pending.file_path(workspace).read_bytes() == dump_pending(records)
    finally:
        await reg.stop()
