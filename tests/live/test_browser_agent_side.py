"""The agent's side of its tasks in a real Chromium against the real server, at 1280 and at 390x844: Tasks at the
agent lists what another client started there, filtered by state, and a task the console did not know is watched
from it; the task page then asks the agent for the task's push configs and removes one, asked first. Without a
console error; screenshots of each."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.support.agents import TestAgent
from tests.support.browser import live, shot, width

pytestmark = [pytest.mark.timeout(120)]


def rpc(agent: TestAgent, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One JSON-RPC call to the agent, as another client of it would make."""
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    answer = httpx.post(agent.url, json=body, headers={"A2A-Version": "1.0"}, timeout=10).json()
    assert "result" in answer, answer
    return answer["result"]


def started_elsewhere(agent: TestAgent, text: str) -> str:
    message = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}]}
    result = rpc(agent, "SendMessage", {"message": message, "configuration": {"returnImmediately": True}})
    return result["task"]["id"]


def test_a_task_started_elsewhere_is_found_watched_and_its_push_configs_cleaned(page: Page, bot: TestAgent) -> None:
    size = width(page)
    held = started_elsewhere(bot, f"hold side-{size}")
    started_elsewhere(bot, f"hello from another client ({size})")
    page.goto("/agent/bot/")
    page.get_by_role("link", name="Tasks at the agent").click()
    expect(page.get_by_role("heading", name="Tasks at bot")).to_be_visible()
    row = page.locator("table.agent-tasks tbody tr", has=page.locator(f'[data-copy="{held}"]'))
    expect(row).to_contain_text("not known")
    expect(page.get_by_role("button", name="Fetch the result of task").first).to_be_visible()
    shot(page, f"agent-tasks-{size}")

    page.get_by_label("State").select_option("working")
    page.get_by_role("button", name="Filter").click()
    expect(page.locator("table.agent-tasks tbody [data-task-state]").first).to_have_text("working")
    expect(page.locator("table.agent-tasks tbody [data-task-state]", has_text="completed")).to_have_count(0)

    row = page.locator("table.agent-tasks tbody tr", has=page.locator(f'[data-copy="{held}"]'))
    row.get_by_role("button", name=f"Watch task {held}").click()
    expect(page.locator("#task-answer")).to_contain_text("watches the task now")
    live(page)

    url = f"http://127.0.0.1:9/elsewhere/hook?sig=browser-secret-{size}"
    rpc(bot, "CreateTaskPushNotificationConfig", {"taskId": held, "id": f"stale-{size}", "url": url, "token": "t0k"})
    page.get_by_role("link", name="Ask bot for its push configs").click()
    configs = page.locator("#push-configs")
    expect(configs).to_contain_text(f"stale-{size}")
    expect(configs).to_contain_text("http://127.0.0.1:9/elsewhere/hook")
    expect(configs).to_contain_text("token set (hidden)")
    assert "browser-secret" not in page.content() and "t0k" not in configs.inner_text()
    configs.scroll_into_view_if_needed()
    shot(page, f"task-push-configs-{size}")

    item = configs.locator("li.push-config", has_text=f"stale-{size}")
    item.get_by_text("Remove…").click()
    item.get_by_role("button", name=f"Yes, remove push config stale-{size}").click()
    expect(page.locator("#push-configs")).to_contain_text(f"Removed push config stale-{size} at bot")
    expect(page.locator("#push-configs li.push-config", has_text=f"stale-{size}")).to_have_count(0)
    bot.release(f"side-{size}")
