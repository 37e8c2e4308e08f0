"""The conversation's send flow in a real Chromium (#23 items 1, 2, 3 and 5), at desktop and phone width.

A send returns at once with a live task card; the composer is free for the next message; a message that could
not be sent stays with its reason, Retry and Edit; a finished task can be sent again; the chat opens at its
newest message with the composer in view, Ctrl+Enter sends and the skip link reaches the box. Waits are
Playwright's `expect`, never sleeps. The console's WaitSeconds is long (30 s): a form that waited for the
answer would still be locked when these checks run.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.support import chat_history
from tests.support.agents import TestAgent
from tests.support.browser import WAIT_MS, console_errors, duplicate_ids, live, logged_in, shot
from tests.support.console_server import ConsoleServer

expect.set_options(timeout=WAIT_MS)

pytestmark = [pytest.mark.timeout(180)]

SIZES = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}
DOWN = "http://127.0.0.1:9/"  # nothing listens there


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, bot: TestAgent) -> Iterator[ConsoleServer]:
    s = ConsoleServer(tmp_path_factory.mktemp("console"), A2AClient__WaitSeconds="30").start()
    s.workspace.save_agents([{"name": "bot", "url": bot.url}, {"name": "down", "url": DOWN}], None)
    yield s
    s.stop()


@pytest.fixture(scope="module", params=list(SIZES))
def context(request: pytest.FixtureRequest, browser: Browser, server: ConsoleServer) -> Iterator[BrowserContext]:
    """The owner logged in, at desktop and at phone width (each test runs at both)."""
    ctx = logged_in(browser, server.url, SIZES[request.param]["width"])
    ctx.size = request.param  # type: ignore[attr-defined]
    yield ctx
    ctx.close()


@pytest.fixture
def page(context: BrowserContext) -> Iterator[Page]:
    p = context.new_page()
    p.set_viewport_size(SIZES[context.size])  # type: ignore[attr-defined]
    errors = console_errors(p)
    yield p
    assert errors == []
    assert duplicate_ids(p) == []
    p.close()


def width(page: Page) -> str:
    return "phone" if (page.viewport_size or {}).get("width", 0) < 500 else "desktop"


def open_chat(page: Page, agent: str = "bot") -> None:
    page.goto("/chat/console/")
    live(page)
    page.get_by_label("Agent").select_option(agent)


def write(page: Page, text: str) -> None:
    page.get_by_role("textbox", name="Message").fill(text)
    page.get_by_role("button", name="Send", exact=True).click()


def card_of(page: Page, text: str):
    """The task card that follows the owner's message `text`."""
    message = page.locator("#chat-log li.kind-sent", has_text=text)
    expect(message).to_have_count(1)
    return message.locator("xpath=following-sibling::li[contains(@class, 'task-card')][1]")


def test_sending_never_locks_the_form(page: Page, bot: TestAgent) -> None:
    open_chat(page)
    tag = f"lock-{width(page)}"
    write(page, f"hold {tag}")
    box, button = page.get_by_role("textbox", name="Message"), page.get_by_role("button", name="Send", exact=True)
    card = card_of(page, f"hold {tag}")
    expect(card.locator("[data-task-state]")).to_have_text("working")  # a live card, long before 30 s
    expect(button).to_be_enabled()
    expect(box).to_have_value("")
    expect(card.get_by_label("Cancel the task of bot…")).to_be_visible()
    expect(card.locator("time[data-age]")).to_have_text(re.compile(r"^\d+s$"))  # elapsed, ticking
    # the next message, while the first still works
    write(page, f"second {tag}")
    expect(page.locator("#chat-log")).to_contain_text(f"echo: second {tag}")
    expect(card.locator("[data-task-state]")).to_have_text("working")
    shot(page, f"chat-task-card-{width(page)}")
    bot.release(tag)
    expect(card.locator("[data-task-state]")).to_have_text("completed")
    expect(card).to_contain_text("took")
    expect(page.locator("#chat-log")).to_contain_text(f"released {tag}")


