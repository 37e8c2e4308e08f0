"""`make screenshots`: every console page with live data, as PNGs in test-output/screenshots/, for a reviewer.

    .venv/bin/python -m tests.support.screenshots

Starts the real console (`manage.py serve`, push to itself) in a temporary folder with two real a2a-sdk agents
(`bot`: push and streaming, with a key; `poet`: streaming only), then drives a real Chromium as the owner:
finished tasks, a failed one, a question waiting for an answer, running tasks (watches by push and by stream),
a conversation (with a data part and a form question), the inbox, an agents.json conflict, and takes a
full-page shot of each page
(`tests.support.browser.shot`, as the browser tests do; they write there too, with these names for some), then
each page again as `<page>-<desktop|phone>-<light|dark>.png` (1280 px and 390x844, each color scheme).
Prints the files written. About a minute.
"""

from __future__ import annotations

import logging
import socket
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import Page, expect, sync_playwright

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.support.agents import start_agent  # noqa: E402
from tests.support.browser import (  # noqa: E402
    SHOTS,
    WAIT_MS,
    launch,
    live,
    logged_in,
    send,
    shot,
    task_card,
    task_id_of,
)
from tests.support.console_server import ConsoleServer  # noqa: E402

KEY = "k-screenshots-secret"
VARIANTS = {"desktop": (1280, 900), "phone": (390, 844)}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ask(page: Page, agent: str, text: str, state: str) -> str:
    """Send `text` to `agent` from the console chat; the task's id once its card says `state`."""
    page.get_by_label("Agent").select_option(agent)
    send(page, text)
    card = task_card(page, text)
    expect(card.locator("[data-task-state]")).to_have_text(state)
    return task_id_of(card)


def take(page: Page, path: str, name: str, is_live: bool = True) -> None:
    page.goto(path)
    expect(page.locator("main h1").first).to_be_visible()
    if is_live:
        live(page)
    assert KEY not in page.content(), f"the agent's key is on {path}"
    shot(page, name)
    print(f"  {path:<40} {SHOTS / (name + '.png')}")


def main() -> None:
    logging.disable(logging.WARNING)  # the agents' SDK reports the pushes it could not send once the console stops
    base = Path(tempfile.mkdtemp(prefix="a2a-screenshots-"))
    bot = start_agent(name="Travel bot", description="Plans trips and books them", key=KEY)
    poet = start_agent(name="Poet", description="Writes short poems", push=False)
    port = free_port()
    console = ConsoleServer(
        base, port=port, A2AClient__WaitSeconds="1", A2AClient__PushBaseUrl=f"http://127.0.0.1:{port}"
    ).start(timeout=60)
    console.workspace.save_agents(
        [
            {"name": "bot", "url": bot.url, "key": KEY, "description": "Plans trips and books them"},
            {"name": "poet", "url": poet.url, "description": "Writes short poems"},
        ],
        None,
    )
    try:
        with sync_playwright() as p:
            browser = launch(p)
            anonymous = browser.new_context(base_url=console.url, viewport={"width": 1100, "height": 900})
            login = anonymous.new_page()
            print(f"writing to {SHOTS}:")
            take(login, "/login/", "login", is_live=False)
            anonymous.close()

            ctx = logged_in(browser, console.url)
            page = ctx.new_page()
            page.goto("/chat/console/")
            live(page)
            done = ask(page, "bot", "hello there, plan a weekend in Lisbon", "completed")
            ask(page, "poet", "hello poet, a haiku about the sea", "completed")
            ask(page, "bot", "fail", "failed")
            ask(page, "bot", "hold lisbon-flights", "working")  # runs on: a watch by push
            ask(page, "poet", "hold sonnet", "working")  # a watch by stream
            ask(page, "bot", "data", "completed")  # a data part, shown as keys and values
            ask(page, "bot", "ask", "input-required")  # a question waiting in the inbox
            ask(page, "bot", "form", "input-required")  # a question that is a form to fill

            pages = [
                ("/", "dashboard", True),
                ("/agents/", "agents", True),
                ("/agent/bot/", "agent-card", False),
                ("/watches/", "watches", True),
                ("/tasks/", "tasks", True),
                (f"/tasks/bot/{done}/?target=console", "task", True),
                ("/chat/console/", "conversation", True),
                ("/inbox/console/", "inbox", True),
                ("/inbox/console/?show=questions", "questions", True),
                ("/a2a", "status", True),
                ("/targets/", "targets", False),
                ("/audit/", "audit", False),
            ]
            for path, name, is_live in pages:
                take(page, path, name, is_live)
            # every page again at phone width and in the dark scheme: light and dark, desktop and phone
            for size, (width, height) in VARIANTS.items():
                for scheme in ("light", "dark"):
                    variant = logged_in(browser, console.url, width, height, color_scheme=scheme)
                    other = variant.new_page()
                    for path, name, is_live in pages:
                        take(other, path, f"{name}-{size}-{scheme}", is_live)
                    variant.close()

            # an agents.json conflict: the file changes while the owner edits
            page.goto("/agent/bot/edit/")
            page.get_by_label("Description").fill("Plans trips, books them, and sends postcards")
            entries = [e.to_json() for e in console.workspace.read_agents().entries]
            entries[0]["description"] = "Plans trips (changed in the file meanwhile)"
            console.workspace.save_agents(entries, None)
            page.get_by_role("button", name="Save").click()
            expect(page.get_by_role("heading", name="The agents file changed")).to_be_visible(timeout=WAIT_MS)
            shot(page, "agents-conflict")
            print(f"  {'agents.json conflict':<40} {SHOTS / 'agents-conflict.png'}")
            browser.close()
    finally:
        for agent in (bot, poet):
            agent.stop()
        console.stop()


if __name__ == "__main__":
    t0 = time.monotonic()
    main()
    print(f"done in {time.monotonic() - t0:.0f} s")
