"""A batch of events (an API call's, a burst of pushes) is stored as the same events one by one would be, in a few
statements: one INSERT of the events, each task's row read and written once, a task's last outcome read only when
the batch itself does not say it (`broadcast._store_batch`)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from a2aconsole.core.events import Event
from a2aconsole.web import broadcast, task_index
from a2aconsole.web.models import TaskEvent, TaskRecord

pytestmark = pytest.mark.django_db(transaction=True)

AT = datetime(2026, 12, 7, 9, 0, tzinfo=UTC)


def ev(kind: str, text: str = "", *, task: str = "t-1", second: int = 0, **extra: Any) -> Event:
    return Event(kind, "/ws", "bot", task, AT + timedelta(seconds=second), target="console", text=text, **extra)


STATUS = {"kind": "status"}
# a send, its task's updates and result, with what a re-check, a crash's re-emission and a second task add
SCRIPT = [
    ev("sent", "hello", second=0),
    ev("state", state="working", second=1),
    ev("state", state="working", second=2),  # the same outcome again: not stored
    ev("progress", "step 1/3", data=STATUS, second=3),  # a status message: on the task's row only
    ev("progress", "step 1/3", data=STATUS, second=4),  # the row says it already: nothing
    ev("progress", "step 2/3", data=STATUS, second=5),
    ev("result", "done", state="completed", key="result:w1", data={"watchId": "w1"}, second=6),
    ev("result", "done", state="completed", key="result:w1", second=7),  # its key is stored already: once
    ev("result", "done", state="completed", data={"watchId": "w2"}, second=8),  # a re-check's same outcome
    ev("state", state="working", task="t-2", second=1),
    ev("message", "a reply without a task", task="", second=2),
]


def history() -> tuple[list[tuple[Any, ...]], list[dict[str, Any]]]:
    """The stored events and task rows, without their ids."""
    events = list(TaskEvent.objects.order_by("id").values_list("task_id", "kind", "state", "text", "key", "data"))
    rows = list(TaskRecord.objects.order_by("agent", "task_id").values())
    for row in rows:
        row.pop("id")
    return events, rows


def outcomes(stored: list[Any]) -> list[str]:
    """What `_store_all` said of each event: stored (an id), told only (0), or not stored (None)."""
    return ["told" if s == 0 else "skipped" if s is None else "stored" for s in stored]


def test_a_batch_stores_what_the_events_one_by_one_would() -> None:
    one_by_one = [broadcast._store(e) for e in SCRIPT]
    expected = history()
    TaskEvent.objects.all().delete()
    TaskRecord.objects.all().delete()

    together = broadcast._store_all(SCRIPT)

    assert outcomes(together) == outcomes(one_by_one)
    assert history() == expected
    kinds = [(task, kind) for task, kind, *_ in expected[0]]
    assert kinds == [("t-1", "sent"), ("t-1", "state"), ("t-1", "result"), ("t-2", "state"), ("", "message")]
    assert {r["task_id"]: (r["state"], r["events"]) for r in expected[1]} == {
        "t-1": ("completed", 3),
        "t-2": ("working", 1),
    }


def test_a_batch_compares_an_outcome_with_the_history_before_it() -> None:
    for e in SCRIPT[:2]:  # sent, working: stored before
        broadcast._store(e)
    again = [ev("state", state="working", second=10), ev("state", state="input-required", text="Which?", second=11)]

    assert outcomes(broadcast._store_all(again)) == ["skipped", "stored"]  # the first repeats the history's last
    assert TaskRecord.objects.get(task_id="t-1").state == "input-required"


def test_a_send_batch_costs_three_statements_and_a_burst_one_lookup_a_task() -> None:
    send = [ev("sent", "hi"), ev("state", state="working", second=1), ev("result", "hi!", state="completed", second=2)]
    with CaptureQueriesContext(connection) as sql:
        broadcast._store_all(send)
    # in one transaction: the tasks' rows read, the events inserted, the new row inserted
    assert verbs(sql) == ["BEGIN", "SELECT", "INSERT", "INSERT", "COMMIT"], sql.captured_queries

    burst = [ev("state", state="working", task=f"push-{i}", second=1) for i in range(10)]
    with CaptureQueriesContext(connection) as sql:
        broadcast._store_all(burst)
    # each task's last outcome looked up (nothing in the batch says it), then the rows read, the writes: two
    assert verbs(sql) == ["BEGIN", *["SELECT"] * 11, "INSERT", "INSERT", "COMMIT"], sql.captured_queries
    assert TaskEvent.objects.filter(task_id__startswith="push-").count() == 10


def verbs(sql: CaptureQueriesContext) -> list[str]:
    return [q["sql"].split()[0] for q in sql.captured_queries]


def test_a_burst_writes_only_the_fields_it_moved() -> None:
    """Status messages for ten running tasks: one UPDATE naming the progress line, its time and the row's, not
    every field; a field the burst did not move keeps what another writer put there meanwhile."""
    for i in range(10):
        broadcast._store(ev("state", state="working", task=f"run-{i}", second=1))
    burst = [ev("progress", f"step {i}/9", data=STATUS, task=f"run-{i}", second=2) for i in range(10)]
    rows = task_index.TaskRows((e.agent, e.task_id) for e in burst)
    TaskRecord.objects.filter(task_id="run-3").update(result_text="written meanwhile")
    with CaptureQueriesContext(connection) as sql:
        for e in burst:
            assert rows.note_progress(TaskEvent(**broadcast._row_fields(e)))
        rows.save()

    begin, update, commit = [q["sql"] for q in sql.captured_queries]  # bulk_update's own transaction
    assert update.startswith("UPDATE"), sql.captured_queries
    written = set(re.findall(r'"(\w+)" = CASE', update))
    assert written == {"progress", "progress_at", "last_text", "updated_at", "search_words"}
    row = TaskRecord.objects.get(task_id="run-3")
    assert (row.progress, row.result_text) == ("step 3/9", "written meanwhile")
    assert TaskRecord.objects.filter(progress__startswith="step ").count() == 10