def test_a_failed_send_keeps_what_was_typed(page: Page, server: ConsoleServer, bot: TestAgent) -> None:
    open_chat(page, "down")
    text = f"please keep me {width(page)}"
    write(page, text)
    failed = page.locator("#chat-log li.kind-outgoing.not-sent", has_text=text)
    expect(failed).to_be_visible()
    expect(failed.get_by_role("alert")).to_contain_text("down")  # the reason, readable
    expect(page.get_by_role("textbox", name="Message")).to_have_value("")
    shot(page, f"chat-not-sent-{width(page)}")
    # Retry sends the same parts again: still down, still kept
    failed.get_by_role("button", name="Retry").click()
    expect(failed.get_by_role("alert")).to_be_visible()
    # Edit: the composer holds the message again
    failed.get_by_role("link", name="Edit").click()
    expect(page.get_by_role("textbox", name="Message")).to_have_value(text)
    expect(page.get_by_label("Agent")).to_have_value("down")
    # the agent is back: Retry takes the message there, and it leaves the failed list
    page.goto("/chat/console/")
    live(page)
    entries = [{"name": "bot", "url": bot.url}, {"name": "down", "url": bot.url}]
    server.workspace.save_agents(entries, server.workspace.read_agents().version)
    try:
        page.locator("#chat-log li.kind-outgoing", has_text=text).get_by_role("button", name="Retry").click()
        expect(page.locator("#chat-log")).to_contain_text(f"echo: {text}")
        expect(page.locator("#chat-log li.kind-outgoing", has_text=text)).to_have_count(0)
    finally:
        entries[1]["url"] = DOWN
        server.workspace.save_agents(entries, server.workspace.read_agents().version)


def test_resend_a_finished_task(page: Page, bot: TestAgent) -> None:
    open_chat(page)
    text = f"again please {width(page)}"
    write(page, text)
    card = card_of(page, text)
    expect(card.locator("[data-task-state]")).to_have_text("completed")
    before = len([r for r in bot.received if r.text == text])
    card.get_by_role("button", name="Re-send to bot as a new task").click()
    expect(page.locator("#chat-log li.kind-sent", has_text=text)).to_have_count(2)
    expect(page.locator("#chat-log li.from-agent", has_text=f"echo: {text}")).to_have_count(2)
    assert len([r for r in bot.received if r.text == text]) == before + 1


def test_the_chat_opens_at_the_newest_message_with_the_composer_in_view(page: Page, server: ConsoleServer) -> None:
    fillers = [f"filler {width(page)} {i}" for i in range(12)]  # more than a screen, as the history stores them
    chat_history.write(server, chat_history.echoes("bot", fillers))
    open_chat(page)
    composer = page.locator("#composer")
    expect(composer).to_be_in_viewport()
    newest = page.locator("#chat-log li.from-agent", has_text=f"echo: filler {width(page)} 11")
    expect(newest).to_be_in_viewport()
    # the newest message is above the composer, not behind it
    assert newest.bounding_box()["y"] + newest.bounding_box()["height"] <= composer.bounding_box()["y"] + 2  # type: ignore[index]
    shot(page, f"chat-newest-{width(page)}")
    # Ctrl+Enter sends from the box
    box = page.get_by_role("textbox", name="Message")
    box.fill(f"by keyboard {width(page)}")
    box.press("Control+Enter")
    expect(page.locator("#chat-log")).to_contain_text(f"echo: by keyboard {width(page)}")
    expect(page.locator("#chat-log li.from-agent", has_text=f"echo: by keyboard {width(page)}")).to_be_in_viewport()


