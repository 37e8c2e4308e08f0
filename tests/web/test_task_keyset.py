# ruff: noqa: F811  (the `owner` fixture imported from test_tasks_page, then requested by name)
"""Keyset pages of the Tasks page (`task_pages`): First, Previous, Next and Last links that read past a cursor,
so a page stays what it was when tasks arrive meanwhile, and a damaged link is a notice, never a server error."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from a2aconsole.web.models import TaskRecord
from a2aconsole.web.task_pages import COUNT_CAP, PAGE_SIZE
from tests.web.test_tasks_page import T0, emit, link, owner, rows, walk  # noqa: F401  (owner: a fixture)

pytestmark = pytest.mark.django_db
N = PAGE_SIZE * 3 + 4


@pytest.fixture
def tasks() -> list[str]:
    """N tasks, one a minute, by five agents; newest first."""
    for i in range(N):
        emit(f"t{i:03d}", "state", "working", at=T0 + timedelta(minutes=i), agent=f"a{i % 5}")
    return [f"t{i:03d}" for i in range(N - 1, -1, -1)]


def page(client: Client, url: str) -> str:
    r = client.get("/tasks/" + url)
    assert r.status_code == 200
    return r.content.decode()


def test_forward_back_and_last(owner: Client, tasks: list[str]) -> None:
    pages = walk(owner, "", 4)
    assert [t for p in pages for t in p] == tasks  # every task once, in order
    second = page(owner, link(page(owner, ""), "Next"))
    third = page(owner, link(second, "Next"))
    assert rows(page(owner, link(third, "Previous"))) == rows(second)  # back is where we were
    assert rows(page(owner, link(second, "First"))) == tasks[:PAGE_SIZE]
    last = page(owner, "?last=1")
    assert rows(last) == tasks[-PAGE_SIZE:] and link(last, "First") == "?"
    assert rows(page(owner, link(last, "Previous"))) == tasks[-2 * PAGE_SIZE : -PAGE_SIZE]


def test_each_sort_pages_through_every_task_once(owner: Client, tasks: list[str]) -> None:
    for sort in ("agent", "-agent", "state", "chat", "updated", "-started", "duration", "-duration"):
        seen = [t for p in walk(owner, f"?sort={sort}", 4) for t in p]
        assert sorted(seen) == sorted(tasks), sort
    by_agent = [t for p in walk(owner, "?sort=agent", 4) for t in p]
    assert by_agent == sorted(tasks, key=lambda t: (f"a{int(t[1:]) % 5}", t))  # then by when started


def test_a_page_stays_put_while_tasks_arrive(owner: Client, tasks: list[str]) -> None:
    first = page(owner, "")
    for i in range(10):  # newer tasks, above the first page
        emit(f"new{i}", "state", "working", at=T0 + timedelta(days=1, minutes=i))
    assert rows(page(owner, link(first, "Next"))) == tasks[PAGE_SIZE : 2 * PAGE_SIZE]  # not shifted by ten


def test_bad_cursors_show_the_first_page_with_a_notice(owner: Client, tasks: list[str]) -> None:
    def made(*value: object) -> str:
        return base64.urlsafe_b64encode(json.dumps(list(value)).encode()).decode()

    bad = [
        "garbage",
        "%%%",
        made("-started", ["not a time", 3], 1),
        made("-started", ["2026-12-01T09:00:00", 3], 1),  # no time zone
        made("-started", ["2026-12-01T09:00:00+00:00", "3"], 1),
        made("-started", ["2026-12-01T09:00:00+00:00"], 1),
        made("-started", {"a": 1}, 1),
        made("-duration", ["x", 1.0, 3], None),
        made("-duration", ["f", "long", 3], None),
        made("-started", ["2026-12-01T09:00:00+00:00", 3], -4),
        made("-agent", ["a1", "2026-12-01T09:00:00+00:00", 3], 1),  # made for another sort
        made("only", "two"),
    ]
    for cursor in bad:
        for place in ("after", "before"):
            html = page(owner, f"?{place}={cursor}")
            assert rows(html) == tasks[:PAGE_SIZE], cursor
            assert "page link" in html and "showing the first page" in html, cursor


def test_counts_stop_at_the_cap(owner: Client) -> None:
    TaskRecord.objects.bulk_create(
        TaskRecord(agent="bot", task_id=f"b{i}", state="completed", started_at=T0, updated_at=T0)
        for i in range(COUNT_CAP + 1)
    )
    html = page(owner, "")
    assert f"1–{PAGE_SIZE} of 1,000+ tasks" in html
    last = page(owner, "?last=1")
    assert f"{PAGE_SIZE} of 1,000+" in last and len(rows(last)) == PAGE_SIZE  # no position past the cap


def test_a_state_sorted_by_duration_reads_its_part_only(owner: Client) -> None:
    """A `state:` filter's tasks are all finished or all running, so the duration sort reads only the index of
    that part (the other part's read would scan its whole index for no row), and pages through all of them."""
    now = datetime.now(UTC)
    took: dict[str, dict[str, float]] = {"completed": {}, "working": {}}
    for i in range(PAGE_SIZE + 6):
        done, running = f"d{i:03d}", f"r{i:03d}"
        emit(done, "sent", text="go", at=T0 + timedelta(hours=i))
        emit(done, "result", "completed", "done", at=T0 + timedelta(hours=i, seconds=i * 7 % 40 + 1))
        emit(running, "state", "working", at=now - timedelta(minutes=i * 11 % 30 + 1, seconds=i))
        took["completed"][done], took["working"][running] = i * 7 % 40 + 1, (i * 11 % 30 + 1) * 60 + i
    for state, seconds in took.items():
        longest = sorted(seconds, key=lambda t: (-seconds[t], t))
        for sort, expected in (("-duration", longest), ("duration", longest[::-1])):
            with CaptureQueriesContext(connection) as queries:
                pages = walk(owner, f"?q=state:{state}&sort={sort}", 2)
            assert [t for p in pages for t in p] == expected, (state, sort)
            other = '"run_seconds" IS NULL' if state == "completed" else '"run_seconds" IS NOT NULL'
            assert not [q for q in queries.captured_queries if other in q["sql"]], (state, sort)
