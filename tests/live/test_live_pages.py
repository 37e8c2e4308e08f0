# ruff: noqa: F811  (pytest fixtures imported from test_browser_console, then requested by name)
"""Live pages in a real Chromium against the real server: every live update lands where it belongs, with zero
console errors and page errors, ages tick without the server, and times read in the owner's time zone.

Fixtures (one server, browser and logged-in context per module) come from test_browser_console.
"""

from __future__ import annotations

import re
import time
from datetime import datetime
from zoneinfo import ZoneInfo

from playwright.sync_api import APIResponse, Browser, Page, Route, WebSocket, WebSocketRoute, expect

from tests.live.test_browser_console import (  # noqa: F401  (fixtures)
    console_errors,
    context,
    ensure_bot,
    live,
    page,
    send,
    server,
    shot,
)
from tests.support.agents import TestAgent
from tests.support.browser import WAIT_MS, duplicate_ids, id_in, question_after, row_of, task_card, task_id_of
from tests.support.console_server import OWNER, PASSWORD, ConsoleServer


def start_task(page: Page, text: str) -> str:
    """Send `text` from the chat page; the task is still working when the send's wait ends. Its id."""
    page.goto("/chat/console/")
    live(page)
    page.get_by_label("Agent").select_option("bot")
    send(page, text)
    card = task_card(page, text)
    expect(card.locator("[data-task-state]")).to_have_text("working")
    expect(card).to_contain_text("following by")  # the send's wait is over: a watch follows it
    return task_id_of(card)


def test_chat_updates_land_without_a_console_error(page: Page, server: ConsoleServer, bot: TestAgent) -> None:
    """Bug 1: a tab whose answer panel does not show the task got its badge anyway (htmx:oobErrorNoTarget).
    Bug 4: the badge turned "completed" while the text still said "Working on it"."""
    ensure_bot(server, bot)
    errors = console_errors(page)
    start_task(page, "hold chat1")
    other = page.context.new_page()
    other_errors = console_errors(other)
    try:
        other.goto("/chat/console/")  # the same chat, no answer panel for that task
        live(other)
        bot.release("chat1")
        expect(task_card(page, "hold chat1").locator("[data-task-state]")).to_have_text("completed")
        expect(other.locator("#chat-log")).to_contain_text("released chat1")
        expect(page.locator("#chat-log")).to_contain_text("released chat1")
        assert duplicate_ids(page) == [] and duplicate_ids(other) == []
        shot(page, "conversation-live")
    finally:
        other.close()
    assert errors == [] and other_errors == []


def test_task_page_recheck_shows_the_task_and_adds_nothing_twice(
    page: Page, server: ConsoleServer, bot: TestAgent
) -> None:
    """Bug 2: a live update replaced the form whose re-check was in flight, so the raw JSON stayed stale (and htmx
    logged oobErrorNoTarget #task-raw); re-checking a finished task added its result again."""
    ensure_bot(server, bot)
    errors = console_errors(page)
    task_id = start_task(page, "hold task1")
    page.goto(f"/tasks/bot/{task_id}/?target=console")
    live(page)
    page.get_by_role("button", name="Re-check").click()
    expect(page.locator("#task-answer [data-task-state]")).to_have_text("working")
    expect(page.locator("#task-raw summary")).to_contain_text("as the agent returned it just now")
    bot.release("task1")
    expect(page.locator("#task-state [data-task-state]")).to_have_text("completed")  # live, no reload
    expect(page.locator("#task-answer [data-task-state]")).to_have_text("completed")
    expect(page.locator("#timeline")).to_contain_text("released task1")
    expect(page.get_by_label("Cancel the task…")).to_have_count(0)
    results = page.locator("#timeline li.kind-result")
    expect(results).to_have_count(1)
    page.get_by_role("button", name="Re-check").click()
    expect(page.locator("#task-answer")).to_contain_text("released task1")
    page.reload()
    expect(results).to_have_count(1)
    shot(page, "task-live")
    assert errors == []


