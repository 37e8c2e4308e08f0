"""The console tab's WebSocket through the real routed ASGI app: owner session required, current state at
connect, and fragments re-rendered when an event arrives on the page's group."""

from __future__ import annotations

import re

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer

from a2aconsole.core import pending
from a2aconsole.core.events import ALL_GROUP, target_group, task_group
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.pending.records import WatchRecord
from a2aconsole.web.history import dom_id
from a2aconsole.web.models import ChatTarget, InboxItem
from tests.support.console import connect_socket, record_event

pytestmark = pytest.mark.django_db(transaction=True)


async def test_logged_out_socket_refused(ws: Workspace) -> None:
    comm, connected = await connect_socket("/ws/console/watches/", None)
    assert not connected
    await comm.disconnect()


async def test_unknown_page_refused(ws: Workspace, owner_cookie: str) -> None:
    comm, connected = await connect_socket("/ws/console/nothing/", owner_cookie)
    assert not connected
    await comm.disconnect()


async def test_watch_table_sent_at_connect_and_after_event(ws: Workspace, owner_cookie: str) -> None:
    comm, connected = await connect_socket("/ws/console/watches/", owner_cookie)
    assert connected
    first = await comm.receive_from(timeout=5)
    assert 'id="watch-table"' in first and "No watches" in first
    async with pending.transaction(ws) as tx:
        tx.add(WatchRecord("w1", "console", "bot", "task-123", "ctx-9", started_at="2026-01-01T00:00:00Z"))
    await get_channel_layer().group_send(ALL_GROUP, {"type": "a2a.event", "event": {"kind": "watch.armed"}})
    html = await comm.receive_from(timeout=5)
    assert 'id="watch-table"' in html and "1 of 1 watch" in html
    html = await comm.receive_from(timeout=5)  # the rows come in frames of their own
    assert "task-123" in html and "ctx-9" in html
    # the search box (htmx ws-send) filters the table for this tab
    await comm.send_to(text_data='{"q": "agent:other", "HEADERS": {}}')
    html = await comm.receive_from(timeout=5)
    assert "task-123" not in html and "No watch matches" in html
    await comm.disconnect()


async def test_chat_log_live(ws: Workspace, console_target: ChatTarget, owner_cookie: str) -> None:
    comm, connected = await connect_socket("/ws/console/chat/?target=console", owner_cookie)
    assert connected
    assert "Nothing yet" in await comm.receive_from(timeout=5)
    await sync_to_async(record_event)(ws, "t1", "result", "completed", "the final answer")
    event = {"kind": "result", "agent": "bot", "task_id": "t1"}
    await get_channel_layer().group_send(target_group("console"), {"type": "a2a.event", "event": event})
    html = await comm.receive_from(timeout=5)
    assert "the final answer" in html and 'id="chat-log"' in html
    # the task's answer panel, badge and text from one render (a tab without that panel drops it)
    assert f'id="outcome-{dom_id("bot", "t1")}" hx-swap-oob="true"' in html
    assert f'id="state-{dom_id("bot", "t1")}"' in html and 'data-task-state="completed"' in html
    await comm.disconnect()


async def test_task_timeline_live(ws: Workspace, owner_cookie: str) -> None:
    comm, connected = await connect_socket("/ws/console/task/?agent=bot&task=t1&target=console", owner_cookie)
    assert connected
    assert "No events recorded" in await comm.receive_from(timeout=5)
    await sync_to_async(record_event)(ws, "t1", "question", "input-required", "Which colour?")
    await get_channel_layer().group_send(task_group("bot", "t1"), {"type": "a2a.event", "event": {}})
    html = await comm.receive_from(timeout=5)
    assert "Which colour?" in html and 'id="task-state"' in html and "input-required" in html
    assert 'name="message"' in html  # answerable inline
    assert 'id="task-controls"' in html and "Cancel the task" in html and "Answer the question" in html
    assert 'id="task-actions"' not in html  # the form itself is never replaced (a re-check in flight keeps it)
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d</time>", html)  # a timeline's times carry the date
    await sync_to_async(record_event)(ws, "t1", "result", "completed", "blue it is")
    await get_channel_layer().group_send(task_group("bot", "t1"), {"type": "a2a.event", "event": {}})
    html = await comm.receive_from(timeout=5)
    assert "blue it is" in html and "Cancel the task" not in html and "Answer the question" not in html
    await comm.disconnect()


async def test_dashboard_and_inbox_live(ws: Workspace, console_target: ChatTarget, owner_cookie: str) -> None:
    dash, ok1 = await connect_socket("/ws/console/dashboard/", owner_cookie)
    inbox, ok2 = await connect_socket("/ws/console/inbox/?target=console", owner_cookie)
    assert ok1 and ok2
    first = await dash.receive_from(timeout=5)
    assert 'id="attention" aria-live="polite" hx-swap-oob="true"' in first and "Nothing needs you" in first
    assert "No results yet" in await inbox.receive_from(timeout=5)
    await sync_to_async(InboxItem.objects.create)(
        target=console_target, agent="bot", task_id="t1", text="result for you"
    )
    await sync_to_async(record_event)(ws, "t2", "question", "input-required", "Which size?")
    layer = get_channel_layer()
    await layer.group_send(ALL_GROUP, {"type": "a2a.event", "event": {}})
    await layer.group_send(target_group("console"), {"type": "a2a.event", "event": {}})
    assert "Which size?" in await dash.receive_from(timeout=5)
    assert "result for you" in await inbox.receive_from(timeout=5)
    await dash.disconnect()
    await inbox.disconnect()
