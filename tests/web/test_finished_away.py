"""A task that settled while no console followed it (its restored watch's `watch.ended` says `away`: the core's rule,
tests/core/watches/test_watch_away.py) is marked "finished while you were away" on the Tasks page, on its task page
and in its timeline; a task that finished while the console ran is not."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.test import Client

from a2aconsole.core.events import Event
from a2aconsole.web.broadcast import _store
from tests.support.console import create_owner

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
AWAY = "finished while you were away"


def finished(task_id: str, **ended: Any) -> None:
    """A task's events as the console's sink stores them: sent, working, its result, its watch's end."""
    for i, (kind, state, data) in enumerate(
        [
            ("sent", "", {}),
            ("state", "working", {}),
            ("result", "completed", {}),
            ("watch.ended", "completed", {"reason": "settled", "watchId": f"w-{task_id}", **ended}),
        ]
    ):
        at = T0 + timedelta(minutes=i)
        _store(Event(kind, "/w", "bot", task_id, at, context_id="ctx", target="console", state=state, data=data))


@pytest.fixture
def owner(db: None) -> Client:
    c = Client()
    c.force_login(create_owner())
    return c


def row(html: str, task_id: str) -> str:
    start = html.index(f'href="/tasks/bot/{task_id}/')
    return html[html.rindex("<tr", 0, start) : html.index("</tr>", start)]


@pytest.mark.django_db
def test_a_task_that_finished_while_away_is_marked(owner: Client) -> None:
    finished("t-away", away=True)
    finished("t-here")
    tasks = owner.get("/tasks/").content.decode()
    assert AWAY in row(tasks, "t-away")
    assert AWAY not in row(tasks, "t-here")

    page = owner.get("/tasks/bot/t-away/?target=console").content.decode()
    state = page[page.index('id="task-state"') : page.index("</dd>", page.index('id="task-state"'))]
    assert AWAY in state
    timeline = re.sub(r"<[^>]+>|\s+", " ", page[page.index('id="timeline-log"') :])
    assert "Stopped following: the task is over (completed; it finished while you were away)" in timeline
    assert AWAY not in owner.get("/tasks/bot/t-here/?target=console").content.decode()