def test_watches_recheck_answer_updates_live(page: Page, server: ConsoleServer, bot: TestAgent) -> None:
    """Bug 5: the watch table's Re-check said "It appears below without reloading" and nothing appeared."""
    ensure_bot(server, bot)
    errors = console_errors(page)
    task_id = start_task(page, "hold watch1")
    page.goto("/watches/")
    live(page)
    row = row_of(page, "#watch-table", task_id)
    row.get_by_role("button", name="Re-check").click()
    answer = page.locator("#watch-answer")
    expect(answer.locator("[data-task-state]")).to_have_text("working")
    expect(answer).not_to_contain_text("appears below")
    bot.release("watch1")
    expect(answer.locator("[data-task-state]")).to_have_text("completed")
    expect(answer).to_contain_text("released watch1")
    expect(id_in(page.locator("#watch-table"), task_id)).to_have_count(0)
    assert errors == []


def test_ages_tick_in_the_browser_without_server_traffic(page: Page, server: ConsoleServer, bot: TestAgent) -> None:
    """Bug 6: a watch's age stayed "0s" until some other event arrived."""
    ensure_bot(server, bot)
    errors = console_errors(page)
    task_id = start_task(page, "hold age1")
    frames: list[str] = []

    def watch(ws: WebSocket) -> None:
        ws.on("framereceived", lambda payload: frames.append(str(payload)))

    page.on("websocket", watch)
    page.goto("/watches/")
    live(page)
    age = row_of(page, "#watch-table", task_id).locator("time[data-age]")
    before, heard = age.inner_text(), len(frames)
    expect(age).not_to_have_text(before)  # a second later, by itself
    expect(age).to_have_text(re.compile(r"^\d+s$"))
    assert len(frames) == heard, frames[heard:]
    bot.release("age1")
    expect(id_in(page.locator("#watch-table"), task_id)).to_have_count(0)
    assert errors == []


def test_times_read_in_the_owners_time_zone(browser: Browser, server: ConsoleServer, bot: TestAgent) -> None:
    ensure_bot(server, bot)
    ctx = browser.new_context(base_url=server.url, timezone_id="Asia/Tokyo")
    try:
        page = ctx.new_page()
        errors = console_errors(page)
        page.goto("/login/")
        page.get_by_label("Username").fill(OWNER)
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Log in").click()
        page.goto("/chat/console/")
        live(page)
        page.get_by_label("Agent").select_option("bot")
        send(page, "hello zone")
        item = page.locator("#chat-log li", has_text="echo: hello zone").first
        when = item.locator("time[data-localized]")
        expect(when).to_have_attribute("title", re.compile(r"Asia/Tokyo"))
        at = datetime.fromisoformat(when.get_attribute("datetime") or "").astimezone(ZoneInfo("Asia/Tokyo"))
        assert when.inner_text() in (at.strftime("%H:%M:%S"), at.strftime("%Y-%m-%d %H:%M:%S"))
        expect(item.locator("[data-ago]")).to_have_text(re.compile(r"just now|\d+ s ago"))
        assert errors == []
    finally:
        ctx.close()


def test_status_page_is_live(page: Page, server: ConsoleServer, bot: TestAgent) -> None:
    ensure_bot(server, bot)
    errors = console_errors(page)
    page.goto("/a2a")
    live(page)
    other = page.context.new_page()
    try:
        task_id = start_task(other, "hold status1")
    finally:
        other.close()
    spaces = page.locator("#status-spaces")
    expect(id_in(spaces, task_id)).to_have_count(1)  # armed: shown without a reload
    expect(spaces.locator("time[data-age]").first).to_have_text(re.compile(r"^\d+s$"))
    shot(page, "status-live")
    bot.release("status1")
    expect(id_in(spaces, task_id)).to_have_count(0)
    assert errors == []


