"""The agents page says which protocol version and binding the console speaks with each agent (issue 26, item 4),
for real agents on every implementation the tests have: a2a-sdk 1.3 (a 1.0 card, a 0.3 card, a card only at the
legacy path), @a2a-js/sdk 1.3 over HTTP+JSON, and fasta2a; and for a card listing several bindings, which
interface is used and why the others are not."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from django.test import AsyncClient
from starlette.responses import JSONResponse

from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.tool.tool import A2ATool
from tests.core.remote.test_client_misbehaving import Misbehaving
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


async def test_a_card_with_several_bindings_says_which_one_is_used_and_why(
    owner: AsyncClient, tool: A2ATool, ws: Workspace
) -> None:
    server = Misbehaving().start()
    try:
        interfaces = [
            {"url": server.url + "/grpc", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
            {"url": server.url + "/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "0.3.0"},
            {"url": server.url + "/rest1", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
            {"url": server.url + "/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": "http://127.0.0.1:9/far", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        ]
        card = {"name": "multi", "description": "d", "version": "1", "supportedInterfaces": interfaces}
        server.routes["/.well-known/agent-card.json"] = lambda r: JSONResponse(card)
        ws.save_agents([{"name": "multi", "url": server.url}], None)
        table = (await owner.post("/agents/refresh/", {}, headers=HX)).text
        assert "speaks A2A 1.0 over HTTP+JSON" in row(table, "multi")
        page = (await owner.get("/agent/multi/")).text
    finally:
        server.stop()
    said = dict(re.findall(r'<li><span class="mono">([^<]+)</span> [^·]+ · (.*?)</li>', page))
    assert said == {
        f"{server.url}/grpc": "<strong>not used</strong> (the console does not speak GRPC)",
        f"{server.url}/rest": (
            "<strong>not used</strong> (of its HTTP+JSON interfaces, the console calls the A2A 1.0 one)"
        ),
        f"{server.url}/rest1": "used (the card&#x27;s first in a binding the console speaks)",
        f"{server.url}/": "<strong>not used</strong> (the card lists HTTP+JSON first, which the console speaks)",
        "http://127.0.0.1:9/far": "<strong>not used</strong> (another origin)",
    }
