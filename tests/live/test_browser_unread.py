"""Knowing when something arrives, in a real Chromium at desktop and phone width (#23 items 10 and 11).

A result no tab has shown puts a count in the menu's Inbox and in the tab title of another open page; the Inbox
shows it marked new and, once shown, read (the counts go back). A question waiting counts in Questions, which
lists it with its answer box. Notifications are opt-in on a click, and say counts only. The agent is the real
loopback test agent; the console's WaitSeconds is 1 s so a held task goes to a watch at once.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.support.agents import TestAgent
from tests.support.browser import WAIT_MS, live, send, shot, task_card, width

expect.set_options(timeout=WAIT_MS)

pytestmark = [pytest.mark.timeout(180)]


@pytest.fixture(scope="module")
def permissions() -> list[str]:
    return ["notifications"]


def count(page: Page, name: str):
    return page.locator(f'[data-count="{name}"]')


def menu(page: Page, name: str) -> None:
    """Follow a menu link (on a phone the menu opens first)."""
    toggle = page.get_by_role("button", name="Menu")
    if toggle.is_visible():
        toggle.click()
    page.get_by_role("navigation", name="Main").get_by_role("link", name=re.compile(f"^{name}")).click()


def result_while_away(page: Page, bot: TestAgent, gate: str, then: str = "") -> None:
    """A task held at the agent, then finished while the tab shows the Tasks page (no result on screen); `then`:
    a script the tab runs just before."""
    page.goto("/chat/console/")
    live(page)
    send(page, f"hold {gate}")
    expect(task_card(page, f"hold {gate}").locator("[data-task-state]")).to_have_text("working")
    page.goto("/tasks/")
    live(page)
    if then:
        page.evaluate(then)
    bot.release(gate)


def test_a_result_no_tab_showed_is_counted_then_read(page: Page, bot: TestAgent) -> None:
    result_while_away(page, bot, f"away-{width(page)}")
    expect(count(page, "inbox").locator(".n")).to_have_text("1")
    expect(page).to_have_title(re.compile(r"^\(1\) Tasks · a2aconsole$"))
    shot(page, f"unread-menu-{width(page)}")
    menu(page, "Inbox")
    item = page.locator("li.inbox-item", has_text=f"released away-{width(page)}")
    expect(item.locator(".badge.new")).to_be_visible()  # shown as new once
    expect(item).to_contain_text(f"You asked: hold away-{width(page)}")
    shot(page, f"inbox-new-{width(page)}")
    expect(count(page, "inbox")).to_be_hidden()  # shown: read
    expect(page).to_have_title("Inbox · Console · a2aconsole")
    page.reload()
    expect(item.locator(".badge.new")).to_be_visible()  # marked new a while, so a live update keeps the mark
    expect(count(page, "inbox")).to_be_hidden()  # but read: not counted again


def test_a_question_waits_in_questions_and_is_answered_there(page: Page) -> None:
    page.goto("/chat/console/")
    live(page)
    send(page, f"ask {width(page)}")
    expect(page.locator("#chat-log")).to_contain_text("Which colour?")
    page.goto("/tasks/")
    live(page)
    expect(count(page, "questions").locator(".n")).to_have_text("1")
    menu(page, "Questions")
    expect(page.get_by_role("link", name="Questions", exact=False).first).to_have_attribute("aria-current", "page")
    question = page.locator("li.inbox-item", has_text="Which colour?")
    expect(question).to_have_count(1)
    question.get_by_label("Answer bot").fill("blue")
    question.get_by_role("button", name="Answer").click()
    expect(count(page, "questions")).to_be_hidden()
    expect(page.locator("#inbox-list")).to_contain_text("No question is waiting for you.")


def test_notifications_are_opt_in_and_say_counts_only(page: Page, bot: TestAgent) -> None:
    page.goto("/tasks/")
    live(page)
    button = page.get_by_role("button", name="Notify me")
    if not button.is_visible():
        page.get_by_role("button", name="Menu").click()
    button.click()  # the browser asks here, on the owner's click (granted to this context)
    expect(page.get_by_role("button", name="Notifications on")).to_have_attribute("aria-pressed", "true")
    gate = f"note-{width(page)}"
    hide = """() => { window.shown = []; Object.defineProperty(document, 'visibilityState', {value: 'hidden'});
        const fake = function (title, options) { window.shown.push([title, options.body]); };
        fake.permission = 'granted'; window.Notification = fake; }"""  # hidden; what it would show, kept
    result_while_away(page, bot, gate, then=hide)
    page.wait_for_function("() => window.shown.length > 0", timeout=WAIT_MS)
    [[title, body]] = page.evaluate("window.shown")
    assert title == "a2aconsole" and re.fullmatch(r"\d+ unread in your inbox", body)
    assert gate not in body  # counts, never an agent's words


def test_status_messages_alone_ask_for_no_counts(page: Page, bot: TestAgent) -> None:
    """A task's status messages move no count: the frames showing them ask nothing of /unread/ (ten tabs of a busy
    task asked once a second each); its result then does."""
    gate = f"quiet-{width(page)}"
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if "/unread/" in r.url else None)
    page.goto("/chat/console/")
    live(page)
    send(page, f"steps 5 {gate} {gate}-end")
    card = task_card(page, f"steps 5 {gate}")
    expect(card).to_contain_text("ready for 5 steps")
    page.wait_for_function("() => counts.timer === null")  # what the send's own frames asked is answered
    before = len(asked)
    bot.release(gate)
    expect(card).to_contain_text("working 5/5")
    assert page.evaluate("counts.timer") is None and len(asked) == before  # none asked, none waiting to be
    with page.expect_request(re.compile(r"/unread/")):
        bot.release(f"{gate}-end")
    expect(page.locator("#chat-log")).to_contain_text("5 steps done")