def test_an_answer_being_typed_survives_live_updates(page: Page, server: ConsoleServer, bot: TestAgent) -> None:
    """The question's own event re-renders its answer panel: the same panel again is left alone, so what the
    owner typed, and the answer's request, stay."""
    ensure_bot(server, bot)
    errors = console_errors(page)
    page.goto("/chat/console/")
    live(page)
    page.get_by_label("Agent").select_option("bot")
    send(page, "ask typing1")
    reply = question_after(page, "ask typing1")
    expect(reply).to_contain_text("Which colour?")
    reply.get_by_label("Answer bot").fill("green")
    expect(task_card(page, "ask typing1").locator("[data-task-state]")).to_have_text(
        "input-required"
    )  # live renders in
    expect(reply.get_by_label("Answer bot")).to_have_value("green")
    reply.get_by_role("button", name="Answer").click()
    expect(page.locator("#chat-log")).to_contain_text("got answer: green")  # the answer's live updates are in
    expect(page.locator("#chat-log")).to_have_count(1)
    assert duplicate_ids(page) == []
    assert errors == []


def focused(page: Page) -> str:
    """The id of the page's focused element (whether or not the browser's window has the focus)."""
    return page.evaluate("() => document.activeElement && document.activeElement.id")


class HeldFrames:
    """The chat tab's WebSocket through Playwright: its frames pass, or wait while `hold` is on until `release`
    (a live update that arrives after an htmx swap, whatever the machine's load)."""

    def __init__(self, page: Page) -> None:
        self.hold = False
        self.held: list[str | bytes] = []
        self.tab: WebSocketRoute | None = None
        page.route_web_socket("**/ws/console/chat/**", self._route)

    def _route(self, ws: WebSocketRoute) -> None:
        self.tab = ws
        ws.connect_to_server().on_message(self._frame)

    def _frame(self, message: str | bytes) -> None:
        if self.hold:
            self.held.append(message)
        elif self.tab is not None:
            self.tab.send(message)

    def wait_held(self, page: Page, count: int = 1) -> None:
        """Until `count` frames are held: Playwright hands the route its frames while the page is waited on."""
        deadline = time.monotonic() + WAIT_MS / 1000
        while len(self.held) < count:
            assert time.monotonic() < deadline, f"timed out waiting for {count} live frame(s) to hold"
            page.wait_for_timeout(20)

    def release(self) -> int:
        self.hold = False
        sent, self.held = self.held, []
        for message in sent:
            assert self.tab is not None
            self.tab.send(message)
        return len(sent)


def test_a_question_that_came_live_is_answered_in_one_log(page: Page, server: ConsoleServer, bot: TestAgent) -> None:
    """A question a live update brought is answered from the chat log: the answer's reply (the log) and the
    answer's own live updates (held until the reply is in) leave one log, no id twice."""
    ensure_bot(server, bot)
    errors = console_errors(page)
    frames = HeldFrames(page)
    try:
        start_task(page, "later race1")  # the send's wait ends while the agent still works: no question yet
        bot.release("race1")
        question = question_after(page, "later race1")
        expect(question).to_contain_text("Which colour?")  # a live update brought it
        assert duplicate_ids(page) == []
        question.get_by_label("Answer bot").fill("green")
        frames.hold = True
        question.get_by_role("button", name="Answer").click()
        expect(page.locator("#chat-log li.from-owner", has_text="green")).to_be_visible()  # the answer's reply
        expect(page.locator("#chat-log")).to_have_count(1)
        assert duplicate_ids(page) == []
        frames.release()
        expect(page.locator("#chat-log")).to_contain_text("got answer: green")  # its live updates are in too
        expect(page.locator("#chat-log")).to_have_count(1)
        assert duplicate_ids(page) == []
    finally:
        bot.release("race1")
    assert errors == []


