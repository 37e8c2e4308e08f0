"""The console tab's WebSocket through the real routed ASGI app: owner session required, current state at
connect, and fragments re-rendered when an event arrives on the page's group."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.test import Client, override_settings
from django.utils import timezone

from a2aconsole.asgi import application
from a2aconsole.core.events import ALL_GROUP, target_group, task_group
from a2aconsole.core.pending import WatchRecord
from a2aconsole.core.workspace import Workspace
from a2aconsole.web.models import ChatTarget, InboxItem, TaskEvent

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    w = Workspace(tmp_path / "ws")
    w.root.mkdir(parents=True)
    with override_settings(WORKSPACE_DIR=w.root):
        yield w


def _session_cookie() -> str:
    user = get_user_model().objects.create_user("owner", password="a long password 1")
    c = Client()
    c.force_login(user)
    return c.cookies["sessionid"].value


async def _connect(path: str, cookie: str | None) -> tuple[WebsocketCommunicator, bool]:
    headers = [(b"origin", b"http://127.0.0.1")]
    if cookie:
        headers.append((b"cookie", f"sessionid={cookie}".encode()))
    comm = WebsocketCommunicator(application, path, headers=headers)
    connected, _ = await comm.connect(timeout=5)
    return comm, connected


async def test_logged_out_socket_refused(ws: Workspace) -> None:
    comm, connected = await _connect("/ws/console/watches/", None)
    assert not connected
    await comm.disconnect()


async def test_unknown_page_refused(ws: Workspace) -> None:
    cookie = await sync_to_async(_session_cookie)()
    comm, connected = await _connect("/ws/console/nothing/", cookie)
    assert not connected
    await comm.disconnect()


async def test_watch_table_sent_at_connect_and_after_event(ws: Workspace) -> None:
    cookie = await sync_to_async(_session_cookie)()
    comm, connected = await _connect("/ws/console/watches/", cookie)
    assert connected
    first = await comm.receive_from(timeout=5)
    assert 'id="watch-table"' in first and "No watches" in first
    async with ws.pending_tx() as tx:
        tx.records.append(WatchRecord("w1", "console", "bot", "task-123", "ctx-9", started_at="2026-01-01T00:00:00Z"))
    await get_channel_layer().group_send(ALL_GROUP, {"type": "a2a.event", "event": {"kind": "watch.armed"}})
    html = await comm.receive_from(timeout=5)
    assert "task-123" in html and "ctx-9" in html
    # the search box (htmx ws-send) filters the table for this tab
    await comm.send_to(text_data='{"q": "agent:other", "HEADERS": {}}')
    html = await comm.receive_from(timeout=5)
    assert "task-123" not in html and "No watch matches" in html
    await comm.disconnect()


async def test_chat_log_live(ws: Workspace) -> None:
    cookie = await sync_to_async(_session_cookie)()
    await sync_to_async(ChatTarget.objects.create)(id="console", name="Console", workspace=str(ws.root))
    comm, connected = await _connect("/ws/console/chat/?target=console", cookie)
    assert connected
    assert "Nothing yet" in await comm.receive_from(timeout=5)
    await sync_to_async(TaskEvent.objects.create)(
        workspace=str(ws.root),
        agent="bot",
        task_id="t1",
        target="console",
        kind="result",
        state="completed",
        text="the final answer",
        created_at=timezone.now(),
    )
    await get_channel_layer().group_send(target_group("console"), {"type": "a2a.event", "event": {}})
    html = await comm.receive_from(timeout=5)
    assert "the final answer" in html and 'id="chat-log"' in html
    assert 'id="state-' in html and 'data-task-state="completed"' in html
    await comm.disconnect()


async def test_task_timeline_live(ws: Workspace) -> None:
    cookie = await sync_to_async(_session_cookie)()
    comm, connected = await _connect("/ws/console/task/?agent=bot&task=t1&target=console", cookie)
    assert connected
    assert "No events recorded" in await comm.receive_from(timeout=5)
    await sync_to_async(TaskEvent.objects.create)(
        workspace=str(ws.root),
        agent="bot",
        task_id="t1",
        target="console",
        kind="question",
        state="input-required",
        text="Which colour?",
        created_at=timezone.now(),
    )
    await get_channel_layer().group_send(task_group("bot", "t1"), {"type": "a2a.event", "event": {}})
    html = await comm.receive_from(timeout=5)
    assert "Which colour?" in html and 'id="task-state"' in html and "input-required" in html
    assert 'name="message"' in html  # answerable inline
    assert 'id="task-actions"' in html and "Cancel the task" in html and "Answer the question" in html
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d</time>", html)  # a timeline's times carry the date
    await sync_to_async(TaskEvent.objects.create)(
        workspace=str(ws.root),
        agent="bot",
        task_id="t1",
        target="console",
        kind="result",
        state="completed",
        text="blue it is",
        created_at=timezone.now(),
    )
    await get_channel_layer().group_send(task_group("bot", "t1"), {"type": "a2a.event", "event": {}})
    html = await comm.receive_from(timeout=5)
    assert "blue it is" in html and "Cancel the task" not in html and "Answer the question" not in html
    await comm.disconnect()


async def test_dashboard_and_inbox_live(ws: Workspace) -> None:
    cookie = await sync_to_async(_session_cookie)()
    target = await sync_to_async(ChatTarget.objects.create)(id="console", name="Console", workspace=str(ws.root))
    dash, ok1 = await _connect("/ws/console/dashboard/", cookie)
    inbox, ok2 = await _connect("/ws/console/inbox/?target=console", cookie)
    assert ok1 and ok2
    first = await dash.receive_from(timeout=5)
    assert 'id="attention" aria-live="polite" hx-swap-oob="true"' in first and "Nothing needs you" in first
    assert "No results yet" in await inbox.receive_from(timeout=5)
    await sync_to_async(InboxItem.objects.create)(target=target, agent="bot", task_id="t1", text="result for you")
    await sync_to_async(TaskEvent.objects.create)(
        workspace=str(ws.root),
        agent="bot",
        task_id="t2",
        target="console",
        kind="question",
        state="input-required",
        text="Which size?",
        created_at=timezone.now(),
    )
    layer = get_channel_layer()
    await layer.group_send(ALL_GROUP, {"type": "a2a.event", "event": {}})
    await layer.group_send(target_group("console"), {"type": "a2a.event", "event": {}})
    assert "Which size?" in await dash.receive_from(timeout=5)
    assert "result for you" in await inbox.receive_from(timeout=5)
    await dash.disconnect()
    await inbox.disconnect()
