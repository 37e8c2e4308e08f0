"""What the console keeps of progress: a status message only as its task's latest line (200 of them are no 200
event rows), an artifact update as an event too; both bounded, and shown after a reload where the task is listed."""

from __future__ import annotations

import importlib
from datetime import UTC, datetime, timedelta

import pytest
from asgiref.sync import sync_to_async
from django.apps import apps
from django.test import Client

from a2aconsole.core.events import Event
from a2aconsole.web import task_index
from a2aconsole.web.broadcast import _store_all
from a2aconsole.web.models import ChatTarget, TaskEvent, TaskRecord
from a2aconsole.web.task_index import LAST_CHARS
from tests.support.console import connect_socket, create_owner
from tests.web.test_live_transport import frames_until
from tests.web.test_tasks_page import emit

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


@pytest.mark.django_db
def test_status_messages_are_kept_on_the_task_row_not_as_events() -> None:
    emit("t1", "sent", text="count to 200", at=T0)
    emit("t1", "state", "working", at=T0 + timedelta(seconds=1))
    for i in range(1, 201):
        at = T0 + timedelta(seconds=1 + i / 100)
        emit("t1", "progress", text=f"working {i}/200", at=at, data={"kind": "status", "state": "working"})
    emit("t1", "progress", text="working 200/200", at=T0 + timedelta(seconds=4), data={"kind": "status"})  # again
    assert TaskEvent.objects.filter(task_id="t1").count() == 2
    row = TaskRecord.objects.get(task_id="t1")
    assert (row.progress, row.last_text, row.state, row.events) == ("working 200/200", "working 200/200", "working", 2)
    assert row.progress_at == T0 + timedelta(seconds=3)  # the repeat changed nothing
    emit("t1", "progress", text="x" * 5000, at=T0 + timedelta(seconds=5), data={"kind": "status"})
    row.refresh_from_db()
    assert len(row.progress) < LAST_CHARS + 40  # bounded, saying how much more there was
    emit("t1", "progress", text="part one", at=T0 + timedelta(seconds=6), data={"kind": "artifact", "name": "report"})
    assert TaskEvent.objects.filter(task_id="t1", kind="progress").count() == 1
    row.refresh_from_db()
    assert row.progress == "artifact report: part one" and row.events == 3


@pytest.mark.django_db
def test_a_batch_of_status_messages_keeps_each_tasks_latest_in_order(django_assert_max_num_queries) -> None:
    """A burst of pushes stored in one batch: each task's row gets its latest status message, a run of messages
    reads the rows once (not once a message), and an event between them is folded in its place."""
    emit("a", "state", "working", at=T0)
    emit("b", "state", "working", at=T0)

    def said(task_id: str, i: int) -> Event:
        at = T0 + timedelta(seconds=i)
        data = {"kind": "status", "state": "working"}
        return Event("progress", "/w", "bot", task_id, at, target="console", text=f"{task_id} {i}", data=data)

    burst = [said(task, i) for i in range(1, 51) for task in ("a", "b")]
    with django_assert_max_num_queries(8):  # a read of both rows, a write of each, the transaction's own
        stored = _store_all(burst)
    assert stored == [0] * len(burst)  # each told to the tabs (without an event id: no event row)
    rows = dict(TaskRecord.objects.values_list("task_id", "progress"))
    assert rows == {"a": "a 50", "b": "b 50"}

    middle = Event("state", "/w", "bot", "a", T0 + timedelta(seconds=61), target="console", state="submitted")
    stored = _store_all([said("a", 60), middle, said("a", 62), said("a", 62)])
    assert stored[0] == 0 and isinstance(stored[1], int) and stored[1] > 0 and stored[2] == 0
    assert stored[3] is None  # the same message again: nothing changed, nothing told
    row = TaskRecord.objects.get(task_id="a")
    assert (row.state, row.progress) == ("submitted", "a 62")
    assert TaskEvent.objects.filter(task_id="a").count() == 2  # the two state events; messages are no events


@pytest.mark.django_db
def test_pages_show_the_latest_progress_after_a_reload() -> None:
    emit("t2", "sent", text="count", at=T0)
    emit("t2", "state", "working", at=T0 + timedelta(seconds=1))
    emit("t2", "progress", text="working 3/8", at=T0 + timedelta(seconds=2), data={"kind": "status"})
    ChatTarget.objects.create(id="console", name="Console", workspace="/w")
    owner = Client()
    owner.force_login(create_owner())
    tasks = owner.get("/tasks/").content.decode()
    assert "working 3/8" in tasks
    assert f'<time datetime="{T0.isoformat()}" data-age>' in tasks  # a running task's duration ticks in the browser
    page = owner.get("/tasks/bot/t2/?target=console").content.decode()
    assert 'id="task-progress"' in page and "working 3/8" in page and 'data-ago="2026-12-01T09:00:02+00:00"' in page
    assert "working 3/8" in owner.get("/chat/console/").content.decode()
    emit("t2", "result", "completed", "all 8 done", at=T0 + timedelta(seconds=9))
    page = owner.get("/tasks/bot/t2/?target=console").content.decode()
    assert "working 3/8" not in page  # a finished task shows its result, not what it said while working


@pytest.mark.django_db
def test_the_migration_gives_tasks_their_latest_stored_progress() -> None:
    """Status messages stored as events before this change: the latest becomes the task's progress line."""
    for i, (kind, text) in enumerate([("sent", "hi"), ("progress", "step 1"), ("progress", "step 2")]):
        TaskEvent.objects.create(
            agent="bot",
            task_id="old",
            kind=kind,
            text=text,
            data={"kind": "status"},
            created_at=T0 + timedelta(seconds=i),
        )
    TaskRecord.objects.create(agent="bot", task_id="old", state="working", started_at=T0, updated_at=T0)
    importlib.import_module("a2aconsole.web.migrations.0008_task_record_progress").backfill(apps, None)
    r = TaskRecord.objects.get(task_id="old")
    assert (r.progress, r.progress_at) == ("step 2", T0 + timedelta(seconds=2))


@pytest.mark.django_db(transaction=True)
async def test_a_tab_that_missed_a_status_message_catches_up(owner_cookie: str, settings) -> None:
    """A status message is no event (the page's version stays): a tab whose message was lost still notices, at
    its next check, that the task's row moved while it heard nothing, and renders again."""
    settings.LIVE_CHECK_SECONDS = 0.05
    await sync_to_async(emit)("t3", "state", "working")
    comm, ok = await connect_socket("/ws/console/task/?agent=bot&task=t3&target=console", owner_cookie)
    assert ok
    await comm.receive_from(timeout=5)
    status = {"kind": "status", "state": "working"}
    await sync_to_async(emit)("t3", "progress", text="working 5/8", at=T0 + timedelta(seconds=1), data=status)
    got = "".join(await frames_until(comm, lambda t: "working 5/8" in t))  # no message was sent at all
    assert 'id="task-progress"' in got
    await comm.disconnect()


@pytest.mark.parametrize(
    ("text", "bar"),
    [
        ("working 22/30", (22, 30, 73)),
        ("step 3 of 8", (3, 8, 38)),
        ("about 40% done", (40.0, 100, 40)),
        ("v1.2/3 of the docs", None),  # a version, not a count
        ("12/0", None),
        ("150%", None),
        ("2026/12/06", None),  # more done than in all: a date
        ("just working", None),
    ],
)
def test_a_status_message_with_numbers_is_a_bar(text: str, bar: tuple[float, int, int] | None) -> None:
    got = task_index.fraction(text)
    assert (None if got is None else (got["done"], got["total"], got["percent"])) == bar