def test_an_answer_in_flight_when_live_updates_land_leaves_one_log(
    page: Page, server: ConsoleServer, bot: TestAgent
) -> None:
    """The other order: the answer's reply is held back (route interception) until the live updates of the
    answered task have rendered the log anew; then the reply lands, as the one log."""
    ensure_bot(server, bot)
    errors = console_errors(page)
    held: list[tuple[Route, APIResponse]] = []

    def hold(route: Route) -> None:  # the server answers; the reply waits here until the test fulfills it
        held.append((route, route.fetch()))
        page.evaluate("() => { document.body.dataset.answerHeld = '1'; }")

    page.goto("/chat/console/")
    live(page)
    page.get_by_label("Agent").select_option("bot")
    send(page, "ask flight1")
    question = question_after(page, "ask flight1")
    expect(question).to_contain_text("Which colour?")
    page.route("**/chat/console/send/", hold)
    question.get_by_label("Answer bot").fill("green")
    question.get_by_role("button", name="Answer").click()
    page.wait_for_function("() => document.body.dataset.answerHeld === '1'")
    (route, answered) = held[0]
    expect(page.locator("#chat-log")).to_contain_text("got answer: green")  # the live updates, reply held
    route.fulfill(response=answered)
    expect(page.locator("#chat-log")).to_have_count(1)
    expect(page.locator("#chat-log")).to_contain_text("got answer: green")
    assert duplicate_ids(page) == []
    page.unroute("**/chat/console/send/")
    assert errors == []


def test_an_answer_typed_in_the_chat_log_survives_a_live_update(
    page: Page, server: ConsoleServer, bot: TestAgent
) -> None:
    """Bug: every live update of the chat renders its log anew, and the answer being typed into a question's
    form in the log was gone (and its box lost the focus). It stays, focused, the caret where it was."""
    ensure_bot(server, bot)
    errors = console_errors(page)
    page.goto("/chat/console/")
    live(page)
    page.get_by_label("Agent").select_option("bot")
    send(page, "ask survive1")
    task_id = task_id_of(task_card(page, "ask survive1"))
    form = page.locator("#chat-log form.answer", has=page.locator(f'input[name="task_id"][value="{task_id}"]'))
    box = form.get_by_role("textbox")
    box.fill("blu")
    other = page.context.new_page()
    try:
        other.goto("/chat/console/")
        other.get_by_label("Agent").select_option("bot")
        send(other, "hello while you type")
        expect(other.locator("#chat-log")).to_contain_text("echo: hello while you type")
    finally:
        other.close()
    expect(page.locator("#chat-log")).to_contain_text("echo: hello while you type")  # the log rendered anew
    expect(box).to_have_value("blu")
    assert focused(page) == box.get_attribute("id")
    page.keyboard.type("e")
    form.get_by_role("button", name="Answer").click()
    expect(page.locator("#chat-log")).to_contain_text("got answer: blue")
    assert duplicate_ids(page) == []
    assert errors == []


def test_progress_shows_live_on_the_watch_row_the_timeline_and_the_conversation(
    page: Page, server: ConsoleServer, bot: TestAgent
) -> None:
    """Progress, live: the agent's status messages ("working 3/3") appear as they arrive, each in one place
    updated in place (the watch row, the task timeline's progress line, the conversation's task line and answer
    panel), a reload shows the latest (stored), and the line's age ticks in the browser."""
    ensure_bot(server, bot)
    errors = console_errors(page)
    task_id = start_task(page, "steps 3 prog1 prog1end")
    watches, task = page.context.new_page(), page.context.new_page()
    watch_errors, task_errors = console_errors(watches), console_errors(task)
    try:
        watches.goto("/watches/")
        live(watches)
        task.goto(f"/tasks/bot/{task_id}/?target=console")
        live(task)
        bot.release("prog1")
        last = "working 3/3"
        row = row_of(watches, "#watch-table", task_id)
        expect(row.locator("[data-progress]")).to_contain_text(last)
        expect(row.locator("[data-task-state]")).to_have_text("working")
        expect(task.locator("#task-progress")).to_contain_text(last)
        expect(task.locator("#timeline-log li.kind-progress")).to_have_count(0)  # a line in place, not an entry each
        line = page.locator("#chat-log li.task-card", has=page.locator(f'a[href*="{task_id}"]')).locator(
            "[data-progress]"
        )
        expect(line).to_contain_text(last)
        expect(page.locator("#chat-log")).not_to_contain_text("working 2/3")  # no chat bubble per progress event
        expect(line.locator("[data-ago]")).to_have_text(re.compile(r"just now|\d+ s ago"))  # the browser's clock
        shot(task, "task-progress")
        shot(page, "conversation-progress")
        task.reload()
        expect(task.locator("#task-progress")).to_contain_text(last)
        live(task)
        bot.release("prog1end")
        expect(task.locator("#task-state [data-task-state]")).to_have_text("completed")
        expect(task.locator("#task-progress")).to_be_hidden()
        expect(id_in(watches.locator("#watch-table"), task_id)).to_have_count(0)
        expect(page.locator("#chat-log")).to_contain_text("3 steps done")
        assert duplicate_ids(page) == []
    finally:
        bot.release("prog1")
        bot.release("prog1end")
        watches.close()
        task.close()
    assert errors == [] and watch_errors == [] and task_errors == []


