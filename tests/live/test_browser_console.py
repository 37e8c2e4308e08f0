"""End to end: a real Chromium drives the real server (`manage.py serve`) against real loopback agents.

One server, one browser and one logged-in context for the module; each test is one thing an owner does.
Waits are Playwright's bounded auto-waiting `expect`, never sleeps.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.support.agents import TestAgent
from tests.support.browser import (
    WAIT_MS,
    console_errors,
    duplicate_ids,
    id_in,
    live,
    question_after,
    row_of,
    shot,
    task_card,
    task_id_of,
)
from tests.support.console_server import OWNER, PASSWORD, ConsoleServer

expect.set_options(timeout=WAIT_MS)

pytestmark = [pytest.mark.timeout(120)]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConsoleServer]:
    s = ConsoleServer(tmp_path_factory.mktemp("console"), A2AClient__WaitSeconds="2").start()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def context(browser: Browser, server: ConsoleServer) -> Iterator[BrowserContext]:
    """A logged-in context (the login itself is the first thing checked)."""
    ctx = browser.new_context(base_url=server.url, viewport={"width": 1100, "height": 900})
    ctx.set_default_timeout(WAIT_MS)
    page = ctx.new_page()
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/login/"))
    page.get_by_label("Username").fill(OWNER)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()
    page.close()
    yield ctx
    ctx.close()


@pytest.fixture
def page(context: BrowserContext) -> Iterator[Page]:
    p = context.new_page()
    yield p
    p.close()


def ensure_bot(server: ConsoleServer, bot: TestAgent) -> None:
    """Tests after the first need the agent the first one adds by the form (lets one test run alone)."""
    if server.workspace.read_agents().get("bot") is None:
        server.workspace.save_agents([{"name": "bot", "url": bot.url, "key": "k-browser-secret"}], None)


def send(page: Page, text: str) -> None:
    page.get_by_role("textbox", name="Message").fill(text)
    page.get_by_role("button", name="Send", exact=True).click()


def test_add_agent_by_form_and_see_its_skills(page: Page, server: ConsoleServer, bot: TestAgent) -> None:
    page.goto("/agents/")
    expect(page.get_by_text("No agents yet")).to_be_visible()
    shot(page, "agents-empty")
    page.get_by_role("link", name="Add an agent").click()
    page.get_by_label("Name").fill("bot")
    page.get_by_label("URL").fill(bot.url)
    page.get_by_label("Key").fill("k-browser-secret")
    page.get_by_role("button", name="Add agent").click()
    expect(page.get_by_role("heading", name="bot")).to_be_visible()
    expect(page.get_by_text("Echo", exact=True)).to_be_visible()
    expect(page.get_by_role("link", name="hello there")).to_be_visible()
    assert "k-browser-secret" not in page.content()
    shot(page, "agent")
    page.goto("/agents/")
    expect(page.get_by_text("key set")).to_be_visible()
    shot(page, "agents")
    # an example pre-fills the send form
    page.goto("/agent/bot/")
    page.get_by_role("link", name="hello there").click()
    expect(page.get_by_role("textbox", name="Message")).to_have_value("hello there")


def card(page: Page, text: str):
    """The task card after the owner's message `text` in the chat log."""
    message = page.locator("#chat-log li.kind-sent", has_text=text).last
    return message.locator("xpath=following-sibling::li[contains(@class, 'task-card')][1]")


def test_send_and_see_the_answer(page: Page, server: ConsoleServer, bot: TestAgent) -> None:
    ensure_bot(server, bot)
    page.goto("/chat/console/")
    live(page)
    page.get_by_label("Agent").select_option("bot")
    send(page, "hello from the browser")
    expect(task_card(page, "hello from the browser").locator("[data-task-state]")).to_have_text("completed")
    expect(page.locator("#chat-log")).to_contain_text("echo: hello from the browser")
    assert duplicate_ids(page) == []
    shot(page, "conversation")


def test_slow_task_completes_without_reload(page: Page, server: ConsoleServer, bot: TestAgent) -> None:
    ensure_bot(server, bot)
    page.goto("/chat/console/")
    live(page)
    page.get_by_label("Agent").select_option("bot")
    send(page, "hold slow1")
    state = task_card(page, "hold slow1").locator("[data-task-state]")
    expect(state).to_have_text("working")
    bot.release("slow1")
    expect(state).to_have_text("completed")
    expect(page.locator("#chat-log")).to_contain_text("released slow1")
    assert duplicate_ids(page) == []


