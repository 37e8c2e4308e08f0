"""Finished while you were away, end to end in a real Chromium: a watched task finishes at its (real) agent while
the console is stopped; started again, the console's restored watch finds it finished, delivers it, and the Tasks
page and the task page mark it "finished while you were away", at 1280 and at 390x844, without a console error."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from tests.support.agents import TestAgent
from tests.support.browser import SIZES, checked_page, live, logged_in, shot, watched_send
from tests.support.console_server import ConsoleServer

pytestmark = [pytest.mark.timeout(150)]
AWAY = "finished while you were away"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, bot: TestAgent) -> Iterator[ConsoleServer]:
    """A console on a fixed port: the same address after its restart."""
    s = ConsoleServer(tmp_path_factory.mktemp("away"), port=free_port(), A2AClient__WaitSeconds="1")
    s.workspace.root.mkdir(parents=True, exist_ok=True)
    s.workspace.save_agents([{"name": "bot", "url": bot.url}], None)
    s.start()
    yield s
    s.stop()


def test_a_task_that_finished_while_the_console_was_down_is_marked(
    browser: Browser, server: ConsoleServer, bot: TestAgent
) -> None:
    ctx = logged_in(browser, server.url, **SIZES["desktop"])
    with checked_page(ctx) as chat:
        _, task_id = watched_send(chat, "console", "bot", "hold while-away")
    ctx.close()

    server.stop()  # the watch's record stays in pending.json
    bot.release("while-away")
    deadline = time.monotonic() + 15
    while task_id not in bot.finished:  # the agent holds it completed while no console runs
        assert time.monotonic() < deadline, "the agent did not finish the task"
        time.sleep(0.05)
    server.start()

    for size in ("desktop", "phone"):
        ctx = logged_in(browser, server.url, **SIZES[size])
        with checked_page(ctx) as page:
            page.goto("/tasks/")
            live(page)
            row = page.locator("table.tasks tbody tr", has=page.locator(f'[data-copy="{task_id}"]'))
            expect(row.locator("[data-task-state]")).to_have_text("completed", timeout=20_000)
            expect(row).to_contain_text(AWAY)
            shot(page, f"tasks-away-{size}")
            page.goto(f"/tasks/bot/{task_id}/?target=console")
            expect(page.locator("#task-state")).to_contain_text(AWAY)
            expect(page.locator("#timeline-log")).to_contain_text("it finished while you were away")
            shot(page, f"task-away-{size}")
        ctx.close()
