"""The live-update transport through the real routed ASGI app (channels' WebsocketCommunicator): one row per
change, bursts coalesced, frames under daphne's 1 MiB limit, and a tab that missed messages catching up."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from a2aconsole.core import pending
from a2aconsole.core.events import ALL_GROUP, Event, target_group, task_group
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.pending.records import WatchRecord
from a2aconsole.web import history, task_index
from a2aconsole.web.broadcast import ChannelsBroadcast
from a2aconsole.web.live.frames import pack
from a2aconsole.web.models import ChatTarget, TaskEvent
from tests.support.console import connect_socket
from tests.support.watching import describe, eventually

pytestmark = pytest.mark.django_db(transaction=True)
MIB = 1024 * 1024


async def add_watches(ws: Workspace, count: int, start: int = 0) -> None:
    async with pending.transaction(ws) as tx:
        for i in range(start, start + count):
            tx.add(
                WatchRecord(f"w{i}", "console", "bot", f"task-{i:05d}", f"ctx-{i}", started_at="2026-01-01T00:00:00Z")
            )


def event(task: str, kind: str = "state", **extra: object) -> dict:
    return {"type": "a2a.event", "event": {"kind": kind, "agent": "bot", "task_id": task}, **extra}


def store(task: str, kind: str, state: str, text: str = "") -> int:
    """An event stored as the event sink stores it: its row, and its task's row of the index (`task_index.TaskRows`)."""
    with transaction.atomic():
        ev = TaskEvent.objects.create(
            agent="bot", task_id=task, target="console", kind=kind, state=state, text=text, created_at=timezone.now()
        )
        rows = task_index.TaskRows([(ev.agent, ev.task_id)])
        rows.note(ev)
        rows.save()
    return ev.id


async def frames_until(comm: WebsocketCommunicator, done: Callable[[str], bool], timeout: float = 15) -> list[str]:
    """Frames received until `done(all_text)` holds."""
    got: list[str] = []

    async def complete() -> bool:
        while not done("".join(got)):  # bounded by the wait below
            got.append(await comm.receive_from(timeout=timeout))
        return True

    await eventually(
        complete,
        what=f"frames where {describe(done)}",
        timeout=timeout,
        seen=lambda: f"{len(got)} frames, ending {''.join(got)[-300:]!r}",
    )
    return got


async def test_a_change_sends_the_one_affected_row(ws: Workspace, owner_cookie: str) -> None:
    await add_watches(ws, 50)
    comm, ok = await connect_socket("/ws/console/watches/", owner_cookie)
    assert ok
    await frames_until(comm, lambda t: t.count("<tr id=") == 50)
    await sync_to_async(store)("task-00007", "state", "input-required")
    await get_channel_layer().group_send(ALL_GROUP, event("task-00007"))
    frame = "".join(await frames_until(comm, lambda t: '<tr id="watch-w7"' in t))
    assert re.findall(r'<tr id="(watch-\w+)" hx-swap-oob="true"', frame) == ["watch-w7"]
    assert 'data-task-state="input-required"' in frame and 'id="watch-table"' not in frame
    assert len(frame) < 8_000
    # a watch armed is inserted at the top, one that ended is deleted: the table is never sent again
    await add_watches(ws, 1, start=50)
    async with pending.transaction(ws) as tx:
        tx.remove("w3")
    await get_channel_layer().group_send(ALL_GROUP, event("task-00050", "watch.armed"))
    frame = "".join(await frames_until(comm, lambda t: 'id="watch-w50"' in t))
    assert '<tbody hx-swap-oob="afterbegin:#watch-rows">' in frame and 'id="watch-w50"' in frame
    assert '<i id="watch-w3" hx-swap-oob="delete"></i>' in frame
    assert "50 of 50 watches" in frame and 'id="watch-table"' not in frame
    await comm.disconnect()


