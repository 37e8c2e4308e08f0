"""The Tasks page: every task the console has seen, from the task index the broadcaster keeps with each
stored event; searched with the watch table's syntax plus dates and free text, sorted, paged, kept across
restarts, and updated live. Events go through the real sink (`broadcast._store`); the restart test runs a
real agent, the real tool and a watch."""

from __future__ import annotations

import importlib
import re
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.apps import apps
from django.test import Client, override_settings

from a2aconsole.core import pending
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.events import ALL_GROUP, Event
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.web.broadcast import ChannelsBroadcast, _store
from a2aconsole.web.chats import aresolve
from a2aconsole.web.models import ChatTarget, TaskEvent, TaskRecord
from a2aconsole.web.views.tasklist import PAGE_SIZE
from tests.support.console import connect_socket, create_owner
from tests.support.runtime import fresh_runtime
from tests.support.watching import WaitableSink

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def emit(task_id: str, kind: str, state: str = "", text: str = "", at: datetime = T0, **more: Any) -> None:
    """One event stored as the console's sink stores it (its row and its task's index row)."""
    fields: dict[str, Any] = {"agent": "bot", "target": "console", "context_id": f"ctx-{task_id}", **more}
    _store(Event(kind=kind, workspace="/w", task_id=task_id, at=at, state=state, text=text, **fields))


def finished(task_id: str, answer: str, at: datetime = T0, minutes: int = 3, **more: Any) -> None:
    emit(task_id, "sent", text=f"please {task_id}", at=at, **more)
    emit(task_id, "state", "working", at=at + timedelta(seconds=1), **more)
    emit(task_id, "result", "completed", answer, at=at + timedelta(minutes=minutes), **more)


@pytest.fixture
def owner(db: None) -> Client:
    c = Client()
    c.force_login(create_owner())
    return c


def rows(html: str) -> list[str]:
    """The task ids of the table's rows, in order."""
    return re.findall(r'<td data-label="Task" class="ids"><span class="short-id"><a href="/tasks/[^/]+/([^/]+)/', html)


@pytest.mark.django_db
def test_running_and_finished_tasks_listed(owner: Client) -> None:
    finished("t-done", "the final answer", minutes=3)
    emit("t-run", "sent", text="book a flight", at=T0 + timedelta(hours=1))
    emit("t-run", "watch.armed", at=T0 + timedelta(hours=1), data={"source": "poll", "watchId": "w1"})
    emit("t-run", "state", "working", "working 3/8", at=T0 + timedelta(hours=1, seconds=2))
    html = owner.get("/tasks/").content.decode()
    assert rows(html) == ["t-run", "t-done"]  # newest first
    _, run, done = html.split('<tr id="task-')
    assert 'badge state-working">working' in run and "poll" in run and "working 3/8" in run and "so far" in run
    assert 'badge state-completed">completed' in done and "the final answer" in done and "3m 00s" in done
    assert 'href="/chat/console/?context=ctx-t-done"' in done and 'href="/tasks/bot/t-done/?target=console"' in done
    assert "2026-12-01 09:00:00" in done  # started
    assert "1–2 of 2 tasks" in html


@pytest.mark.django_db
def test_search_syntax_dates_and_free_text(owner: Client) -> None:
    finished("t-a", "invoice for march", agent="bot")
    finished("t-b", "a poem", at=T0 + timedelta(days=1), agent="poet")
    emit("t-c", "state", "working", at=T0 + timedelta(days=2), target="team")
    emit("t-c", "watch.armed", at=T0 + timedelta(days=2), target="team", data={"source": "push"})

    def found(q: str) -> list[str]:
        r = owner.get("/tasks/", {"q": q})
        assert r.status_code == 200
        return rows(r.content.decode())

    assert found("agent:poet") == ["t-b"]
    assert found("state:completed") == ["t-b", "t-a"]
    assert found("source:push") == ["t-c"] and found("chat:team") == ["t-c"] and found("target:team") == ["t-c"]
    assert found("INVOICE") == ["t-a"]  # free text: what was said, any case
    assert found('"for march"') == ["t-a"] and found('"march for"') == []  # a quoted phrase
    assert found("please t-b") == ["t-b"]  # the message sent
    assert found("ctx-t-a") == ["t-a"] and found("t-c") == ["t-c"]  # context and task ids
    assert found("on:2026-12-02") == ["t-b"]
    assert found("after:2026-12-02") == ["t-c", "t-b"] and found("before:2026-12-02") == ["t-a"]
    assert found("after:2026-12-02 state:completed") == ["t-b"]
    bad = owner.get("/tasks/", {"q": "after:yesterday agent:bot state:completed"}).content.decode()
    assert "after: wants a date like 2026-12-03, not &#x27;yesterday&#x27;" in bad and rows(bad) == ["t-a"]
    assert found('"for march') == ["t-a"] and found("march's") == []  # a stray quote, an apostrophe
    none = owner.get("/tasks/", {"q": "agent:nobody"}).content.decode()
    assert "No task matches" in none and "Show all 3" in none


