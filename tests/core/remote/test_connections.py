"""One connection pool for the tool and the watches: one card fetch serves both, renewed after the card TTL."""

from __future__ import annotations

import asyncio

from a2aconsole.core.chat import ChatTarget
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.remote.client import Remote
from a2aconsole.core.remote.http import new_http_client
from a2aconsole.core.remote.pool import CARD_TTL, ConnectionPool
from a2aconsole.core.tool.tool import A2ATool
from a2aconsole.core.watches.registry import WatchRegistry
from tests.support.agents import TestAgent
from tests.support.toolkit import SETTINGS, TARGET, entry, write_agents
from tests.support.watching import SignalClock, WaitableDelivery, eventually

CARD_PATH = "/.well-known/agent-card.json"


async def test_tool_and_watches_share_one_pool_with_the_card_ttl(workspace: Workspace, agent: TestAgent) -> None:
    write_agents(workspace, entry("bot", agent))
    http = new_http_client()
    remote = Remote(http, call_timeout=10.0, card_timeout=5.0)
    clock = SignalClock()
    pool = ConnectionPool(remote, clock)
    delivery = WaitableDelivery({TARGET: workspace})
    registry = WatchRegistry(remote, ClientSettings(), delivery, clock, pool=pool)
    tool = A2ATool(remote, SETTINGS, registry, clock=clock, pool=pool)
    chat = ChatTarget(TARGET, workspace)

    def cards() -> int:
        return sum(1 for _, path, _ in agent.requests if path == CARD_PATH)

    try:
        send = asyncio.ensure_future(tool.run("send", {"agent": "bot", "message": "hold p1"}, chat))
        await clock.wait_for_sleepers(1)
        await clock.advance(SETTINGS.wait_seconds)
        result = await asyncio.wait_for(send, 10)
        assert result["state"] == "working"
        # the watch subscribes with the send's connection: no second card fetch
        await eventually(lambda: len(registry) == 1 and "SubscribeToTask" in agent.methods)
        assert cards() == 1
        status = await tool.run("status", {"agent": "bot", "taskId": result["taskId"]}, chat)
        assert status["state"] == "working" and cards() == 1

        await clock.advance(CARD_TTL + 1)  # an old card is fetched again, for the tool and the watches alike
        status = await tool.run("status", {"agent": "bot", "taskId": result["taskId"]}, chat)
        assert status["state"] == "working" and cards() == 2
        agent.release("p1")
        assert [t for t, _ in await delivery.wait_for(1)] == [TARGET]
        assert cards() == 2
    finally:
        agent.release("p1")
        await registry.stop()
        await http.aclose()