def test_an_answer_given_on_the_watches_page_replaces_its_panel(
    page: Page, server: ConsoleServer, bot: TestAgent
) -> None:
    """The answer panel of the watch table asks the agent's question; the answer's reply took the place of the
    form inside that panel, a second panel of the same task (and id) nested in the first."""
    ensure_bot(server, bot)
    errors = console_errors(page)
    task_id = start_task(page, "later wq1")
    page.goto("/watches/")
    live(page)
    row_of(page, "#watch-table", task_id).get_by_role("button", name="Re-check").click()
    answer = page.locator("#watch-answer")
    expect(answer.locator("[data-task-state]")).to_have_text("working")
    bot.release("wq1")
    expect(answer.locator("[data-task-state]")).to_have_text("input-required")
    answer.get_by_label("Your answer").fill("hold wa1")
    answer.get_by_role("button", name="Answer").click()
    expect(answer.locator("[data-task-state]")).to_have_text("working")
    assert duplicate_ids(page) == []
    bot.release("wa1")
    expect(answer.locator("[data-task-state]")).to_have_text("completed")
    expect(answer).to_contain_text("got answer: hold wa1")
    assert duplicate_ids(page) == [] and errors == []


def test_an_answer_given_on_a_task_page_comes_back_as_its_answer_panel(
    page: Page, server: ConsoleServer, bot: TestAgent
) -> None:
    """A question in the task page's timeline (and, after a re-check, in its answer panel) is answered in place;
    the reply went in place of the form, a second panel of the task beside the first (two ids each)."""
    ensure_bot(server, bot)
    errors = console_errors(page)
    task_id = start_task(page, "later tq1")
    page.goto(f"/tasks/bot/{task_id}/?target=console")
    live(page)
    bot.release("tq1")
    timeline = page.locator("#timeline")
    expect(timeline.get_by_label("Answer bot")).to_be_visible()
    page.get_by_role("button", name="Re-check").click()
    panel = page.locator("#task-answer")
    expect(panel.locator("[data-task-state]")).to_have_text("input-required")
    timeline.get_by_label("Answer bot").fill("hold ta1")
    timeline.get_by_role("button", name="Answer").click()
    expect(panel.locator("[data-task-state]")).to_have_text("working")
    expect(timeline.get_by_label("Answer bot")).to_have_count(0)  # the question is answered: its form goes
    assert duplicate_ids(page) == []
    bot.release("ta1")
    expect(panel.locator("[data-task-state]")).to_have_text("completed")
    expect(page.locator("#task-state [data-task-state]")).to_have_text("completed")
    assert duplicate_ids(page) == [] and errors == []


def test_cancel_on_the_task_page_asks_first(page: Page, server: ConsoleServer, bot: TestAgent) -> None:
    ensure_bot(server, bot)
    errors = console_errors(page)
    task_id = start_task(page, "hold asked")
    page.goto(f"/tasks/bot/{task_id}/?target=console")
    live(page)
    page.get_by_label("Cancel the task…").click()
    ask = page.get_by_role("button", name="Yes, cancel the task")
    expect(ask).to_be_visible()
    expect(page.locator("#task-answer")).not_to_contain_text("canceled")  # the first click sends nothing
    expect(page.locator("#task-state [data-task-state]")).to_have_text("working")
    shot(page, "task-cancel-confirm")
    ask.click()
    expect(page.locator("#task-answer")).to_contain_text("canceled")
    expect(page.locator("#task-state [data-task-state]")).to_have_text("canceled")
    expect(page.get_by_label("Cancel the task…")).to_have_count(0)
    assert errors == []