async def test_a_burst_is_coalesced_into_few_renders(ws: Workspace, owner_cookie: str, settings) -> None:
    settings.LIVE_FLUSH_SECONDS = 0.5
    await add_watches(ws, 200)
    comm, ok = await connect_socket("/ws/console/watches/", owner_cookie)
    assert ok
    await frames_until(comm, lambda t: t.count("<tr id=") == 50)  # the first page
    layer = get_channel_layer()
    for i in range(100):  # 100 pushes, 50 of them on the first page's rows, faster than one coalescing interval
        await layer.group_send(ALL_GROUP, event(f"task-{i:05d}"))
    got = await frames_until(comm, lambda t: len(set(re.findall(r'<tr id="(watch-w\d+)"', t))) == 50)
    renders = "".join(got).count('id="watch-count"')  # one per render
    assert renders <= 3, renders  # one render at once, then one for the rest (at most one more)
    await comm.disconnect()


async def test_a_thousand_watches_arrive_in_frames_under_the_limit(ws: Workspace, owner_cookie: str) -> None:
    await add_watches(ws, 1000)
    comm, ok = await connect_socket("/ws/console/watches/", owner_cookie)
    assert ok
    got = await frames_until(comm, lambda t: t.count("<tr id=") == 50)  # the first page of ten
    sizes = [len(f.encode()) for f in got]
    assert max(sizes) < MIB / 2, sizes  # daphne closes a socket on a message over 1 MiB
    assert 'id="watch-table"' in got[0] and "1–50 of 1000 watches · page 1 of 20" in got[0]
    await comm.disconnect()


async def test_a_tab_current_at_connect_gets_nothing_big(ws: Workspace, owner_cookie: str) -> None:
    await add_watches(ws, 300)
    from a2aconsole.web import live

    url = await sync_to_async(live.ws_url)("watches", q="")
    comm, ok = await connect_socket(url, owner_cookie)
    assert ok
    assert await comm.receive_from(timeout=5) == "<!-- live -->"  # the page holds this version: just "live"
    await get_channel_layer().group_send(ALL_GROUP, event("task-00001"))
    got = await frames_until(comm, lambda t: 'id="watch-w1"' in t)  # and it still updates row by row
    assert "watch-w2" not in "".join(got)
    await comm.disconnect()


async def test_a_gap_in_the_sequence_renders_in_full(ws: Workspace, owner_cookie: str) -> None:
    await add_watches(ws, 3)
    comm, ok = await connect_socket("/ws/console/watches/", owner_cookie)
    assert ok
    await frames_until(comm, lambda t: t.count("<tr id=") == 3)
    layer = get_channel_layer()
    await layer.group_send(ALL_GROUP, event("task-00001", origin="o1", group=ALL_GROUP, seq=1))
    assert 'id="watch-table"' not in "".join(await frames_until(comm, lambda t: 'id="watch-w1"' in t))
    await layer.group_send(ALL_GROUP, event("task-00001", origin="o1", group=ALL_GROUP, seq=4))  # 2 and 3 lost
    got = await frames_until(comm, lambda t: t.count("<tr id=") == 3)
    assert 'id="watch-table" hx-swap-oob="true"' in got[0]
    await comm.disconnect()


async def test_a_tab_that_lost_its_group_and_messages_catches_up(ws: Workspace, owner_cookie: str, settings) -> None:
    """The layer dropped the tab's messages and its group membership (a queue that overflowed): the tab notices
    the events it never heard of, renders in full, and joins its groups again."""
    settings.LIVE_CHECK_SECONDS = 0.05
    await add_watches(ws, 2)
    comm, ok = await connect_socket("/ws/console/dashboard/", owner_cookie)
    assert ok
    await comm.receive_from(timeout=5)
    layer = get_channel_layer()
    layer.groups.pop(ALL_GROUP, None)  # what InMemoryChannelLayer does to a channel whose queue expired
    await sync_to_async(store)("task-00001", "question", "input-required", "Which size?")  # no message at all
    assert "Which size?" in "".join(await frames_until(comm, lambda t: "Which size?" in t))
    await sync_to_async(store)("task-00002", "question", "input-required", "Which shape?")
    await layer.group_send(ALL_GROUP, event("task-00002", "question"))  # reaches it: it joined again
    assert "Which shape?" in "".join(await frames_until(comm, lambda t: "Which shape?" in t))
    await comm.disconnect()


