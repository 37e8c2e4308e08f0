"""End to end in Chromium: the agents list fills in its cards after load and refetches one on request, and an
agents.json conflict is shown as a diff and resolved by a merge, with zero console errors throughout."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from tests.support.agents import TestAgent
from tests.support.browser import WAIT_MS, console_errors, owner_browser, shot
from tests.support.console_server import ConsoleServer

KEY = "k-browser-agents-secret"

pytestmark = [pytest.mark.timeout(120)]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, bot: TestAgent) -> Iterator[ConsoleServer]:
    s = ConsoleServer(tmp_path_factory.mktemp("console"))
    s.workspace.root.mkdir(parents=True)
    s.workspace.save_agents(
        [{"name": "bot", "url": bot.url, "key": KEY}, {"name": "gone", "url": "http://127.0.0.1:9/"}], None
    )
    yield s.start()
    s.stop()


@pytest.fixture(scope="module")
def context(server: ConsoleServer) -> Iterator[BrowserContext]:
    with owner_browser(server.url, width=1280) as ctx:
        yield ctx


@pytest.fixture
def page(context: BrowserContext) -> Iterator[Page]:
    p = context.new_page()
    yield p
    p.close()


def test_agents_list_fills_in_and_refetches_a_changed_card(page: Page, server: ConsoleServer, bot: TestAgent) -> None:
    errors = console_errors(page)
    page.goto("/agents/")
    row, gone = page.locator("#agent-row-bot"), page.locator("#agent-row-gone")
    expect(row).to_contain_text("reachable", timeout=WAIT_MS)  # fetched after the page was shown
    expect(row).to_contain_text("Echo, Files")
    expect(gone).to_contain_text("unreachable")
    bot.change_card(version="2.0.0", push=False)
    row.get_by_role("button", name="Refetch the card of bot").click()
    expect(row).to_contain_text("version: 1.0.0 → 2.0.0", timeout=WAIT_MS)
    expect(row).to_contain_text("push notifications: yes → no")
    shot(page, "agents-list")
    assert KEY not in page.content()
    page.reload()
    expect(page.locator("#agent-row-bot")).to_contain_text("version: 1.0.0 → 2.0.0")
    page.get_by_role("link", name="bot", exact=True).click()
    history = page.locator("section", has=page.get_by_role("heading", name="Card history"))
    expect(history).to_contain_text("version 2.0.0")
    expect(history).to_contain_text("The first card seen")
    shot(page, "agent-history")
    assert errors == []


def test_conflict_diff_and_merge(page: Page, server: ConsoleServer) -> None:
    errors = console_errors(page)
    page.goto("/agents/file/")
    box = page.locator("textarea[name=text]")
    text = box.input_value()
    box.fill(text.replace("http://127.0.0.1:9/", "http://127.0.0.1:8/"))
    entries = [e.to_json() for e in server.workspace.read_agents().entries]
    entries[0]["description"] = "changed behind your back"
    server.workspace.save_agents(entries, None)
    page.get_by_role("button", name="Check and save").click()
    expect(page.get_by_role("heading", name="agents.json changed since you opened it")).to_be_visible()
    diff = page.locator("table.diff")
    expect(diff.locator("tr.diff-added, tr.diff-changed, tr.diff-removed").first).to_be_visible()
    expect(diff).to_contain_text("changed behind your back")
    expect(diff).to_contain_text("127.0.0.1:8")
    assert KEY not in page.content()
    shot(page, "agents-conflict")
    merge = page.get_by_label("The merged agents.json")
    expect(merge).to_have_value(re.compile("changed behind your back"))
    page.get_by_role("button", name="Check and save the merge").click()
    expect(page.get_by_text("agents.json saved.")).to_be_visible()
    af = server.workspace.read_agents()
    assert af.get("bot").description == "changed behind your back" and af.get("bot").key == KEY
    assert af.get("gone").url == "http://127.0.0.1:8/"
    assert errors == []
