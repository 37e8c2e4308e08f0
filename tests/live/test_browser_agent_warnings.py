"""Agent warnings at a glance in Chromium (issue #23 item 15), at desktop and phone width with no console errors:
an agent whose card asks for a key the entry lacks shows "needs a key" on the list and its page, and adding an
agent where nothing listens says, in a warning, that it was added but is unreachable and which URL was tried."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext, Locator, Page, expect

from tests.support.agents import TestAgent, start_agent
from tests.support.browser import WAIT_MS, chromium, console_errors, logged_in, shot
from tests.support.console_server import ConsoleServer

KEY = "k-browser-warnings-secret"
DEAD_URL = "http://127.0.0.1:9/"  # the discard port: nothing listens there
SIZES = {"desktop": (1280, 900), "phone": (390, 844)}

pytestmark = [pytest.mark.timeout(120)]
expect.set_options(timeout=WAIT_MS)


@pytest.fixture(scope="module")
def keyed() -> Iterator[TestAgent]:
    """An agent whose card declares an API key scheme (and which refuses calls without the key)."""
    agent = start_agent(key=KEY)
    yield agent
    agent.stop()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, keyed: TestAgent) -> Iterator[ConsoleServer]:
    s = ConsoleServer(tmp_path_factory.mktemp("warnings"))
    s.workspace.root.mkdir(parents=True)
    agents = [{"name": "keyed", "url": keyed.url}, {"name": "with-key", "url": keyed.url, "key": KEY}]
    s.workspace.save_agents(agents, None)
    yield s.start()
    s.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as b:
        yield b


@pytest.fixture(scope="module", params=list(SIZES))
def size(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def context(browser: Browser, server: ConsoleServer, size: str) -> Iterator[BrowserContext]:
    width, height = SIZES[size]
    ctx = logged_in(browser, server.url, width, height)
    yield ctx
    ctx.close()


@pytest.fixture
def page(context: BrowserContext) -> Iterator[Page]:
    p = context.new_page()
    yield p
    p.close()


def warm(badge: Locator) -> bool:
    """The element's background is a warning's (yellow to orange: red above green above blue), not green."""
    rgb: list[int] = []
    while len(rgb) < 3:  # a live update may swap the badge between finding it and reading its style: read again
        rgb = badge.evaluate("e => (getComputedStyle(e).backgroundColor.match(/\\d+/g) || []).slice(0, 3).map(Number)")
    r, g, b = rgb
    return r > g > b


def height(badge: Locator) -> float:
    """The element's height, read in one step in the page (a live update may swap the badge: bounding_box is None)."""
    return float(badge.evaluate("e => e.getBoundingClientRect().height"))


def test_a_card_asking_for_a_key_the_entry_lacks_says_needs_a_key(page: Page, size: str) -> None:
    errors = console_errors(page)
    page.goto("/agents/")
    row = page.locator("#agent-row-keyed")
    badge = row.locator(".badge", has_text="needs a key")
    expect(badge).to_be_visible()  # once the list fetched the card, after the page was shown
    assert warm(badge)
    assert 0 < height(badge) < 30  # a badge, not a cell-high blob (phone)
    assert page.evaluate("document.documentElement.scrollWidth") <= SIZES[size][0]  # nothing wider than the screen
    expect(row).to_contain_text("its card asks for an API key and this entry has none")
    expect(row.get_by_text("reachable", exact=True)).to_have_count(0)
    expect(page.locator("#agent-row-with-key").get_by_text("reachable", exact=True)).to_be_visible()
    shot(page, f"agents-needs-key-{size}")
    row.get_by_role("link", name="keyed", exact=True).click()
    notice = page.locator(".notice.warn", has_text="Needs a key:")
    expect(notice).to_be_visible()
    expect(notice).to_contain_text("this card asks for an API key and agents.json has none for keyed")
    assert warm(notice)
    expect(notice.get_by_role("link", name="Add the key")).to_have_attribute("href", "/agent/keyed/edit/")
    assert KEY not in page.content()
    assert errors == []


def test_adding_an_agent_that_is_down_says_it_was_added_but_is_unreachable(page: Page, size: str) -> None:
    errors = console_errors(page)
    page.goto("/agents/add/")
    page.get_by_label("Name").fill(f"down-{size}")
    page.get_by_label("URL").fill(DEAD_URL)
    page.get_by_role("button", name="Add agent").click()
    expect(page.get_by_role("heading", name=f"down-{size}")).to_be_visible()
    said = page.locator("main .notice[role=status]")
    expect(said).to_have_count(1)
    expect(said).to_have_class("notice warning")
    expect(said).to_contain_text(f"Agent down-{size} was added, but it is unreachable")
    expect(said).to_contain_text("Tried http://127.0.0.1:9/.well-known/agent-card.json")
    assert warm(said)
    shot(page, f"agent-added-unreachable-{size}")
    page.goto("/agents/")  # it is in the list all the same, unreachable, with the URL tried
    row = page.locator(f"#agent-row-down-{size}")
    expect(row).to_contain_text("unreachable")
    expect(row).to_contain_text("Tried http://127.0.0.1:9/.well-known/agent-card.json")
    assert errors == []
