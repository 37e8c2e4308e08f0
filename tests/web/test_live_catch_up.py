"""A watches tab that fell behind (events stored that no message announced to it yet) catches up by the rows those
events touch, not by the whole table again; and a live update of a few rows reads only those rows' states."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.db import connection
from django.test.utils import CaptureQueriesContext

from a2aconsole.core.events import ALL_GROUP
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.web.live import Changes, Tab
from a2aconsole.web.views.watches_live import WatchesLive
from tests.support.console import connect_socket
from tests.web.test_live_transport import add_watches, event, frames_until, store

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_tab_behind_catches_up_by_rows_not_by_the_table(ws: Workspace, owner_cookie: str, settings) -> None:
    settings.LIVE_CHECK_SECONDS = 0.05
    await add_watches(ws, 300)
    comm, ok = await connect_socket("/ws/console/watches/", owner_cookie)
    assert ok
    await frames_until(comm, lambda t: t.count("<tr id=") == 50)  # the first page
    # stored, never announced to this tab (a process too busy to announce it in time, or a dropped message)
    await sync_to_async(store)("task-00007", "state", "input-required")
    got = "".join(await frames_until(comm, lambda t: '<tr id="watch-w7"' in t))
    assert 'data-task-state="input-required"' in got
    assert 'id="watch-table"' not in got and got.count("<tr id=") == 1  # before: the whole table, 300 rows
    # and the tab still hears what comes next, row by row
    await sync_to_async(store)("task-00009", "state", "auth-required")
    await get_channel_layer().group_send(ALL_GROUP, event("task-00009"))
    got = "".join(await frames_until(comm, lambda t: '<tr id="watch-w9"' in t))
    assert 'data-task-state="auth-required"' in got and 'id="watch-table"' not in got
    await comm.disconnect()


def test_a_changed_row_reads_only_its_own_state(ws: Workspace) -> None:
    """Ten tabs after each push used to read the latest state of every watch (500 tasks' events) each: now a tab
    whose watches did not come or go reads the changed task's state only."""
    import asyncio

    asyncio.run(add_watches(ws, 50))
    live = WatchesLive()
    tab = Tab({"q": ""})
    live.start(tab)  # the tab shows the table as rendered
    store("task-00003", "state", "input-required")
    with CaptureQueriesContext(connection) as queries:
        out = live.changed(tab, Changes(tasks={("bot", "task-00003")}, count=1))
    rows = [f for f in out if f.lstrip().startswith("<tr")]
    assert len(rows) == 1 and 'id="watch-w3"' in rows[0] and 'data-task-state="input-required"' in rows[0]
    # every query about task states names the changed task only (none asks for all 50)
    task_tables = ("web_taskevent", "web_taskrecord")
    stated = [q["sql"] for q in queries.captured_queries if any(t in q["sql"] for t in task_tables)]
    assert stated and all("task-00004" not in sql for sql in stated), stated


def test_a_change_on_another_tab_s_page_reads_no_state(ws: Workspace) -> None:
    """Ten tabs on ten pages of the table: a push touches one tab's page, and the nine others read no task's
    state or progress for it (they did, then dropped the rows they do not show: 6 s behind after a burst)."""
    import asyncio

    asyncio.run(add_watches(ws, 120))
    live = WatchesLive()
    tab = Tab({"q": ""})
    live.start(tab)
    shown = tab.memo["shown_tasks"]
    elsewhere = next(("bot", f"task-{i:05d}") for i in range(120) if ("bot", f"task-{i:05d}") not in shown)
    store(elsewhere[1], "state", "input-required")
    with CaptureQueriesContext(connection) as queries:
        out = live.changed(tab, Changes(tasks={elsewhere}, count=1))
    assert out == []
    read = [q["sql"] for q in queries.captured_queries if "web_taskevent" in q["sql"] or "web_taskrecord" in q["sql"]]
    assert read == []


def test_a_watches_tab_renders_only_the_answer_panel_it_says_it_shows(ws: Workspace) -> None:
    """The watches page shows one answer panel (after a re-check, cancel or send again), and the panel tells the
    tab's socket its task: a change renders that task's panel, not one per changed task."""
    import asyncio

    asyncio.run(add_watches(ws, 3))
    live = WatchesLive()
    tab = Tab({"q": ""})
    live.start(tab)
    store("task-00001", "question", "input-required", "Which city?")
    changes = Changes(tasks={("bot", "task-00001")}, count=1)
    assert not [f for f in live.changed(tab, changes) if 'id="outcome-' in f]
    told = live.told(tab, {"answerAgent": "bot", "answerTask": "task-00001", "HEADERS": {"HX-Request": "true"}})
    assert told is not None and told.tasks == {("bot", "task-00001")} and not told.full
    panels = [f for f in live.changed(tab, changes) if 'id="outcome-' in f]
    assert len(panels) == 1 and "Which city?" in panels[0]
    assert tab.params["q"] == ""  # the panel's message is no search
    for bad in ({"answerAgent": 3, "answerTask": "task-00001"}, {"answerAgent": "bot"}, {"other": "x"}):
        assert live.told(tab, bad) is None
    assert live.told(tab, {"q": "agent:bot"}) == Changes(full=True) and tab.params["q"] == "agent:bot"


async def test_the_first_change_after_a_quiet_moment_goes_out_at_once(
    ws: Workspace, owner_cookie: str, settings
) -> None:
    """Coalescing holds back bursts only: a push after a quiet moment is rendered at once, not a window later
    (the push -> row latency of tests/bench/push_to_row.py)."""
    settings.LIVE_FLUSH_SECONDS = 30.0  # a window far longer than the wait below
    await add_watches(ws, 3)
    comm, ok = await connect_socket("/ws/console/watches/", owner_cookie)
    assert ok
    await frames_until(comm, lambda t: t.count("<tr id=") == 3)
    await sync_to_async(store)("task-00001", "state", "input-required")
    await get_channel_layer().group_send(ALL_GROUP, event("task-00001"))
    got = "".join(await frames_until(comm, lambda t: '<tr id="watch-w1"' in t, timeout=10))
    assert 'data-task-state="input-required"' in got
    await comm.disconnect()


def numbered(task: str, seq: int, event_id: int) -> dict:
    """The message the sink sends for a stored event: its id, and its place in the sender's sequence."""
    message = event(task, origin="o1", group=ALL_GROUP, seq=seq)
    message["event"]["eventId"] = event_id
    return message


async def test_lost_messages_are_caught_up_from_the_events_they_announced(ws: Workspace, owner_cookie: str) -> None:
    """A gap in the sequence after events the tab knows by id: the events in between are read back and their rows
    sent, not the whole table (at 50 pushes a second a tab's queue overflows, and full renders made it worse)."""
    await add_watches(ws, 300)
    comm, ok = await connect_socket("/ws/console/watches/", owner_cookie)
    assert ok
    await frames_until(comm, lambda t: t.count("<tr id=") == 50)  # the first page
    layer = get_channel_layer()
    first = await sync_to_async(store)("task-00001", "state", "submitted")
    await layer.group_send(ALL_GROUP, numbered("task-00001", 1, first))
    await frames_until(comm, lambda t: '<tr id="watch-w1"' in t)
    await sync_to_async(store)("task-00002", "state", "input-required")  # its message (seq 2) is lost
    third = await sync_to_async(store)("task-00003", "state", "auth-required")
    await layer.group_send(ALL_GROUP, numbered("task-00003", 3, third))
    got = "".join(await frames_until(comm, lambda t: '<tr id="watch-w2"' in t and '<tr id="watch-w3"' in t))
    assert 'data-task-state="input-required"' in got and 'data-task-state="auth-required"' in got
    assert 'id="watch-table"' not in got and got.count("<tr id=") == 2
    await comm.disconnect()


async def test_a_burst_of_300_messages_fits_a_tab_s_queue(ws: Workspace, owner_cookie: str, caplog) -> None:
    """50 pushes a second on a busy loop: 300 messages waiting for a tab lose none (the layer's default queue of
    100 dropped the rest, and every tab then read the events back)."""
    await add_watches(ws, 3)
    comm, ok = await connect_socket("/ws/console/watches/", owner_cookie)
    assert ok
    await frames_until(comm, lambda t: t.count("<tr id=") == 3)
    layer = get_channel_layer()
    caplog.set_level("INFO", logger="a2aconsole.web.live.consumer")
    for seq in range(1, 301):  # sent before the tab's consumer runs once
        await layer.group_send(ALL_GROUP, event(f"task-{seq % 3:05d}", origin="o2", group=ALL_GROUP, seq=seq))
    await frames_until(comm, lambda t: '<tr id="watch-w2"' in t)
    assert not [r.getMessage() for r in caplog.records if "missed" in r.getMessage()]
    await comm.disconnect()
