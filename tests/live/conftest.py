"""What the browser tests share: one Chromium per module, a real loopback echo agent (`bot`), a console over it
and the owner's pages at both widths. A module that needs something else defines its own fixture of that name."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright

from tests.support.agents import TestAgent, start_agent
from tests.support.browser import SIZES, checked_page, launch, logged_in
from tests.support.console_server import ConsoleServer


@pytest.fixture(scope="module")
def bot() -> Iterator[TestAgent]:
    agent = start_agent()
    yield agent
    agent.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


# A module's defaults (each may define its own): the console over `bot` with a short WaitSeconds (a task the
# agent holds goes to a watch at once), the owner logged in at desktop and at phone width (each test runs at
# both) with the browser permissions the module asks for, and a page checked for console errors and ids twice.


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, bot: TestAgent) -> Iterator[ConsoleServer]:
    s = ConsoleServer(tmp_path_factory.mktemp("console"), A2AClient__WaitSeconds="1").start()
    s.workspace.save_agents([{"name": "bot", "url": bot.url}], None)
    yield s
    s.stop()


@pytest.fixture(scope="module")
def permissions() -> list[str]:
    return []


@pytest.fixture(scope="module", params=list(SIZES))
def context(
    request: pytest.FixtureRequest, browser: Browser, server: ConsoleServer, permissions: list[str]
) -> Iterator[BrowserContext]:
    size = SIZES[request.param]
    ctx = logged_in(browser, server.url, size["width"], size["height"], permissions=permissions)
    yield ctx
    ctx.close()


@pytest.fixture
def page(context: BrowserContext) -> Iterator[Page]:
    with checked_page(context) as p:
        yield p
