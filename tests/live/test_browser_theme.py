"""Dark mode (#23 item 16) in a real Chromium: the system's scheme by default, the owner's choice kept in the
browser across reloads and pages, at desktop and phone width, without console errors."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.support.browser import WAIT_MS, console_errors, live, logged_in, shot
from tests.support.console_server import ConsoleServer

expect.set_options(timeout=WAIT_MS)

pytestmark = [pytest.mark.timeout(120)]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConsoleServer]:
    s = ConsoleServer(tmp_path_factory.mktemp("console")).start()
    yield s
    s.stop()


def background(page: Page) -> tuple[int, int, int]:
    rgb = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
    return tuple(int(x) for x in rgb[rgb.index("(") + 1 : rgb.index(")")].split(",")[:3])  # type: ignore[return-value]


def is_dark(page: Page) -> bool:
    return sum(background(page)) < 3 * 80


@pytest.mark.parametrize(("width", "height"), [(1280, 900), (390, 844)])
def test_dark_follows_the_system_and_the_owners_choice_is_kept(
    browser: Browser, server: ConsoleServer, width: int, height: int
) -> None:
    ctx = logged_in(browser, server.url, width, height, color_scheme="dark")
    try:
        page = ctx.new_page()
        errors = console_errors(page)
        page.goto("/chat/console/")
        live(page)
        assert is_dark(page)  # the system's scheme, nothing chosen
        card = page.evaluate("() => getComputedStyle(document.querySelector('.card')).color")
        assert sum(int(x) for x in card[card.index("(") + 1 : card.index(")")].split(",")[:3]) > 3 * 180  # light text
        shot(page, f"theme-dark-{width}")
        toggle = page.get_by_role("button", name="Theme: auto (change)")
        if width < 500:
            page.get_by_role("button", name="Menu").click()
        toggle.click()  # auto -> light
        expect(page.get_by_role("button", name="Theme: light (change)")).to_be_visible()
        assert not is_dark(page)
        page.reload()
        assert not is_dark(page)  # kept in the browser, applied before the page is drawn
        page.goto("/agents/")
        assert not is_dark(page)
        if width < 500:
            page.get_by_role("button", name="Menu").click()
        page.get_by_role("button", name="Theme: light (change)").click()  # light -> dark
        assert is_dark(page)
        page.get_by_role("button", name="Theme: dark (change)").click()  # dark -> auto: the system's again
        assert is_dark(page) and page.evaluate("() => localStorage.getItem('a2aconsole-theme')") is None
        assert errors == []
    finally:
        ctx.close()