async def test_status_page_is_live(ws: Workspace, owner_cookie: str) -> None:
    comm, ok = await connect_socket("/ws/console/status/", owner_cookie)
    assert ok
    assert "No watches." in await comm.receive_from(timeout=5)
    await add_watches(ws, 150)
    await get_channel_layer().group_send(ALL_GROUP, event("task-00149", "watch.armed"))
    got = await frames_until(comm, lambda t: t.count("<tr><td") == 50)  # the newest 50 (STATUS_WATCHES)
    assert 'id="status-spaces" hx-swap-oob="true"' in got[0] and "Watches (150)" in got[0]
    assert "all 150 are on the" in got[0]
    assert "data-age>" in got[-1] and "beforeend:#status-watches-1" in got[-1]
    await comm.disconnect()


def test_a_fragment_over_the_budget_is_never_sent() -> None:
    frames = list(pack(["a" * 10, "b" * 10, "c" * 50, "d" * 6], budget=25))
    assert frames == ["a" * 10 + "b" * 10, "d" * 6]


def test_a_frame_holds_fragments_of_one_kind() -> None:
    """htmx parses a frame as one template: a <tbody> or <tr> after a <div> would be dropped by the parser."""
    parts = ["<div id=a></div>", "<i id=b></i>", "<tbody hx-swap-oob=x></tbody>", "<tbody></tbody>", "<tr id=c></tr>"]
    assert list(pack([*parts, "<p id=d></p>"])) == [
        "<div id=a></div><i id=b></i>",
        "<tbody hx-swap-oob=x></tbody><tbody></tbody>",
        "<tr id=c></tr>",
        "<p id=d></p>",
    ]


def test_history_views_use_a_fixed_number_of_queries(db: None) -> None:
    for i in range(40):
        store(f"q{i}", "question", "input-required", f"question {i}")
        if i % 2:
            store(f"q{i}", "result", "completed", "done")
    with CaptureQueriesContext(connection) as open_q:
        found = history.open_questions(limit=20)
    assert len(found) == 20 and {q.task_id for q in found} == {f"q{i}" for i in range(40) if not i % 2}
    assert len(open_q) <= 2, len(open_q)
    with CaptureQueriesContext(connection) as states_q:
        rows = task_index.rows_of([("bot", f"q{i}") for i in range(40)])
    assert rows[("bot", "q1")].state == "completed" and rows[("bot", "q2")].state == "input-required"
    assert len(states_q) == 1


async def test_a_recheck_of_a_finished_task_is_not_recorded_again(ws: Workspace) -> None:
    sink = ChannelsBroadcast()
    at = datetime.now(UTC)
    done = Event("result", str(ws.root), "bot", "t1", at, target="console", state="completed", text="the answer")
    await sink.emit(done)
    await sink.emit(Event("delivered", str(ws.root), "bot", "t1", at, target="console"))
    await sink.emit(done)  # re-check: the same outcome once more
    kinds = await sync_to_async(lambda: list(TaskEvent.objects.values_list("kind", flat=True)))()
    assert kinds == ["result", "delivered"]
    # a new turn (the owner wrote again) may end with the same words: that one is new
    await sink.emit(Event("sent", str(ws.root), "bot", "t1", at, target="console", text="again"))
    await sink.emit(done)
    assert await sync_to_async(TaskEvent.objects.filter(kind="result").count)() == 2


