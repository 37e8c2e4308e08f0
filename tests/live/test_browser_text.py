"""Results that read well, in a real Chromium at desktop and phone width (#23 items 6, 7 and 8).

An agent's markdown is rendered and made safe (no script, no `javascript:` link, no image loaded, links
rel="noopener noreferrer nofollow") with a Raw toggle; a long text shows its start with Show all and Download,
and only a few lines in the dashboard's latest results; ids are shown short with a copy button, and JSON is
highlighted. The agent is the real loopback echo agent: what the owner types comes back as the agent's text.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.support.agents import TestAgent
from tests.support.browser import SIZES, WAIT_MS, live, send, shot, task_card, width

expect.set_options(timeout=WAIT_MS)

pytestmark = [pytest.mark.timeout(180)]

HOSTILE = (
    "**bold** and `code`, [a link](https://example.com/x), [a trap](javascript:alert(1)), "
    "[inside](/agents/), <img src=x onerror=alert(1)> <script>alert(2)</script> ![a picture](https://example.com/p.png)"
    "\n\n- one\n- two"
)


@pytest.fixture(scope="module")
def permissions() -> list[str]:
    return ["clipboard-read", "clipboard-write"]


def answer(page: Page, text: str) -> str:
    """Send `text` to the echo agent from the chat; the locator text of its answer (`echo: …`)."""
    page.goto("/chat/console/")
    live(page)
    send(page, text)
    return f"echo: {text.splitlines()[0]}"


def test_markdown_is_rendered_and_made_safe(page: Page) -> None:
    tag = f"md-{width(page)}"
    first = answer(page, f"{tag} {HOSTILE}")
    shown = page.locator("#chat-log .kind-result .agent-text", has_text=first.split("**")[0]).last
    md = shown.locator(".md")
    expect(md.locator("strong")).to_have_text("bold")
    expect(md.locator("code")).to_have_text("code")
    expect(md.locator("li")).to_have_count(2)
    link = md.get_by_role("link", name="a link")
    expect(link).to_have_attribute("href", "https://example.com/x")
    expect(link).to_have_attribute("rel", "noopener noreferrer nofollow")
    assert md.locator("img, script").count() == 0  # nothing loaded, nothing run
    assert md.locator("a[href^='javascript'], a[href^='/']").count() == 0  # no script link, no link into the console
    expect(md.get_by_role("link", name="a picture (image)")).to_have_attribute("href", "https://example.com/p.png")
    expect(md).to_contain_text("<img src=x onerror=alert(1)>")  # the agent's HTML is shown as text
    shot(page, f"text-markdown-{width(page)}")
    # Raw shows the text as the agent sent it, Formatted goes back
    shown.get_by_role("button", name="Raw").click()
    expect(shown.locator("pre.raw")).to_be_visible()
    expect(shown.locator("pre.raw")).to_contain_text("**bold** and `code`")
    expect(md).to_be_hidden()
    shown.get_by_role("button", name="Formatted").click()
    expect(md).to_be_visible()
    # Copy takes the raw text
    shown.get_by_role("button", name="Copy").click()
    assert page.evaluate("navigator.clipboard.readText()").startswith(f"echo: {tag} **bold**")


def test_a_long_text_shows_its_start_with_show_all_and_download(page: Page) -> None:
    tag = f"long-{width(page)}"
    lines = [f"{tag} line {i:02d}" for i in range(1, 81)]
    answer(page, "\n".join(lines))
    shown = page.locator("#chat-log .kind-result .agent-text", has_text=f"{tag} line 01").last
    expect(shown.get_by_role("button", name="Show all")).to_be_visible()
    md = shown.locator(".md")
    folded = md.bounding_box()["height"]  # type: ignore[index]
    assert folded < 1100, folded  # its start: about forty lines, not eighty
    shown.get_by_role("button", name="Show all").click()
    expect(shown.get_by_role("button", name="Show less")).to_have_attribute("aria-expanded", "true")
    assert md.bounding_box()["height"] > folded * 1.5  # type: ignore[index]
    with page.expect_download() as got:
        shown.get_by_role("button", name="Download").click()
    assert Path(got.value.path()).read_text(encoding="utf-8") == "echo: " + "\n".join(lines)
    # the dashboard's latest results: a few lines, never the whole text
    page.goto("/")
    latest = page.locator("#latest-results .agent-text", has_text=f"{tag} line 01").first
    expect(latest.get_by_role("button", name="Show all")).to_be_visible()
    assert latest.locator(".md").bounding_box()["height"] < 150  # type: ignore[index]
    assert page.evaluate("document.documentElement.scrollHeight") < 4000
    shot(page, f"text-dashboard-folded-{width(page)}")


def test_ids_are_short_with_a_copy_button_and_json_is_highlighted(page: Page) -> None:
    answer(page, f"ids-{width(page)}")
    page.locator("#chat-log").get_by_role("link", name="task", exact=True).last.click()
    expect(page.get_by_role("heading", name="Task")).to_be_visible()
    code = page.locator("h1 .short-id code")
    full = code.get_attribute("title") or ""
    assert len(full) > 8 and code.inner_text() == f"{full[:8]}…"  # short, the whole on hover
    page.get_by_role("button", name=f"Copy task id {full}").click()
    assert page.evaluate("navigator.clipboard.readText()") == full
    expect(page.locator("h1 [data-copied]")).to_be_visible()  # "copied"
    assert (page.locator("h1").bounding_box() or {"height": 999})["height"] < 60  # one line, even on a phone
    page.get_by_role("button", name="Re-check").click()
    raw = page.locator("#task-raw pre.json")
    expect(raw.locator(".nt").first).to_be_visible()  # keys coloured: highlighted on the server
    expect(raw).to_contain_text(full)
    shot(page, f"text-task-ids-{width(page)}")


def test_the_timeline_speaks_the_owners_language(page: Page, bot: TestAgent) -> None:
    """#23 item 14: how the console followed the task, in words, not event names."""
    tag = f"tl-{width(page)}"
    answer(page, f"hold {tag}")
    card = task_card(page, f"hold {tag}")
    expect(card).to_contain_text("following by")  # the send's wait (1 s) is over: a watch took over
    bot.release(tag)
    expect(card.locator("[data-task-state]")).to_have_text("completed")
    card.get_by_role("link", name="task", exact=True).click()
    timeline = page.locator("#timeline-log")
    expect(timeline).to_contain_text("Following by")
    expect(timeline).to_contain_text("Stopped following: the task is over")
    expect(timeline).to_contain_text("Result delivered to the chat console")
    assert "watch." not in timeline.inner_text()
    expect(timeline.locator("li.kind-result")).to_have_count(1)
    shot(page, f"text-timeline-{width(page)}")


def test_lists_say_what_you_asked(page: Page) -> None:
    """#23 item 12: Tasks and the dashboard's Latest results show the first line of the message sent."""
    tag = f"asked-{width(page)}"
    echo = answer(page, f"{tag} plan my trip\nwith details below")
    expect(page.locator("#chat-log .kind-result", has_text=echo)).to_be_visible()
    page.goto("/tasks/")
    live(page)
    row = page.locator("table.tasks tbody tr", has_text=f"{tag} plan my trip").first
    expect(row.locator("td.asked")).to_have_text(f"{tag} plan my trip")
    expect(page.locator("table.tasks thead")).to_contain_text("You asked")
    shot(page, f"tasks-you-asked-{width(page)}")
    page.goto("/")
    live(page)
    latest = page.locator("#latest-results li", has_text=f"echo: {tag}").first
    expect(latest.locator(".asked")).to_have_text(f"You asked: {tag} plan my trip")  # quoted by the style sheet
    assert page.evaluate("document.documentElement.scrollWidth") <= SIZES[width(page)]["width"]
