"""What the browser tests share: one Chromium per module and a real loopback echo agent (`bot`). A module that
needs a different agent or browser defines its own fixture of the same name."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, sync_playwright

from tests.support.agents import TestAgent, start_agent
from tests.support.browser import launch


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
