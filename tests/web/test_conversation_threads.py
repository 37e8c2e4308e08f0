"""The conversation reads like a chat: one thread per A2A context (listed, each opened alone, a new one
started from the composer), messages in order with the composer after them, each task's bookkeeping
folded into one status line, and long conversations paged. Events go through the console's real sink."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.test import Client

from a2aconsole.core.events import Event, target_group
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.web.broadcast import _store
from a2aconsole.web.models import ChatTarget
from a2aconsole.web.threads import PAGE_EVENTS
from tests.support.console import connect_socket, create_owner

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
_clock = [T0]


def emit(kind: str, task_id: str, context_id: str, state: str = "", text: str = "", **more: Any) -> None:
    _clock[0] += timedelta(seconds=1)
    fields: dict[str, Any] = {"agent": "bot", "target": "console", **more}
    _store(Event(kind=kind, workspace="/w", task_id=task_id, context_id=context_id, at=_clock[0], state=state,
                 text=text, **fields))  # fmt: skip


@pytest.fixture
def owner(ws: Workspace, db: None) -> Client:
    ChatTarget.objects.create(id="console", name="Console", workspace=str(ws.root))
    ws.save_agents(
        [{"name": "bot", "url": "http://127.0.0.1:9/"}, {"name": "poet", "url": "http://127.0.0.1:9/"}], None
    )
    c = Client()
    c.force_login(create_owner())
    return c


def log_of(html: str) -> str:
    return html.split('id="chat-log"', 1)[1].split('id="reply"', 1)[0]


def two_threads() -> None:
    emit("sent", "t1", "ctx-trip", text="plan a trip to Lisbon")
    emit("result", "t1", "ctx-trip", "completed", "three days in Lisbon")
    emit("sent", "", "ctx-poem", text="write a poem", agent="poet")
    emit("message", "", "ctx-poem", text="roses are red", agent="poet")


@pytest.mark.django_db
def test_threads_listed_and_opened_alone(owner: Client) -> None:
    two_threads()
    html = owner.get("/chat/console/").content.decode()
    threads = html.split('id="threads"', 1)[1].split("</nav>", 1)[0]
    assert threads.index("write a poem") < threads.index("plan a trip to Lisbon")  # latest first
    assert 'href="/chat/console/?context=ctx-trip"' in threads and ">All conversations</a>" in threads
    assert 'href="/chat/console/#composer">New conversation' in threads
    everything = log_of(html)
    assert "three days in Lisbon" in everything and "roses are red" in everything
    assert everything.count('class="thread-mark small"') == 2  # the all view marks where a thread begins
    assert "Start a new conversation</h3>" in html  # the composer of the all view starts one
    trip = owner.get("/chat/console/?context=ctx-trip").content.decode()
    assert "three days in Lisbon" in log_of(trip) and "roses are red" not in log_of(trip)
    assert "plan a trip to Lisbon" in trip.split('id="log-h"', 1)[1].split("</h2>", 1)[0]  # titled
    assert 'value="ctx-trip"' in trip and "Reply in this conversation" in trip  # the composer continues it
    poem = owner.get("/chat/console/?context=ctx-poem").content.decode()
    assert '<option value="poet" selected>' in poem  # replying needs no agent pick
    # the composer is where the eye ends: after the messages
    assert trip.index('id="chat-log"') < trip.index('id="composer"')


@pytest.mark.django_db
def test_bookkeeping_folded_into_one_status_line(owner: Client) -> None:
    emit("sent", "t9", "ctx-9", text="hold on")
    emit("watch.armed", "t9", "ctx-9", data={"source": "poll", "watchId": "w9"})
    emit("state", "t9", "ctx-9", "working")
    emit("state", "t9", "ctx-9", "working", "working 3/8")
    emit("watch.update", "t9", "ctx-9", data={"source": "push"})
    emit("result", "t9", "ctx-9", "completed", "all eight done")
    emit("watch.ended", "t9", "ctx-9", "completed", data={"reason": "completed"})
    emit("delivered", "t9", "ctx-9", "completed", "[A2A result ...]")
    log = log_of(owner.get("/chat/console/?context=ctx-9").content.decode())
    lines = re.findall(r'<li class="task-card[^"]*"[^>]*>(.*?)</li>', log, re.S)
    assert len(lines) == 1
    line = re.sub(r"<[^>]+>|\s+", " ", lines[0])
    for part in (
        "working",
        "following by polling",
        "now following by push",
        "stopped following: completed",
        "result delivered",
    ):
        assert part in line, (part, line)
    assert "kind-watch" not in log and "kind-delivered" not in log  # not interleaved with the messages
    assert log.index("hold on") < log.index("task-card") < log.index("working 3/8") < log.index("all eight done")


@pytest.mark.django_db
def test_long_conversation_paged(owner: Client) -> None:
    for i in range(PAGE_EVENTS * 2 + 5):
        emit("sent", "", "ctx-long", text=f"line {i:03d}")
    latest = owner.get("/chat/console/?context=ctx-long").content.decode()
    shown = re.findall(r"<p>line (\d{3})</p>", log_of(latest))
    assert shown == [f"{i:03d}" for i in range(PAGE_EVENTS + 5, PAGE_EVENTS * 2 + 5)]
    older = re.search(
        r'href="(/chat/console/\?context=ctx-long&amp;before=\d+)"[^>]*rel="prev">Earlier messages', latest
    )
    assert older
    second = owner.get(older.group(1).replace("&amp;", "&")).content.decode()
    assert re.findall(r"<p>line (\d{3})</p>", log_of(second)) == [f"{i:03d}" for i in range(5, PAGE_EVENTS + 5)]
    first = owner.get(
        re.search(r'href="([^"]+)"[^>]*rel="prev"', second).group(1).replace("&amp;", "&")  # type: ignore[union-attr]
    ).content.decode()
    assert re.findall(r"<p>line (\d{3})</p>", log_of(first)) == ["000", "001", "002", "003", "004"]
    assert 'rel="prev"' not in first and "Latest messages" in first


@pytest.mark.django_db(transaction=True)
async def test_thread_live_for_its_context(ws: Workspace, owner_cookie: str) -> None:
    await ChatTarget.objects.acreate(id="console", name="Console", workspace=str(ws.root))
    await sync_to_async(two_threads)()
    comm, connected = await connect_socket("/ws/console/chat/?target=console&context=ctx-trip", owner_cookie)
    assert connected
    first = await comm.receive_from(timeout=5)
    assert "three days in Lisbon" in first and "roses are red" not in log_of(first + 'id="reply"')
    await sync_to_async(emit)("sent", "t2", "ctx-trip", text="and Porto?")
    await get_channel_layer().group_send(target_group("console"), {"type": "a2a.event", "event": {}})
    html = await comm.receive_from(timeout=5)
    assert 'id="chat-log" hx-swap-oob="true"' in html and "and Porto?" in html
    assert re.search(r'<nav id="threads"[^>]*hx-swap-oob="true"', html)  # the thread list moves too
    await comm.disconnect()


@pytest.mark.django_db
def test_the_timeline_speaks_the_owners_language(owner: Client) -> None:
    """#23 item 14: the task page says "Following by push", "Result delivered", not `watch.armed (push)` or
    `watch.ended: settled`, and a final state without text (the result after it says so) is not a row."""
    emit("sent", "t7", "ctx-7", text="take your time")
    emit("watch.armed", "t7", "ctx-7", data={"source": "push", "watchId": "w7"})
    emit("watch.update", "t7", "ctx-7", data={"source": "poll", "note": "the stream failed 3 times; polling instead"})
    emit("state", "t7", "ctx-7", "completed")
    emit("result", "t7", "ctx-7", "completed", "all done")
    emit("watch.ended", "t7", "ctx-7", "completed", data={"reason": "settled", "watchId": "w7"})
    emit("undelivered", "t7", "ctx-7", data={"watchId": "w7", "attempt": 1})
    emit("delivered", "t7", "ctx-7", "completed", "[A2A result ...]")
    page = owner.get("/tasks/bot/t7/?target=console").content.decode()
    timeline = page[page.index('id="timeline-log"') : page.index("timeline-progress")]
    text = re.sub(r"<[^>]+>|\s+", " ", timeline)
    for words in (
        "Following by push",
        "Now following by polling: the stream failed 3 times; polling instead",
        "Stopped following: the task is over",
        "Result not delivered yet (attempt 1): kept, and tried again",
        "Result delivered to the chat console",
    ):
        assert words in text, (words, text)
    assert "watch." not in text and "settled" not in text
    assert timeline.count("<li") == 7 and "kind-state" not in timeline  # the empty `completed` row is gone
