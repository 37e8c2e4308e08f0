"""Structured data parts and forms in a real Chromium at desktop and phone width, light and dark (#23 item 9).

A data artifact reads as keys and values with a JSON toggle; a question carrying a form (the A2A samples' `type:
"form"` shape) is a real form: the owner fills it in, sends it, and the task completes with the values the agent
echoes. On both SDKs' agents: the Python `bot` and a JS `jsbot` (@a2a-js/sdk), real loopback agents.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.support.agents import TestAgent
from tests.support.browser import WAIT_MS, element_shot, live, send, shot, task_card, width
from tests.support.console_server import ConsoleServer
from tests.support.js_agents import JsAgent, JsAgentHost

expect.set_options(timeout=WAIT_MS)

pytestmark = [pytest.mark.timeout(180)]


@pytest.fixture(scope="module")
def jsbot(js_host: JsAgentHost) -> JsAgent:
    return js_host.make()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, bot: TestAgent, jsbot: JsAgent) -> Iterator[ConsoleServer]:
    s = ConsoleServer(tmp_path_factory.mktemp("console"), A2AClient__WaitSeconds="5").start()
    s.workspace.save_agents([{"name": "bot", "url": bot.url}, {"name": "jsbot", "url": jsbot.url}], None)
    yield s
    s.stop()


def _send_to(page: Page, agent: str, text: str) -> None:
    page.goto("/chat/console/")
    live(page)
    page.get_by_label("Agent", exact=True).select_option(agent)
    send(page, text)


@pytest.mark.parametrize("agent", ["bot", "jsbot"])
def test_a_data_part_reads_as_keys_and_values_with_a_json_toggle(page: Page, agent: str) -> None:
    said = f"data {agent}-{width(page)}"  # this test's own message: the results of the others may still arrive
    _send_to(page, agent, said)
    sent = page.locator("#chat-log li.kind-sent", has_text=said).last
    result = sent.locator("xpath=following-sibling::li[contains(@class, 'kind-result')][1]")
    part = result.locator(".data-part")
    expect(part.locator(".kv-view dl.kv > dt").first).to_have_text("customer")
    expect(part.locator(".kv-view")).to_contain_text("Ada <b>Lovelace</b>")  # the agent's HTML as text
    assert part.locator(".kv-view b").count() == 0
    expect(part.locator(".kv-table th")).to_have_text(["qty", "sku"])
    shot(page, f"data-view-{agent}-{width(page)}")
    part.get_by_text("JSON", exact=True).click()
    expect(part.locator("pre.json")).to_be_visible()
    expect(part.locator("pre.json")).to_contain_text('"A-17"')
    expect(part.locator(".kv-view")).to_be_hidden()
    part.get_by_text("JSON", exact=True).click()
    expect(part.locator(".kv-view")).to_be_visible()


@pytest.mark.parametrize("agent", ["bot", "jsbot"])
def test_a_form_is_filled_in_and_the_task_completes_with_its_values(page: Page, agent: str) -> None:
    tag = f"{agent}-{width(page)}"
    _send_to(page, agent, "form")
    form = page.locator("#chat-log li.kind-question form.data-form").last
    expect(form.get_by_label("Date")).to_have_value("2026-12-01")  # prefilled from form_data
    expect(form.get_by_label("Request ID")).to_have_value("request_id_1234567")
    expect(form.get_by_label("Category")).to_have_value("travel")
    expect(form.get_by_label("Amount")).to_have_attribute("required", "")
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        shot(page, f"data-form-{tag}-{scheme}")
        element_shot(form, f"data-form-only-{tag}-{scheme}")
    page.emulate_media(color_scheme="light")
    form.get_by_label("Date").fill("2026-12-05")
    form.get_by_label("Amount").fill("12.5")
    form.get_by_label("Purpose").fill(f"Taxi {tag}")
    form.get_by_label("Category").select_option("meals")
    form.get_by_label("I have a receipt").check()
    form.get_by_role("button", name="Send the form").click()
    result = page.locator("#chat-log li.kind-result", has_text=f"Taxi {tag}").last
    expect(result).to_contain_text('"purpose":"Taxi')
    expect(result.locator(".badge")).to_have_text("completed")
    echoed = result.locator(".data-part .kv-view")
    expect(echoed).to_contain_text(f"Taxi {tag}")
    expect(echoed).to_contain_text("2026-12-05")
    expect(page.locator("#chat-log form.data-form")).to_have_count(0)  # answered: the form is gone
    card = task_card(page, "form")
    expect(card.locator(".badge")).to_have_text("completed")
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        shot(page, f"data-form-answered-{tag}-{scheme}")
        element_shot(result, f"data-form-echo-{tag}-{scheme}")