@pytest.mark.django_db
def test_sorting_by_column(owner: Client) -> None:
    finished("t-long", "x", at=T0, minutes=50, agent="zed")
    finished("t-short", "y", at=T0 + timedelta(hours=1), minutes=1, agent="amy")
    finished("t-mid", "z", at=T0 + timedelta(hours=2), minutes=10, agent="max")
    emit("t-run", "state", "working", at=datetime.now(UTC) - timedelta(minutes=20), agent="bob")  # 20 min so far
    assert rows(owner.get("/tasks/").content.decode()) == ["t-run", "t-mid", "t-short", "t-long"]
    assert rows(owner.get("/tasks/?sort=started").content.decode()) == ["t-long", "t-short", "t-mid", "t-run"]
    assert rows(owner.get("/tasks/?sort=-duration").content.decode()) == ["t-long", "t-run", "t-mid", "t-short"]
    assert rows(owner.get("/tasks/?sort=duration").content.decode()) == ["t-short", "t-mid", "t-run", "t-long"]
    html = owner.get("/tasks/?sort=agent").content.decode()
    assert rows(html) == ["t-short", "t-run", "t-mid", "t-long"]
    assert 'aria-sort="ascending"><a href="?sort=-agent&amp;">Agent ↑' in html  # the header flips the order
    bad = owner.get("/tasks/?sort=secret").content.decode()
    assert "cannot sort by &#x27;secret&#x27;" in bad and rows(bad) == ["t-run", "t-mid", "t-short", "t-long"]


def link(html: str, label: str) -> str:
    """The pager's link named `label` (First, Previous, Next, Last), unescaped."""
    [href] = re.findall(rf'<a href="([^"]+)"(?: rel="\w+")?>{label}</a>', html)
    return href.replace("&amp;", "&")


def walk(client: Client, url: str, pages: int) -> list[list[str]]:
    """The rows of `pages` pages, from `url` on by each page's Next link."""
    seen = []
    for _ in range(pages):
        html = client.get("/tasks/" + url).content.decode()
        seen.append(rows(html))
        url = link(html, "Next") if len(seen) < pages else ""
    return seen


@pytest.mark.django_db
def test_pages(owner: Client) -> None:
    n = PAGE_SIZE * 2 + 20
    for i in range(n):
        emit(f"t{i:03d}", "state", "working", at=T0 + timedelta(minutes=i))
    first = owner.get("/tasks/").content.decode()
    assert rows(first) == [f"t{i:03d}" for i in range(n - 1, n - 1 - PAGE_SIZE, -1)]  # newest first
    assert f"1–{PAGE_SIZE} of {n} tasks" in first and link(first, "Last") == "?last=1"
    assert '<span class="muted" aria-disabled="true">Previous</span>' in first
    last = owner.get("/tasks/?last=1").content.decode()
    oldest = [f"t{i:03d}" for i in range(PAGE_SIZE - 1, -1, -1)]  # the last page: the oldest, a full page
    assert rows(last) == oldest and f"{n - PAGE_SIZE + 1}–{n} of {n}" in last
    assert '<span class="muted" aria-disabled="true">Next</span>' in last
    second = owner.get("/tasks/" + link(last, "Previous")).content.decode()
    assert rows(second) == [f"t{i:03d}" for i in range(PAGE_SIZE * 2 - 1, PAGE_SIZE - 1, -1)]
    assert f"{n - 2 * PAGE_SIZE + 1}–{n - PAGE_SIZE} of {n}" in second
    assert rows(owner.get("/tasks/?page=99").content.decode()) == rows(first)  # an old page link: the first page
    kept = owner.get("/tasks/", {"q": "state:working", "sort": "started"}).content.decode()
    assert link(kept, "Next").startswith("?q=state%3Aworking&sort=started&after=")
    assert rows(owner.get("/tasks/" + link(kept, "Next")).content.decode())[0] == f"t{PAGE_SIZE:03d}"


