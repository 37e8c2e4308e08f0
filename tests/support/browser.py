"""The browser tests' Chromium: Debian's binary with the flags this closed network needs, a logged-in context,
screenshots, and the page's console errors."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from playwright.sync_api import Browser, BrowserContext, Error, Locator, Page, Playwright, expect, sync_playwright

from tests.support.console_server import OWNER, PASSWORD

CHROMIUM = Path("/usr/bin/chromium")
SHOTS = Path(__file__).resolve().parents[2] / "test-output" / "screenshots"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
WAIT_MS = 20_000

# No skip: a run without the browser must fail, not pass quietly (`make test` installs Debian's chromium).
assert CHROMIUM.exists(), f"{CHROMIUM} is missing: run `make test`, which installs Debian's chromium"


def launch(p: Playwright) -> Browser:
    return p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)


def logged_in(browser: Browser, url: str, width: int = 1100, height: int = 900, **options: Any) -> BrowserContext:
    """A context of the owner, logged in through the login form (`options`: Playwright's, e.g. color_scheme)."""
    ctx = browser.new_context(base_url=url, viewport={"width": width, "height": height}, **options)
    ctx.set_default_timeout(WAIT_MS)
    page = ctx.new_page()
    page.goto("/login/")
    page.get_by_label("Username").fill(OWNER)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible(timeout=WAIT_MS)
    page.close()
    return ctx


@contextmanager
def chromium() -> Iterator[Browser]:
    """A Chromium of its own (a module's `browser` fixture), closed afterwards."""
    with sync_playwright() as p:
        browser = launch(p)
        yield browser
        browser.close()


@contextmanager
def owner_browser(url: str, width: int = 1100) -> Iterator[BrowserContext]:
    """A Chromium of its own with the owner logged in (a module's `context` fixture), closed afterwards."""
    with chromium() as browser:
        ctx = logged_in(browser, url, width)
        yield ctx
        ctx.close()


def shot(page: Page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    # caret "initial": Playwright hides a caret with an inline style, which the console's CSP refuses (an error)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True, caret="initial")


def element_shot(element: Locator, name: str) -> None:
    """A PNG of one element. A live page may put a fresh copy of it in place while the picture is taken (a chat
    log's change renders it again; what was typed is kept): the locator then finds the new one."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    for attempt in range(3):
        try:
            element.screenshot(path=str(SHOTS / f"{name}.png"), caret="initial")
            return
        except Error as e:
            if "not attached to the DOM" not in str(e) or attempt == 2:
                raise


def send(page: Page, text: str) -> None:
    """Send `text` from a chat page's form (the agent as selected)."""
    page.get_by_role("textbox", name="Message").fill(text)
    page.get_by_role("button", name="Send", exact=True).click()


def live(page: Page) -> None:
    """The tab's WebSocket has sent its first state (htmx's ws extension marks nothing, so wait for a frame)."""
    page.wait_for_function("() => document.body.dataset.wsOpen === '1'", timeout=WAIT_MS)


def console_errors(page: Page) -> list[str]:
    """The page's console errors and uncaught exceptions, as they happen."""
    errors: list[str] = []
    page.on("console", lambda m: errors.append(f"console: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
    return errors


def duplicate_ids(page: Page) -> list[str]:
    """The ids more than one element of the page carries (two answer panels, say): none on any page."""
    return page.evaluate(
        "() => { const ids = [...document.querySelectorAll('[id]')].map(e => e.id);"
        " return [...new Set(ids.filter((id, i) => ids.indexOf(id) !== i))]; }"
    )


def task_card(page: Page, text: str) -> Locator:
    """The task card after the owner's latest message `text` in the chat log."""
    message = page.locator("#chat-log li.kind-sent", has_text=text).last
    return message.locator("xpath=following-sibling::li[contains(@class, 'task-card')][1]")


def watched_send(page: Page, chat: str, agent: str, text: str) -> tuple[Locator, str]:
    """Send `text` to `agent` from chat `chat`'s page and wait until the send's wait is over and a watch follows
    the task: its card and the task id."""
    page.goto(f"/chat/{chat}/")
    live(page)
    page.get_by_label("Agent").select_option(agent)
    send(page, text)
    card = task_card(page, text)
    expect(card).to_contain_text("following by")
    return card, task_id_of(card)


def task_id_of(card: Locator) -> str:
    """The task id a task card links to."""
    href = card.get_by_role("link", name="task", exact=True).get_attribute("href") or ""
    return unquote(href.split("/tasks/", 1)[1].split("/", 2)[1])


def question_after(page: Page, text: str) -> Locator:
    """The question that follows the owner's latest message `text` in the chat log."""
    message = page.locator("#chat-log li.kind-sent", has_text=text).last
    return message.locator("xpath=following-sibling::li[contains(@class, 'kind-question')][1]")


def id_in(scope: Page | Locator, value: str) -> Locator:
    """Where an id (a task's, a context's) is shown: short, so found by its copy button, which holds it whole."""
    return scope.locator(f'[data-copy="{value}"]')


def row_of(page: Page, table: str, task_id: str) -> Locator:
    """The row of `table` (a CSS selector) that shows `task_id`."""
    return page.locator(f"{table} tr", has=id_in(page, task_id))


SIZES = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}  # each page at both


def width(page: Page) -> str:
    """The size a page is shown at, "phone" or "desktop" (names its screenshots)."""
    return "phone" if (page.viewport_size or {}).get("width", 0) < 500 else "desktop"


@contextmanager
def checked_page(context: BrowserContext) -> Iterator[Page]:
    """A new page of `context` that, once the test is done, had no console error and no id twice."""
    page = context.new_page()
    errors = console_errors(page)
    yield page
    assert errors == []
    assert duplicate_ids(page) == []
    page.close()
