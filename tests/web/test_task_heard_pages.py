"""A followed task's page and its Tasks row say when the agent last answered, and "no news since 21:04 (why)" in the
warning style once the silence is news, as its watch row does; the task page's live update keeps it current (and
keeps Stop watching on a watched task)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from asgiref.sync import sync_to_async
from django.utils import timezone

from a2aconsole.core import pending
from a2aconsole.core.events import Event
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.pending.records import WatchRecord
from a2aconsole.core.watches.heard import HEARD_AT, LAST_ERROR
from a2aconsole.web.broadcast import _store
from a2aconsole.web.live import Changes, Tab, page

pytestmark = pytest.mark.django_db(transaction=True)
REFUSED = 'agent "bot" is unreachable (ConnectError); is it running? <b>x</b>'


def hhmm(at: datetime) -> str:
    return f"{timezone.localtime(at):%H:%M}"


def plain(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def started(task_id: str, at: datetime) -> None:
    """The task's events as the console's sink stores them: its Tasks row, working."""
    for kind, state in (("sent", ""), ("state", "working")):
        _store(Event(kind=kind, workspace="/w", task_id=task_id, at=at, state=state, agent="bot", target="console"))


async def watch(ws: Workspace, task_id: str, heard: datetime, error: str) -> None:
    extra = {HEARD_AT: heard.isoformat(), **({LAST_ERROR: error} if error else {})}
    async with pending.transaction(ws) as tx:  # as the worker last wrote it
        tx.add(WatchRecord(f"w-{task_id}", "console", "bot", task_id, started_at=heard.isoformat(), extra=extra))


async def test_the_task_page_and_its_row_say_no_news_past_the_threshold(ws: Workspace, owner) -> None:
    now = datetime.now(UTC)
    long_ago, just_now = now - timedelta(minutes=20), now - timedelta(seconds=30)
    await sync_to_async(started)("t-quiet", long_ago)
    await sync_to_async(started)("t-new", just_now)
    await watch(ws, "t-quiet", long_ago, REFUSED)
    await watch(ws, "t-new", just_now, "")

    quiet = (await owner.get("/tasks/bot/t-quiet/?target=console")).content.decode()
    state = quiet[quiet.index('id="task-state"') : quiet.index("</dd>", quiet.index('id="task-state"'))]
    assert f'class="small quiet heard" role="status">no news since {hhmm(long_ago)} (agent &quot;bot&quot;' in state
    assert "&lt;b&gt;x&lt;/b&gt;" in state and "<b>x</b>" not in quiet  # the agent's bytes, escaped
    fresh = (await owner.get("/tasks/bot/t-new/?target=console")).content.decode()
    assert f"last heard {hhmm(just_now)}" in plain(fresh) and "no news" not in fresh

    table = (await owner.get("/tasks/")).content.decode()
    row = {
        t: table[: table.index("</tr>", table.index(f"/tasks/bot/{t}/"))].rsplit("<tr", 1)[1]
        for t in ("t-quiet", "t-new")
    }
    assert f"no news since {hhmm(long_ago)}" in row["t-quiet"] and "quiet heard" in row["t-quiet"]
    assert f"last heard {hhmm(just_now)}" in row["t-new"] and "no news" not in row["t-new"]


async def test_a_task_nobody_watches_says_nothing_of_news(ws: Workspace, owner) -> None:
    await sync_to_async(started)("t-alone", datetime.now(UTC))
    html = (await owner.get("/tasks/bot/t-alone/?target=console")).content.decode()
    assert "last heard" not in html and "no news" not in html
    assert "last heard" not in (await owner.get("/tasks/")).content.decode()


async def test_the_task_page_live_update_tells_the_silence(ws: Workspace) -> None:
    """The worker records the failing call, then tells the silence as a `watch.update`: the open task page's state
    says so at that event, and Stop watching stays (the watch goes on)."""
    now = datetime.now(UTC)
    await sync_to_async(started)("t-live", now)
    await watch(ws, "t-live", now, "")
    live = page("task")
    assert live is not None
    tab = Tab({"agent": "bot", "task": "t-live", "target": "console"})
    await live.prepare(tab)
    first = "".join(await sync_to_async(live.full)(tab))
    assert "last heard" in first and "no news" not in first and "Stop watching…" in first

    long_ago = now - timedelta(minutes=20)
    async with pending.transaction(ws) as tx:
        rec = tx.edit("w-t-live")
        assert rec is not None
        rec.extra = {HEARD_AT: long_ago.isoformat(), LAST_ERROR: "connection refused"}
    data = {"news": "quiet", "heardAt": long_ago.isoformat(), "error": "connection refused", "watchId": "w-t-live"}
    ev = Event(kind="watch.update", workspace="/w", task_id="t-live", at=now, agent="bot", target="console", data=data)
    await sync_to_async(_store)(ev)
    await live.prepare(tab)
    out = "".join(await sync_to_async(live.changed)(tab, Changes(tasks={("bot", "t-live")}, count=1)))
    assert f"no news since {hhmm(long_ago)} (connection refused)" in out
    assert f"No news since {hhmm(long_ago)} (connection refused)" in plain(out)  # the timeline's entry
    assert "Stop watching…" in out