@pytest.mark.django_db
def test_duration_order_holds_across_pages(owner: Client) -> None:
    """Finished and running tasks merged by how long they ran, page after page."""
    now = datetime.now(UTC)
    took: dict[str, float] = {}
    for i in range(PAGE_SIZE * 2 + 7):
        if i % 2:  # running for i minutes so far
            emit(f"t{i:03d}", "state", "working", at=now - timedelta(minutes=i))
        else:  # ran i*1.5 minutes and 15 s (no tie with a running one), a while ago
            emit(f"t{i:03d}", "sent", text="go", at=T0 + timedelta(hours=i))
            emit(f"t{i:03d}", "result", "completed", "done", at=T0 + timedelta(hours=i, minutes=i * 1.5, seconds=15))
        took[f"t{i:03d}"] = i * 60 if i % 2 else i * 90 + 15
    longest = sorted(took, key=lambda t: -took[t])
    for sort, expected in (("-duration", longest), ("duration", longest[::-1])):
        pages = walk(owner, f"?sort={sort}", 3)
        assert [t for page in pages for t in page] == expected, sort


@pytest.mark.django_db
def test_late_event_never_moves_a_task_back() -> None:
    """Events stored out of order (a slow writer) fold by their time: the finished task stays finished."""
    emit("t-late", "sent", text="go", at=T0)
    emit("t-late", "result", "completed", "done", at=T0 + timedelta(minutes=2))
    emit("t-late", "state", "working", "working 1/2", at=T0 + timedelta(minutes=1))  # arrives last
    emit("t-late", "delivered", "completed", at=T0 + timedelta(minutes=3))
    r = TaskRecord.objects.get(task_id="t-late")
    assert (r.state, r.last_text, r.result_text, r.events) == ("completed", "done", "done", 4)
    assert r.finished_at == T0 + timedelta(minutes=2) and r.run_seconds == 120  # the first terminal event


@pytest.mark.django_db
def test_backfill_folds_the_history_already_stored() -> None:
    """The migration gives tasks recorded before the index their rows."""
    for kind, state, text in [("sent", "", "hi"), ("state", "working", ""), ("result", "completed", "done")]:
        TaskEvent.objects.create(
            workspace="/w", agent="bot", task_id="old", target="console", kind=kind, state=state, text=text,
            created_at=T0,
        )  # fmt: skip
    TaskEvent.objects.create(workspace="/w", agent="bot", task_id="", kind="error", created_at=T0)
    migration = importlib.import_module("a2aconsole.web.migrations.0005_task_record")
    migration.backfill(apps, None)
    [r] = TaskRecord.objects.all()
    assert (r.task_id, r.state, r.result_text, r.sent_text, r.events) == ("old", "completed", "done", "hi", 3)
    assert r.finished_at == T0


# kept across restarts: a new runtime over the same database

SETTINGS = ClientSettings(wait_seconds=0.2, card_timeout_seconds=3, call_timeout=10)


@pytest.fixture
def space(tmp_path: Path) -> Iterator[Workspace]:
    w = Workspace(tmp_path / "ws")
    w.root.mkdir(parents=True)
    with override_settings(WORKSPACE_DIR=w.root):
        yield w


@pytest.fixture
async def console(space: Workspace, make_agent) -> AsyncIterator[Any]:
    await ChatTarget.objects.acreate(id="console", name="Console", workspace=str(space.root))
    agent = make_agent(push=False)
    space.save_agents([{"name": "bot", "url": agent.url}], None)
    yield agent


@pytest.mark.django_db(transaction=True)
async def test_finished_watch_stays_findable_after_restart(console: Any, space: Workspace) -> None:
    agent = console
    events = WaitableSink(ChannelsBroadcast())
    async with fresh_runtime(client_settings=SETTINGS, events=events) as rt:
        await rt.start_registry([space])
        out = await rt.tool.run("send", {"agent": "bot", "message": "hold late"}, await aresolve("console"))
        assert out.get("state") == "working", out
        agent.release("late")
        await events.until_kind("delivered")
    assert pending.read(space).records == []  # the watch is gone from pending.json
    async with fresh_runtime(client_settings=SETTINGS):  # the console started again
        owner = Client()
        await sync_to_async(owner.force_login)(await sync_to_async(create_owner)())
        html = (await sync_to_async(owner.get)("/tasks/", {"q": "released"})).content.decode()
    assert rows(html) == [out["taskId"]]
    assert 'badge state-completed">completed' in html and "released late" in html


@pytest.mark.django_db(transaction=True)
async def test_rows_update_live(owner_cookie: str) -> None:
    comm, connected = await connect_socket("/ws/console/tasks/?q=state%3Aworking", owner_cookie)
    assert connected
    assert "No tasks yet" in await comm.receive_from(timeout=5)
    await sync_to_async(emit)("t-live", "state", "working", "working 1/2")
    await get_channel_layer().group_send(ALL_GROUP, {"type": "a2a.event", "event": {}})
    html = await comm.receive_from(timeout=5)
    assert 'id="task-table" hx-swap-oob="true"' in html and "t-live" in html and "working 1/2" in html
    await comm.disconnect()
