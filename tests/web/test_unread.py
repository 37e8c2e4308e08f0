"""One inbox, read marks and the menu's counts (#23 items 10 and 11): the inbox holds every result, answer and
question of its chat (and a delivered item whose event is gone), marks the ones no tab has shown, and the menu
counts the unread ones of the console's own chats and the questions waiting."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client
from django.utils import timezone

from a2aconsole.core.events import Event
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.web.broadcast import _store
from a2aconsole.web.models import ChatTarget, InboxItem, TaskEvent
from a2aconsole.web.unread import MAX_SEEN
from tests.support.console import owner_client

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def owner(ws: Workspace) -> Client:
    ChatTarget.objects.create(id="console", name="Console", workspace=str(ws.root))
    ChatTarget.objects.create(id="tg", name="Telegram", workspace=str(ws.root), backend="telegram")
    return owner_client()


def emit(kind: str, task_id: str, text: str, state: str = "", seconds: int = 0, target: str = "console") -> int:
    _store(Event(kind=kind, workspace="/w", agent="bot", task_id=task_id, at=T0 + timedelta(seconds=seconds),
                 context_id=f"c-{task_id or 'none'}", target=target, state=state, text=text))  # fmt: skip
    return TaskEvent.objects.filter(kind=kind, text=text).latest("id").id


ITEM = re.compile(
    r'<li class="from-agent inbox-item[^>]*>(.*?)</li>\s*(?=<li class="from-agent inbox-item|</ol>)', re.S
)


def items(html: str) -> list[str]:
    return ITEM.findall(html)


def counts(html: str) -> dict[str, str]:
    found = re.findall(r'<span class="nav-count" data-count="(\w+)"( hidden)?>.*?<span class="n">(\d+)</span>', html)
    return {name: ("" if hidden else n) for name, hidden, n in found}


def three(owner: Client) -> dict[str, int]:
    emit("sent", "t1", "book a table")
    ids = {"result": emit("result", "t1", "table booked", "completed", 10)}
    emit("sent", "", "what time is it?")
    ids["message"] = emit("message", "", "nine o'clock", seconds=20)
    emit("sent", "t2", "plan my trip")
    ids["question"] = emit("question", "t2", "which city?", "input-required", 30)
    return ids


def test_the_inbox_holds_results_answers_and_questions(owner: Client) -> None:
    three(owner)
    InboxItem.objects.create(target_id="console", agent="bot", task_id="t0", state="failed",
                             text='[A2A result from "bot", task t0 (failed)]\nold and gone')  # fmt: skip
    InboxItem.objects.update(created_at=T0 - timedelta(days=1))
    shown = items(owner.get("/inbox/console/").content.decode())
    assert len(shown) == 4
    assert "which city?" in shown[0] and 'name="message"' in shown[0]  # newest first; answered in place
    assert "nine o&#x27;clock" in shown[1] and "You asked:</span> <q>what time is it?" in shown[1]
    assert "table booked" in shown[2] and "book a table" in shown[2]
    assert "old and gone" in shown[3]  # delivered, its event not kept: still there
    assert all('class="badge new"' in s for s in shown[:3]) and "new" not in shown[3]
    assert "not delivered yet" not in "".join(shown)


def test_views_show_only_unread_or_only_questions(owner: Client) -> None:
    ids = three(owner)
    TaskEvent.objects.filter(id=ids["result"]).update(read_at=T0)
    unread = items(owner.get("/inbox/console/?show=unread").content.decode())
    assert len(unread) == 2 and not any("table booked" in s for s in unread)
    questions = items(owner.get("/inbox/?show=questions", follow=True).content.decode())  # the menu's link
    assert len(questions) == 1 and "which city?" in questions[0]
    emit("sent", "t2", "Paris", seconds=40)
    emit("state", "t2", "", "working", 41)
    html = owner.get("/inbox/console/?show=questions").content.decode()
    assert items(html) == [] and "No question is waiting for you." in html


def test_the_menu_counts_unread_items_and_waiting_questions(owner: Client) -> None:
    three(owner)
    emit("result", "t9", "for telegram", "completed", 50, target="tg")  # read in Telegram, not counted
    assert counts(owner.get("/tasks/").content.decode()) == {"inbox": "3", "questions": "1"}
    assert re.search(r"<title>Tasks · a2aconsole</title>", owner.get("/tasks/").content.decode())
    assert owner.get("/unread/").json() == {"inbox": 3, "questions": 1}


def test_shown_items_are_marked_read(owner: Client) -> None:
    ids = three(owner)
    html = owner.get("/inbox/console/").content.decode()
    assert sorted(map(int, re.findall(r'data-unread="(\d+)"', html))) == sorted(ids.values())
    r = owner.post("/unread/seen/", {"ids": f"{ids['result']},{ids['message']}"})
    assert r.json() == {"inbox": 1, "questions": 1}
    assert TaskEvent.objects.filter(read_at__isnull=True, kind__in=["result", "message", "question"]).count() == 1
    chat = owner.get("/chat/console/").content.decode()  # the chat marks what it shows too
    assert re.findall(r'data-unread="(\d+)"', chat) == [str(ids["question"])]
    assert counts(owner.get("/tasks/").content.decode()) == {"inbox": "1", "questions": "1"}


def test_seen_takes_only_inbox_ids(owner: Client) -> None:
    ids = three(owner)
    sent = TaskEvent.objects.get(kind="sent", task_id="t1")
    bad = f"x,-1,{sent.id},9999999,<b>," + ",".join(["1"] * (MAX_SEEN + 5))
    assert owner.post("/unread/seen/", {"ids": bad}).json() == {"inbox": 3, "questions": 1}
    assert TaskEvent.objects.get(id=sent.id).read_at is None  # not an inbox event: never marked
    assert owner.get("/unread/seen/").status_code == 405
    assert Client().post("/unread/seen/", {"ids": str(ids["result"])}).status_code == 302  # logged out: login first
    assert TaskEvent.objects.get(id=ids["result"]).read_at is None


def test_an_item_read_a_moment_ago_stays_marked_new_a_while(owner: Client) -> None:
    ids = three(owner)
    now = timezone.now()
    TaskEvent.objects.filter(id=ids["result"]).update(read_at=now - timedelta(minutes=1))
    TaskEvent.objects.filter(id=ids["message"]).update(read_at=now - timedelta(minutes=11))
    html = owner.get("/inbox/console/").content.decode()
    result, message = (next(s for s in items(html) if text in s) for text in ("table booked", "nine o"))
    assert 'class="badge new"' in result
    assert re.findall(r'data-unread="(\d+)"', html) == [str(ids["question"])]  # read: not posted again
    assert 'class="badge new"' not in message
    assert counts(html) == {"inbox": "1", "questions": "1"}  # the question alone is unread