def test_what_is_typed_while_the_answer_comes_is_kept(page: Page, server: ConsoleServer, bot: TestAgent) -> None:
    """The sent message leaves the box at once; what is typed next stays while the task's updates arrive."""
    ensure_bot(server, bot)
    page.goto("/chat/console/")
    live(page)
    page.get_by_label("Agent").select_option("bot")
    send(page, "hold typed1")
    button = page.get_by_role("button", name="Send", exact=True)
    box = page.get_by_role("textbox", name="Message")
    expect(box).to_have_value("")
    box.fill("and one more thing")
    expect(button).to_be_enabled()
    state = task_card(page, "hold typed1").locator("[data-task-state]")
    expect(state).to_have_text("working")
    bot.release("typed1")
    expect(state).to_have_text("completed")
    expect(box).to_have_value("and one more thing")


def test_answer_a_question(page: Page, server: ConsoleServer, bot: TestAgent) -> None:
    ensure_bot(server, bot)
    page.goto("/chat/console/")
    live(page)
    page.get_by_label("Agent").select_option("bot")
    send(page, "ask q1")
    question = question_after(page, "ask q1")
    expect(question).to_contain_text("Which colour?")
    question.get_by_label("Answer bot").fill("blue")
    question.get_by_role("button", name="Answer").click()
    expect(page.locator("#chat-log")).to_contain_text("got answer: blue")
    assert duplicate_ids(page) == []


def test_watch_table_recheck_and_cancel(page: Page, server: ConsoleServer, bot: TestAgent) -> None:
    ensure_bot(server, bot)
    page.goto("/chat/console/")
    live(page)
    page.get_by_label("Agent").select_option("bot")
    send(page, "hold never")
    card = task_card(page, "hold never")
    expect(card.locator("[data-task-state]")).to_have_text("working")
    task_id = task_id_of(card)
    page.goto("/watches/")
    live(page)
    row = row_of(page, "#watch-table", task_id)
    expect(row).to_be_visible()
    shot(page, "watches")
    search = page.get_by_role("searchbox", name="Search")
    search.fill("agent:nobody")
    expect(page.locator("#watch-table")).to_contain_text("No watch matches")
    search.fill(f"source:subscribe {task_id[:8]}")
    expect(row).to_be_visible()
    row.get_by_role("button", name="Re-check").click()
    expect(page.locator("#watch-answer")).to_contain_text("working")
    row.get_by_label(f"Cancel task {task_id}…").click()  # asks first: nothing is sent yet
    expect(row.get_by_text("Ask bot to stop it?")).to_be_visible()
    expect(page.locator("#watch-answer")).not_to_contain_text("canceled")
    shot(page, "watches-cancel-confirm")
    row.get_by_role("button", name=f"Yes, cancel task {task_id}").click()
    expect(page.locator("#watch-answer")).to_contain_text("canceled")
    expect(id_in(page.locator("#watch-table"), task_id)).to_have_count(0)
    page.goto(f"/tasks/bot/{task_id}/?target=console")
    expect(page.locator("#timeline")).to_contain_text("canceled")
    shot(page, "task")


def test_edit_conflict(page: Page, server: ConsoleServer, bot: TestAgent) -> None:
    ensure_bot(server, bot)
    page.goto("/agent/bot/edit/")
    page.get_by_label("Description").fill("my change")
    entries = [e.to_json() for e in server.workspace.read_agents().entries]
    entries[0]["description"] = "changed behind your back"
    server.workspace.save_agents(entries, None)
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("heading", name="The agents file changed")).to_be_visible()
    expect(page.get_by_text("changed behind your back", exact=True)).to_be_visible()  # the diff shows it too
    assert "k-browser-secret" not in page.content()
    shot(page, "conflict")


def test_pages_screens(page: Page, server: ConsoleServer) -> None:
    for path, name in [("/", "dashboard"), ("/a2a", "status"), ("/inbox/console/", "inbox")]:
        page.goto(path)
        expect(page.locator("main h1")).to_be_visible()
        shot(page, name)
    page.set_viewport_size({"width": 390, "height": 800})
    for path, name in [("/watches/", "watches-phone"), ("/", "dashboard-phone"), ("/chat/console/", "chat-phone")]:
        page.goto(path)
        expect(page.locator("main h1")).to_be_visible()
        shot(page, name)
        # nothing is wider than a phone: tables turn into cards, forms wrap
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, name


def test_logged_out_browser_sent_to_login_and_socket_refused(browser: Browser, server: ConsoleServer) -> None:
    ctx = browser.new_context(base_url=server.url)
    try:
        page = ctx.new_page()
        page.goto("/watches/")
        expect(page).to_have_url(re.compile(r"/login/\?next=/watches/"))
        outcome = page.evaluate(
            """(url) => new Promise((done) => {
                const ws = new WebSocket(url);
                ws.onopen = () => done("open");
                ws.onclose = () => done("closed");
            })""",
            server.ws_url + "/ws/console/watches/",
        )
        assert outcome == "closed"
    finally:
        ctx.close()


