"""Agent warnings at a glance (issue #23 item 15), against real loopback agents: a card that asks for a key the
entry lacks says "needs a key" (not "reachable") on the list, the agent's page and the dashboard; a card that
cannot be read says which URL was tried (masked); adding an agent that is down says so as a warning."""

from __future__ import annotations

import re
from collections.abc import Callable
from html import unescape

import pytest
from django.test import AsyncClient

from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.tool.tool import A2ATool
from tests.support.agents import TestAgent
from tests.web.test_agent_cards import HX, row
from tests.web.test_console_pages import check_page

pytestmark = pytest.mark.django_db(transaction=True)

KEY = "k-warn-NEVER-SHOWN-71c"
DEAD_URL = "http://127.0.0.1:9/"  # the discard port: nothing listens there
DEAD_CARD = "http://127.0.0.1:9/.well-known/agent-card.json"
REACHABLE = 'class="badge state-completed">'


def notices(html: str) -> list[tuple[str, str]]:
    """The page's flash messages: (level, text)."""
    return [
        (level, unescape(re.sub(r"<[^>]+>", "", text)))
        for level, text in re.findall(r'<p class="notice (\w+)" role="status">(.*?)</p>', html, re.S)
    ]


async def test_a_card_asking_for_a_key_the_entry_lacks_says_needs_a_key(
    owner: AsyncClient, tool: A2ATool, ws: Workspace, make_agent: Callable[..., TestAgent]
) -> None:
    keyed = make_agent(key=KEY)  # its card declares an API key (X-API-Key) scheme
    bearer = make_agent(key=KEY, bearer_only=True)  # its card declares http bearer
    ws.save_agents(
        [
            {"name": "keyed", "url": keyed.url},
            {"name": "bearer", "url": bearer.url},
            {"name": "has-key", "url": keyed.url, "key": KEY},
            {"name": "open", "url": make_agent().url},
        ],
        None,
    )
    table = (await owner.post("/agents/refresh/", {}, headers=HX)).text
    for html in (table, (await owner.get("/agents/")).text):
        for name, asked in (("keyed", "an API key"), ("bearer", "a bearer token")):
            r = row(html, name)
            assert "needs a key" in r and f"its card asks for {asked}" in r and REACHABLE not in r
            assert f'href="/agent/{name}/edit/"' in r
        for name in ("has-key", "open"):
            assert REACHABLE + "reachable" in row(html, name) and "needs a key" not in row(html, name)
    page = (await owner.get("/agent/keyed/")).text
    check_page("agent", page)
    assert "Needs a key:" in page and "this card asks for an API key and agents.json has none for keyed" in page
    assert "Needs a key" not in (await owner.get("/agent/has-key/")).text
    assert "a bearer token" in (await owner.get("/agent/bearer/")).text
    status = (await owner.get("/dashboard/agents/", headers=HX)).text
    lines = dict(re.findall(r'<a href="/agent/([\w-]+)/">.*?</td>\s*<td>(.*?)</td>', status, re.S))
    assert "needs a key" in lines["keyed"] and "needs a key" in lines["bearer"]
    assert "needs a key" not in lines["has-key"] and "needs a key" not in lines["open"]
    assert KEY not in table + page + status


async def test_a_card_that_cannot_be_read_says_which_url_was_tried(
    owner: AsyncClient, tool: A2ATool, ws: Workspace, agent: TestAgent
) -> None:
    wrong = f"http://127.0.0.1:{agent.port}/nope/?token={KEY}"  # serves no card (404); its query is a secret
    ws.save_agents([{"name": "gone", "url": DEAD_URL}, {"name": "wrong", "url": wrong}], None)
    wrong_card = f"http://127.0.0.1:{agent.port}/nope/.well-known/agent-card.json"
    table = (await owner.post("/agents/refresh/", {}, headers=HX)).text
    assert "is it running? Tried " + DEAD_CARD in row(table, "gone")
    assert "HTTP 404; check its url. Tried " + wrong_card in row(table, "wrong")
    page = (await owner.get("/agent/wrong/")).text
    assert "Unreachable:" in page and "Tried " + wrong_card in page
    status = (await owner.get("/dashboard/agents/", headers=HX)).text
    assert "Tried " + DEAD_CARD in status and "Tried " + wrong_card in status
    for html in (table, page, status):
        assert KEY not in html and "token=" not in html


async def test_adding_an_agent_that_is_down_says_it_was_added_but_is_unreachable(
    owner: AsyncClient, tool: A2ATool, ws: Workspace, make_agent: Callable[..., TestAgent]
) -> None:
    async def add(name: str, url: str, key: str = "") -> list[tuple[str, str]]:
        form = {"name": name, "url": url, "key": key, "version": ws.read_agents().version}
        r = await owner.post("/agents/add/", form)
        assert r.status_code == 302 and r["Location"] == f"/agent/{name}/"
        page = (await owner.get(r["Location"])).text
        assert KEY not in page
        return notices(page)

    said = await add("gone", DEAD_URL)
    assert said == [
        (
            "warning",
            'Agent gone was added, but it is unreachable: agent "gone" is unreachable (its card could not be '
            f"fetched); is it running? Tried {DEAD_CARD}",
        )
    ]
    assert ws.read_agents().get("gone") is not None  # added all the same
    assert notices((await owner.get("/agent/gone/")).text) == []  # said once
    keyed = make_agent(key=KEY)
    said = await add("keyed", keyed.url)
    assert len(said) == 1 and said[0][0] == "warning"
    assert said[0][1].startswith("Agent keyed was added, but its card asks for an API key and this entry has none")
    assert await add("with-key", keyed.url, KEY) == [("success", "Agent with-key added.")]