def test_keyboard_only_reaches_and_sends_the_composer(page: Page) -> None:
    page.goto("/chat/console/")
    live(page)
    page.keyboard.press("Tab")  # the skip link comes first
    expect(page.get_by_role("link", name="Skip to the message box")).to_be_focused()
    page.keyboard.press("Enter")
    box = page.get_by_role("textbox", name="Message")
    expect(box).to_be_focused()
    page.keyboard.type(f"typed only {width(page)}")
    page.keyboard.press("Control+Enter")
    expect(page.locator("#chat-log")).to_contain_text(f"echo: typed only {width(page)}")


def test_earlier_messages_load_above(page: Page, server: ConsoleServer) -> None:
    # sent + answered, as the history stores them: past one page of 60 events
    chat_history.write(server, chat_history.echoes("bot", [f"page {width(page)} {i:02d}" for i in range(32)]))
    page.goto("/chat/console/")
    live(page)
    expect(page.locator("#chat-log")).to_contain_text(f"echo: page {width(page)} 31")
    first = page.locator("#chat-log li.kind-sent .md").first.inner_text()
    page.get_by_role("link", name="Earlier messages").click()
    older = page.locator("#chat-older li.kind-sent")
    expect(older.first).to_be_visible()
    assert page.url.endswith("/chat/console/")  # loaded in place, above, not another page
    assert older.last.bounding_box()["y"] < page.locator("#chat-log li.kind-sent").first.bounding_box()["y"]  # type: ignore[index]
    assert first == page.locator("#chat-log li.kind-sent .md").first.inner_text()  # the latest page stays


def test_a_task_on_two_pages_keeps_one_card(page: Page, server: ConsoleServer, bot: TestAgent) -> None:
    """A task sent long ago and answered now has its message among the earlier messages and its result among
    the latest: loading the earlier page leaves one card for it, the live one."""
    open_chat(page)
    tag = f"straddle{width(page)}"
    write(page, f"hold {tag}")
    card = card_of(page, f"hold {tag}")
    expect(card.locator("[data-task-state]")).to_have_text("working")
    # answered sends after it, as the history stores them: past one page of 60 events
    chat_history.write(server, chat_history.echoes("bot", [f"after {tag} {i:02d}" for i in range(32)]))
    bot.release(tag)
    page.reload()
    live(page)
    expect(page.locator("#chat-log")).to_contain_text(f"released {tag}")
    held = page.locator("#chat-older li.kind-sent", has_text=f"hold {tag}")
    for _ in range(5):  # a page back or a few: how many events an echo makes is the agent's business
        pages = page.locator("#chat-older ol.chat").count()
        page.get_by_role("link", name="Earlier messages").first.click()
        expect(page.locator("#chat-older ol.chat")).to_have_count(pages + 1)
        if held.count():
            break
    expect(held).to_have_count(1)
    assert duplicate_ids(page) == []
    expect(page.locator("#chat-log .task-card [data-task-state]").first).to_be_visible()


def test_progress_is_a_bar_when_the_agent_gives_numbers(page: Page, bot: TestAgent) -> None:
    open_chat(page)
    tag = f"bar{width(page)}"
    write(page, f"steps 3 {tag} {tag}end")
    card = card_of(page, f"steps 3 {tag}")
    bot.release(tag)
    bar = card.locator("progress.progress-bar")
    expect(bar).to_have_attribute("max", "3")
    expect(bar).to_have_attribute("value", "3")
    expect(card).to_contain_text("100%")
    expect(card).to_contain_text("working 3/3")  # the status line stays beside the bar
    href = card.get_by_role("link", name="task", exact=True).get_attribute("href") or ""
    task = page.context.new_page()
    try:
        task.goto(href)
        expect(task.locator("#task-progress progress")).to_have_attribute("max", "3")
    finally:
        task.close()
    shot(page, f"chat-progress-bar-{width(page)}")
    bot.release(f"{tag}end")
    expect(card.locator("[data-task-state]")).to_have_text("completed")
    expect(bar).to_have_count(0)