async def test_chat_tab_gets_the_answer_panel_of_a_changed_task(
    ws: Workspace, console_target: ChatTarget, owner_cookie: str
) -> None:
    comm, ok = await connect_socket("/ws/console/chat/?target=console", owner_cookie)
    assert ok
    await comm.receive_from(timeout=5)
    await sync_to_async(store)("t9", "state", "working", "working 3/8")
    await get_channel_layer().group_send(target_group("console"), event("t9"))
    html = await comm.receive_from(timeout=5)
    assert "Working on it: working 3/8" in html and 'data-task-state="working"' in html
    await sync_to_async(store)("t9", "result", "completed", "all eight done")
    await get_channel_layer().group_send(target_group("console"), event("t9", "result"))
    html = await comm.receive_from(timeout=5)
    outcome = html[html.index('id="outcome-') :]
    assert 'data-task-state="completed"' in outcome and "all eight done" in outcome and "Working on it" not in outcome
    await asyncio.wait_for(comm.disconnect(), 5)


async def test_task_page_appends_new_events_only(ws: Workspace, owner_cookie: str) -> None:
    """Bug 10: the task page re-rendered its whole timeline on every event (50 KB a frame after 200 events)."""

    def history_of(n: int) -> None:
        for i in range(n):
            store("long", "state", "working", f"step {i} of a long task")

    await sync_to_async(history_of)(200)
    comm, ok = await connect_socket("/ws/console/task/?agent=bot&task=long&target=console", owner_cookie)
    assert ok
    assert "step 199 of a long task" in "".join(await frames_until(comm, lambda t: "step 199" in t))
    await sync_to_async(store)("long", "state", "working", "step 200 of a long task")
    await get_channel_layer().group_send(task_group("bot", "long"), event("long"))
    got = "".join(await frames_until(comm, lambda t: 'id="task-controls"' in t))
    assert "step 200 of a long task" in got and "step 199" not in got
    assert '<ol hx-swap-oob="beforeend:#timeline-log">' in got and len(got.encode()) < 6_000, len(got.encode())
    await comm.disconnect()


async def test_events_stored_together_are_announced_in_one_message_a_group(ws: Workspace) -> None:
    """A burst stored in one transaction reaches a group as one message with its events in order (ten tabs and
    50 pushes a second were 500 messages a second on the event loop), numbered like any other message."""
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(ALL_GROUP, channel)
    sink = ChannelsBroadcast()
    at = datetime.now(UTC)
    burst = [Event("state", str(ws.root), "bot", f"t{i}", at, target="console", state="working") for i in range(20)]
    await asyncio.gather(*(sink.emit(e) for e in burst))
    messages = []
    while sum(len(m.get("events") or [m["event"]]) for m in messages) < 20:
        messages.append(await asyncio.wait_for(layer.receive(channel), 5))
    told = [e for m in messages for e in (m.get("events") or [m["event"]])]
    assert [e["task_id"] for e in told] == [f"t{i}" for i in range(20)] and len(messages) < 20
    seqs = [m["seq"] for m in messages]
    assert seqs == list(range(seqs[0], seqs[0] + len(messages)))
    ids = [e["eventId"] for e in told]
    assert ids == sorted(ids)


async def test_a_tab_renders_every_row_of_a_message_of_many_events(ws: Workspace, owner_cookie: str) -> None:
    await add_watches(ws, 3)
    comm, ok = await connect_socket("/ws/console/watches/", owner_cookie)
    assert ok
    await frames_until(comm, lambda t: t.count("<tr id=") == 3)
    for task in ("task-00000", "task-00002"):
        await sync_to_async(store)(task, "state", "input-required")
    message = {"type": "a2a.event", "events": [event(t)["event"] for t in ("task-00000", "task-00002")]}
    await get_channel_layer().group_send(ALL_GROUP, message)
    got = "".join(await frames_until(comm, lambda t: '<tr id="watch-w0"' in t and '<tr id="watch-w2"' in t))
    assert got.count('data-task-state="input-required"') == 2 and '<tr id="watch-w1"' not in got
    await comm.disconnect()
