"""End to end in a real Chromium against the real server and a real agent: the Tasks page and the
conversation with live data (tasks finished, a task finishing while the page is open, a message-only
reply), each loaded and used without a single console error."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import BrowserContext, expect

from tests.live.test_browser_console import send
from tests.support.agents import TestAgent
from tests.support.browser import console_errors, duplicate_ids, live, owner_browser, shot, task_card
from tests.support.console_server import ConsoleServer

pytestmark = [pytest.mark.timeout(120)]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, bot: TestAgent) -> Iterator[ConsoleServer]:
    s = ConsoleServer(tmp_path_factory.mktemp("tasks"), A2AClient__WaitSeconds="2")
    s.workspace.root.mkdir(parents=True, exist_ok=True)
    s.workspace.save_agents([{"name": "bot", "url": bot.url}], None)
    s.start()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def context(server: ConsoleServer) -> Iterator[BrowserContext]:
    with owner_browser(server.url) as ctx:
        yield ctx


def test_tasks_and_conversation_live_without_console_errors(context: BrowserContext, bot: TestAgent) -> None:
    chat = context.new_page()
    errors = console_errors(chat)
    chat.goto("/chat/console/")
    live(chat)
    chat.get_by_label("Agent").select_option("bot")
    send(chat, "hello tasks")
    expect(task_card(chat, "hello tasks").locator("[data-task-state]")).to_have_text("completed")
    send(chat, "message hi")  # the agent answers with a message, no task
    expect(chat.locator("#chat-log")).to_contain_text("echo: message hi")

    tasks = context.new_page()
    tasks_errors = console_errors(tasks)
    tasks.goto("/tasks/")
    live(tasks)
    table = tasks.locator("#task-table")
    expect(table).to_contain_text("echo: hello tasks")
    # a task started in the other tab shows up here, then finishes here, without a reload
    send(chat, "hold tasks1")
    expect(task_card(chat, "hold tasks1").locator("[data-task-state]")).to_have_text("working")
    expect(task_card(chat, "hold tasks1")).to_contain_text("following by")  # the send's wait is over
    row = table.locator("tbody tr", has_text="tasks1")
    expect(row.locator(".badge")).to_have_text("working")
    bot.release("tasks1")
    expect(row.locator(".badge")).to_have_text("completed")
    expect(row).to_contain_text("released tasks1")
    tasks.get_by_role("searchbox", name="Search").fill("state:completed released")
    tasks.get_by_role("button", name="Search").click()
    expect(table.locator("tbody tr")).to_have_count(1)
    tasks.get_by_role("link", name=re.compile("Duration")).click()
    expect(tasks).to_have_url(re.compile(r"sort=-duration"))
    shot(tasks, "tasks")

    # the conversation after a reload: the message-only reply kept, threads, the watch's bookkeeping folded
    chat.reload()
    live(chat)
    log = chat.locator("#chat-log")
    expect(log).to_contain_text("echo: message hi")
    folded = log.locator(".task-card", has_text="following by")  # the hold task's watch, one line
    expect(folded).to_contain_text("result delivered")
    expect(folded).to_contain_text("working → completed")
    chat.locator("#threads").get_by_role("link", name="hold tasks1").click()
    expect(chat.get_by_role("heading", name="Reply in this conversation")).to_be_visible()
    live(chat)
    expect(chat.locator("#chat-log")).to_contain_text("released tasks1")
    expect(chat.locator("#chat-log")).not_to_contain_text("echo: message hi")
    assert duplicate_ids(chat) == []
    shot(chat, "conversation-thread")
    chat.goto("/inbox/console/")
    expect(chat.locator("#inbox-list")).to_contain_text("released tasks1")
    expect(chat.locator("#inbox-list details").first).not_to_have_attribute("open", "")
    assert tasks_errors == []
    assert errors == []
    chat.close()
    tasks.close()
