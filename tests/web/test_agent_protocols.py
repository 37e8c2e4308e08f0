"""The agents page says which protocol version and binding the console speaks with each agent (issue 26, item 4),
for real agents on every implementation the tests have: a2a-sdk 1.3 (a 1.0 card, a 0.3 card, a card only at the
legacy path), @a2a-js/sdk 1.3 over HTTP+JSON, and fasta2a."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.test import AsyncClient

from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.tool.tool import A2ATool
from tests.support.agents import TestAgent
from tests.support.fasta2a_agents import Fasta2aAgent
from tests.support.js_agents import JsAgent
from tests.web.test_agent_cards import HX, row

pytestmark = pytest.mark.django_db(transaction=True)


async def test_each_agent_says_the_protocol_and_binding_it_is_spoken_to_in(
    owner: AsyncClient,
    tool: A2ATool,
    ws: Workspace,
    make_agent: Callable[..., TestAgent],
    make_js_agent: Callable[..., JsAgent],
    fasta2a_agent: Fasta2aAgent,
) -> None:
    speaks = {
        "current": (make_agent(), "A2A 1.0 over JSON-RPC"),
        "old": (make_agent(legacy=True), "A2A 0.3.0 over JSON-RPC"),
        "adk": (make_agent(legacy=True, card_path="/.well-known/agent.json"), "A2A 0.3.0 over JSON-RPC"),
        "rest": (make_js_agent(rest=True), "A2A 1.0 over HTTP+JSON"),
        "pydantic": (fasta2a_agent, "A2A 1.0 over JSON-RPC"),
    }
    ws.save_agents([{"name": name, "url": agent.url} for name, (agent, _) in speaks.items()], None)
    table = (await owner.post("/agents/refresh/", {}, headers=HX)).text
    for name, (_, said) in speaks.items():
        assert f"speaks {said}" in row(table, name), name
        page = (await owner.get(f"/agent/{name}/")).text
        assert f"<dt>Speaks</dt><dd>{said}" in page, name
