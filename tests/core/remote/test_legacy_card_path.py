"""A card served only at the legacy `/.well-known/agent.json` (ADK and early agents) is found when
`agent-card.json` answers 404 (issue 26, item 4), on real a2a-sdk 1.3 agents whose card route is moved: a 1.0 card,
and a 0.3 card as those agents serve it. A card URL the owner gave is fetched as it is."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from a2aconsole.core.files import AgentEntry
from a2aconsole.core.remote import OutgoingMessage, Remote, RemoteError, TaskSnapshot
from tests.support.agents import TestAgent

LEGACY = "/.well-known/agent.json"
CURRENT = "/.well-known/agent-card.json"


def _paths(agent: TestAgent) -> list[str]:
    return [path for method, path, _ in agent.requests if method == "GET"]


@pytest.mark.parametrize("legacy", [False, True], ids=["card-1.0", "card-0.3"])
async def test_a_card_only_at_the_legacy_path_is_found(
    remote: Remote, make_agent: Callable[..., TestAgent], legacy: bool
) -> None:
    agent = make_agent(card_path=LEGACY, legacy=legacy)
    entry = AgentEntry(name="old", url=agent.url)
    card = await remote.fetch_card(entry)
    assert card.name == "Loopback test agent" and card.protocol_versions == (("0.3.0",) if legacy else ("1.0",))
    assert _paths(agent) == [CURRENT, LEGACY]
    conn = await remote.connect(entry, card)
    reply = await conn.send(OutgoingMessage("hello old", (), "", "", {}))
    assert isinstance(reply, TaskSnapshot) and reply.id  # answered at once (returnImmediately)
    assert [r.text for r in agent.received] == ["hello old"]


async def test_no_card_at_either_path_says_both_were_tried(
    remote: Remote, make_agent: Callable[..., TestAgent]
) -> None:
    agent = make_agent(card_path="/cards/mine.json")
    with pytest.raises(RemoteError) as caught:
        await remote.fetch_card(AgentEntry(name="none", url=agent.url))
    said = str(caught.value)
    assert "HTTP 404" in said and f"Tried {agent.url.rstrip('/')}{CURRENT} and {agent.url.rstrip('/')}{LEGACY}" in said
    assert _paths(agent) == [CURRENT, LEGACY]


async def test_a_card_url_given_is_not_looked_for_elsewhere(
    remote: Remote, make_agent: Callable[..., TestAgent]
) -> None:
    agent = make_agent(card_path=LEGACY)
    given = agent.url.rstrip("/") + "/cards/mine.json"
    with pytest.raises(RemoteError, match="HTTP 404"):
        await remote.fetch_card(AgentEntry(name="given", url=given))
    assert _paths(agent) == ["/cards/mine.json"]
    card = await remote.fetch_card(AgentEntry(name="given", url=agent.url.rstrip("/") + LEGACY))
    assert card.name == "Loopback test agent"
