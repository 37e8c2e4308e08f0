"""A task its agent forgot, in a real Chromium against the real server: the agent (a real loopback agent) drops
its tasks while the console's watch polls one; the chat's card, the task page and the watch table then say
"lost" (the notice cannot reach the chat's webhook, so its record stays in the table, kept), the task page
offers Re-send and no Cancel; at 1280 and at 390x844, without a console error."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from tests.support.agents import TestAgent, start_agent
from tests.support.browser import SIZES, checked_page, live, logged_in, shot, watched_send
from tests.support.console_server import ConsoleServer
from tests.support.served_process import ROOT

pytestmark = [pytest.mark.timeout(150)]
# the watch polls on a short backoff (tests/support/quick_poll_console.py): its next check finds the task gone
LOST_MS = 30_000


@pytest.fixture(scope="module")
def poll_bot() -> Iterator[TestAgent]:
    agent = start_agent(streaming=False, push=False)  # followed by polling: GetTask finds the task gone
    yield agent
    agent.stop()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, poll_bot: TestAgent) -> Iterator[ConsoleServer]:
    quick = ["-m", "tests.support.quick_poll_console"]
    s = ConsoleServer(tmp_path_factory.mktemp("lost"), launcher=quick, A2AClient__WaitSeconds="1")
    s.workspace.root.mkdir(parents=True, exist_ok=True)
    s.workspace.save_agents([{"name": "bot", "url": poll_bot.url}], None)
    s.start()
    # a chat whose host is down: what the watch delivers stays kept, in the watch table
    add = ["targets", "add", "away", "--name", "Away", "--workspace", str(s.workspace.root)]
    add += ["--backend", "webhook", "--url", "http://127.0.0.1:9/hook"]
    subprocess.run([sys.executable, "manage.py", *add], cwd=ROOT, env=s.env, check=True, capture_output=True)
    yield s
    s.stop()


def test_a_forgotten_task_shows_lost(browser: Browser, server: ConsoleServer, poll_bot: TestAgent) -> None:
    ctx = logged_in(browser, server.url, **SIZES["desktop"])
    with checked_page(ctx) as chat:
        card, task_id = watched_send(chat, "away", "bot", "hold forgotten")  # a watch polls the task
        poll_bot.forget()  # the agent restarted with an in-memory store
        expect(card.locator("[data-task-state]")).to_have_text("lost", timeout=LOST_MS)
    for size in ("desktop", "phone"):
        ctx = logged_in(browser, server.url, **SIZES[size])
        with checked_page(ctx) as page:
            page.goto(f"/tasks/bot/{task_id}/?target=away")
            live(page)
            expect(page.locator("#task-state [data-task-state]")).to_have_text("lost")
            expect(page.locator("#timeline-log")).to_contain_text("Stopped following: lost")
            expect(page.get_by_role("button", name="Re-send to bot as a new task")).to_be_visible()
            expect(page.locator("#task-controls summary", has_text="Cancel")).to_have_count(0)
            shot(page, f"task-lost-{size}")
            page.goto("/watches/")
            live(page)
            row = page.locator("#watch-rows tr", has_text="undelivered")
            expect(row.locator("[data-task-state]")).to_have_text("lost")
            expect(row.get_by_text("Cancel…")).to_have_count(0)
            shot(page, f"watches-lost-{size}")
        ctx.close()
