"""An agent that refuses the console's push URL (an SSRF guard on loopback): each of its watch rows says so and how
it follows instead, and the dashboard says it once for the agent, not once per watch; the agent's words escaped."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import AsyncClient

from a2aconsole.core.config import ClientSettings
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.watches.push_refusals import PushRefusal
from a2aconsole.web.broadcast import ChannelsBroadcast
from a2aconsole.web.models import ChatTarget
from tests.support.runtime import fresh_runtime
from tests.support.watching import SignalClock, WaitableSink, add_record, start_task

SETTINGS = ClientSettings(wait_seconds=0.2, card_timeout_seconds=3, call_timeout=10, push_base_url="http://127.0.0.1:9")
SAID = "push refused by the agent: "


@pytest.fixture
def refusing(ws: Workspace, make_sdk_agent) -> Any:
    """An agent "bot" in agents.json whose SSRF guard refuses the console's loopback push URL; it polls."""
    agent = make_sdk_agent(streaming=False, safe_push_urls=True)
    ws.save_agents([{"name": "bot", "url": agent.url}], None)
    return agent


@pytest.mark.django_db(transaction=True)
async def test_refused_push_is_said_on_each_row_and_once_on_the_dashboard(
    ws: Workspace, console_target: ChatTarget, refusing: Any, remote: Any, owner: AsyncClient
) -> None:
    clock = SignalClock()
    async with fresh_runtime(client_settings=SETTINGS, events=WaitableSink(ChannelsBroadcast()), clock=clock) as rt:
        registry = await rt.start_registry([ws])
        for task in [await start_task(remote, ws, "bot", f"hold {gate}") for gate in ("r1", "r2")]:
            await registry.arm(ws, await add_record(ws, task, "bot", clock, target="console"))
        await clock.until(lambda s: s.count(15.0) == 2)  # both in their first poll nap
        hostile = PushRefusal(str(ws.root), "evil", "<b>x</b>" * 3, "subscribe", clock.now())
        registry.push_refusals.refused(hostile)  # another agent, in words of its own
        watches = (await owner.get("/watches/")).content.decode()
        dashboard = (await owner.get("/")).content.decode()
        refusing.release("r1")
        refusing.release("r2")

    rows = [
        watches[i : watches.index("</tr>", i)] for i in range(len(watches)) if watches.startswith('<tr id="watch-', i)
    ]
    assert len(rows) == 2
    assert all(SAID in row and "; following by polling" in row for row in rows)
    assert dashboard.count(SAID) == 2  # once for bot (two watches), once for evil
    assert "<strong>bot</strong>: " + SAID in dashboard and "Nothing needs you right now" not in dashboard
    assert "&lt;b&gt;x&lt;/b&gt;" in dashboard and "<b>x</b>" not in dashboard
    assert "following by stream" in dashboard