# Collects what the Content-Security-Policy refuses, from inside the page (an init script is not subject to it).
CSP_VIOLATIONS = """window.__csp = [];
document.addEventListener("securitypolicyviolation",
    (e) => window.__csp.push(e.violatedDirective + " " + e.blockedURI));"""
CONSOLE_PAGES = [
    "/",
    "/agents/",
    "/agents/add/",
    "/agents/file/",
    "/agent/bot/",
    "/agent/bot/edit/",
    "/agent/bot/delete/",
    "/chat/",
    "/chat/console/",
    "/watches/",
    "/tasks/",
    "/inbox/",
    "/inbox/console/",
    "/a2a",
    "/targets/",
    "/targets/add/",
    "/targets/console/",
    "/audit/",
    "/password/",
]


def unexpected(errors: list[str]) -> list[str]:
    """Every console error and page error counts (the chat socket used to send the badge of tasks whose answer
    panel was not on the page, and htmx logged htmx:oobErrorNoTarget for each: console.js drops those now)."""
    return errors


def with_live_data(page: Page) -> list[str]:
    """A finished task, a question and a running watch, so every page below renders rows, badges and forms;
    returns the task pages to visit as well."""
    page.goto("/chat/console/")
    live(page)
    page.get_by_label("Agent").select_option("bot")
    tasks = []
    for text, state in (("hello pages", "completed"), ("ask pages", "input-required"), ("hold pages", "working")):
        send(page, text)
        card = task_card(page, text)
        expect(card.locator("[data-task-state]")).to_have_text(state)
        tasks.append(f"/tasks/bot/{task_id_of(card)}/?target=console")
    return tasks


def test_every_page_runs_under_the_policy_and_stays_live(page: Page, server: ConsoleServer, bot: TestAgent) -> None:
    ensure_bot(server, bot)
    errors = console_errors(page)
    page.add_init_script(CSP_VIOLATIONS)
    for path in CONSOLE_PAGES + with_live_data(page):
        response = page.goto(path)
        assert response is not None, path
        directives = [d.strip() for d in response.headers["content-security-policy"].split(";")]
        assert f"script-src {server.url}/static/" in directives, path
        expect(page.locator("main h1")).to_be_visible()
        page.wait_for_load_state("networkidle")  # htmx's own requests (the dashboard's agent list) are done
        assert page.evaluate("window.__csp") == [], path
        assert unexpected(errors) == [], path
    # htmx, its ws extension and console.js all work under the policy: a WebSocket update, a swap, a cleared box
    page.goto("/chat/console/")
    live(page)
    page.get_by_label("Agent").select_option("bot")
    send(page, "hold csp1")
    expect(task_card(page, "hold csp1").locator("[data-task-state]")).to_have_text("working")
    expect(page.get_by_role("textbox", name="Message")).to_have_value("")
    bot.release("csp1")
    expect(page.locator("#chat-log")).to_contain_text("released csp1")  # pushed over the WebSocket
    bot.release("pages")
    assert page.evaluate("window.__csp") == [] and unexpected(errors) == []
    # markup an agent managed to inject could not run code
    page.evaluate(
        """() => document.body.insertAdjacentHTML("beforeend",
            '<img src="/static/img/favicon.svg" onload="window.__ran = 1">')"""
    )
    page.evaluate("""() => { const s = document.createElement("script");
        s.textContent = "window.__ran = 2"; document.body.append(s); }""")
    page.wait_for_function("() => window.__csp.length >= 2")
    assert page.evaluate("window.__ran") is None
    assert all("script-src" in v for v in page.evaluate("window.__csp"))


def test_the_menu_marks_the_page_and_folds_on_a_phone(page: Page, server: ConsoleServer, bot: TestAgent) -> None:
    ensure_bot(server, bot)
    errors = console_errors(page)
    page.goto("/tasks/bot/some-task/?target=console")  # a task page belongs to Tasks, not Watches
    menu = page.get_by_role("navigation", name="Main")
    expect(menu.locator('a[aria-current="page"]')).to_have_text("Tasks")
    expect(page.get_by_role("button", name="Menu")).to_be_hidden()  # on a desktop the menu is always shown
    page.set_viewport_size({"width": 390, "height": 844})
    toggle = page.get_by_role("button", name="Menu")
    expect(toggle).to_be_visible()
    expect(menu).to_be_hidden()
    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(menu.get_by_role("link", name="Agents")).to_be_visible()
    shot(page, "menu-phone")
    toggle.click()
    expect(menu).to_be_hidden()
    page.goto("/chat/console/")  # on a phone the chat comes before the other conversations
    # measured in the page, both at once: the live render that follows the socket's opening swaps #threads in anew
    page.wait_for_function(
        """() => {
            const chat = document.querySelector("section.thread"), threads = document.querySelector("#threads");
            return chat && threads && chat.getBoundingClientRect().top < threads.getBoundingClientRect().top;
        }"""
    )
    assert errors == []
