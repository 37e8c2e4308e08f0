"""Stop watching and "no news since" in a real Chromium against the real server, at 1280 and at 390x844, without a
console error. The watches are of an agent that is down (its URL a closed loopback port), as a worker left them in
`pending.json` before the console started: its agent last answered 20 minutes ago and its last call failed, so the
restored watch's first check fails again and the silence is news at once (no clock to wait on)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from a2aconsole.core import pending
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.pending.records import WatchRecord
from a2aconsole.core.watches.heard import HEARD_AT, LAST_ERROR
from tests.support.browser import SIZES, live, row_of, shot, width
from tests.support.console_server import ConsoleServer
from tests.support.daphne_process import closed_port

pytestmark = [pytest.mark.timeout(120)]
HEARD = datetime.now(UTC) - timedelta(minutes=20)
TASKS = [f"{what}-{size}" for size in SIZES for what in ("row", "page")] + ["quiet"]


def _watches(ws: Workspace) -> None:
    extra = {HEARD_AT: HEARD.isoformat(), LAST_ERROR: 'agent "down" is unreachable (ConnectError); is it running?'}
    with pending.transaction_sync(ws) as tx:
        for task in TASKS:
            tx.add(WatchRecord(f"w-{task}", "console", "down", f"t-{task}", started_at=HEARD.isoformat(), extra=extra))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConsoleServer]:
    s = ConsoleServer(tmp_path_factory.mktemp("news"))
    s.workspace.root.mkdir(parents=True, exist_ok=True)
    s.workspace.save_agents([{"name": "down", "url": f"http://127.0.0.1:{closed_port()}"}], None)
    _watches(s.workspace)
    s.start()
    yield s
    s.stop()


def since() -> str:
    return f"no news since {timezone.localtime(HEARD):%H:%M}"


def test_stop_watching_on_a_watch_row_asks_first(page: Page) -> None:
    task = f"t-row-{width(page)}"
    page.goto("/watches/")
    live(page)
    row = row_of(page, "#watch-table", task)
    row.get_by_label(f"Stop watching task {task}…").click()  # asks first: nothing is stopped yet
    ask = row.get_by_role("button", name=f"Yes, stop watching task {task}")
    expect(ask).to_be_visible()
    expect(row.get_by_text("its result will not come here")).to_be_visible()
    shot(page, f"watches-unwatch-confirm-{width(page)}")
    expect(page.locator("#watch-answer")).not_to_contain_text("Stopped watching")
    ask.click()
    expect(page.locator("#watch-answer")).to_contain_text("Stopped watching")
    expect(row).to_have_count(0)
    page.goto(f"/tasks/down/{task}/?target=console")
    expect(page.locator("#timeline-log")).to_contain_text("Stopped watching (by you, ")


def test_stop_watching_on_the_task_page_asks_first(page: Page) -> None:
    task = f"t-page-{width(page)}"
    page.goto(f"/tasks/down/{task}/?target=console")
    live(page)
    expect(page.locator("#task-state .quiet")).to_contain_text(since())  # its agent is down
    page.get_by_label("Stop watching the task…").click()
    ask = page.get_by_role("button", name="Yes, stop watching the task")
    expect(ask).to_be_visible()
    shot(page, f"task-unwatch-confirm-{width(page)}")
    expect(page.locator("#task-answer")).not_to_contain_text("Stopped watching")  # the first click stops nothing
    ask.click()
    expect(page.locator("#task-answer")).to_contain_text("Stopped watching")
    expect(page.locator("#timeline-log")).to_contain_text("Stopped watching (by you, ")  # the live update
    expect(page.get_by_label("Stop watching the task…")).to_have_count(0)  # nothing left to stop
    expect(page.locator("#task-state .quiet")).to_have_count(0)  # nor news of a watch that is gone
    shot(page, f"task-unwatched-{width(page)}")


def test_no_news_since_shows_on_the_watch_row_and_the_task_page(page: Page) -> None:
    page.goto("/watches/")
    live(page)
    row = row_of(page, "#watch-table", "t-quiet")
    expect(row.locator(".quiet")).to_contain_text(f'{since()} (agent "down" is unreachable')  # its latest reason
    shot(page, f"watches-no-news-{width(page)}")
    page.goto("/tasks/down/t-quiet/?target=console")
    live(page)
    expect(page.locator("#task-state .quiet")).to_contain_text(since())
    expect(page.locator("#timeline-log")).to_contain_text(since().replace("no", "No", 1))  # the watch told it once
    expect(page.get_by_label("Stop watching the task…")).to_be_visible()
    shot(page, f"task-no-news-{width(page)}")
