"""Lists show what the owner asked (#23 item 12): Tasks, the dashboard's Latest results and the Inbox give each
result the first line of the message that started it, escaped and cut to a line."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client

from a2aconsole.core.events import Event
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.web.asked import CHARS, first_line
from a2aconsole.web.broadcast import _store
from a2aconsole.web.models import ChatTarget, InboxItem
from tests.support.console import owner_client

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
QUESTION = "\n  Book a table for <b>two</b> at 8\nsecond line, not shown"


@pytest.fixture
def owner(ws: Workspace) -> Client:
    """The owner logged in, over the `console` chat of `ws`."""
    ChatTarget.objects.create(id="console", name="Console", workspace=str(ws.root))
    return owner_client()


def emit(kind: str, task_id: str = "t1", text: str = "", state: str = "", seconds: int = 0, **more: object) -> None:
    fields = {"agent": "bot", "target": "console", "context_id": "c1", **more}
    _store(Event(kind=kind, workspace="/w", task_id=task_id, at=T0 + timedelta(seconds=seconds), state=state,
                 text=text, **fields))  # fmt: skip


def booked() -> None:
    emit("sent", text=QUESTION)
    emit("result", text="table booked", state="completed", seconds=5)


def test_first_line_is_the_first_words_cut_to_a_line() -> None:
    assert first_line("\n\n  hello\nworld") == "hello"
    long = first_line("x" * 500)
    assert len(long) == CHARS and long.endswith("…")
    assert first_line("") == ""


def test_the_tasks_page_has_a_you_asked_column(owner: Client) -> None:
    booked()
    html = owner.get("/tasks/").content.decode()
    assert '<th scope="col">You asked</th>' in html
    [cell] = re.findall(r'<td data-label="You asked" class="asked">(.*?)</td>', html)
    assert cell == "Book a table for &lt;b&gt;two&lt;/b&gt; at 8"  # the first line, escaped


def test_latest_results_say_what_was_asked(owner: Client) -> None:
    booked()
    emit("sent", task_id="", text="what time is it?", context_id="c2", seconds=10)
    emit("message", task_id="", text="nine", context_id="c2", seconds=11)
    html = owner.get("/").content.decode()
    latest = html.split('id="latest-results"', 1)[1]
    asked = re.findall(r'<p class="asked small"><span class="muted">You asked:</span> <q>(.*?)</q></p>', latest)
    assert asked == ["what time is it?", "Book a table for &lt;b&gt;two&lt;/b&gt; at 8"]  # newest first


def test_the_inbox_says_what_was_asked(owner: Client) -> None:
    booked()
    InboxItem.objects.create(target_id="console", agent="bot", task_id="t1", context_id="c1", state="completed",
                             text='[A2A result from "bot", task t1 (completed)]\ntable booked')  # fmt: skip
    html = owner.get("/inbox/console/").content.decode()
    assert "You asked:</span> <q>Book a table for &lt;b&gt;two&lt;/b&gt; at 8</q>" in html
    assert "second line" not in html


def test_a_result_without_its_question_shows_no_empty_line(owner: Client) -> None:
    emit("result", task_id="t9", text="out of the blue", state="completed")
    html = owner.get("/").content.decode()
    assert "out of the blue" in html and "You asked" not in html
    assert re.search(r'<td data-label="You asked" class="asked">—</td>', owner.get("/tasks/").content.decode())
