"""The shared client keeps its connections alive beside many open streams: httpcore closes an idle connection
whenever the pool holds more connections in all than its keep-alive limit, so with a lower limit every call
made beside the watches' open streams connected anew (issue 11, item 5: the pool's bookkeeping)."""

from __future__ import annotations

import contextlib

from a2aconsole.core.remote.client import Remote
from a2aconsole.core.remote.http import new_http_client
from a2aconsole.core.remote.limits import STREAMS_TOTAL
from tests.support.watching import start_task

STREAMS = 60  # more than the old keep-alive limit (50), fewer than the streams the watches may hold


async def test_calls_beside_many_open_streams_reuse_one_connection(make_agent, workspace) -> None:
    assert STREAMS <= STREAMS_TOTAL
    agent = make_agent(push=False)
    workspace.save_agents([{"name": "bot", "url": agent.url}], None)
    http = new_http_client()
    async with contextlib.AsyncExitStack() as stack:
        stack.push_async_callback(http.aclose)
        remote = Remote(http, call_timeout=10.0, card_timeout=5.0)
        task = await start_task(remote, workspace, "bot", "hold open")
        conn = await remote.connect(workspace.read_agents().get("bot"))
        for _ in range(STREAMS):
            stream = await stack.enter_async_context(contextlib.aclosing(conn.subscribe(task.id)))
            first = await anext(stream)
            assert first.id == task.id
        assert agent.in_flight["streams"] == STREAMS
        before = len(agent.call_ports)
        for _ in range(5):
            await conn.get_task(task.id)
        ports = agent.call_ports[before:]
        assert len(ports) == 5 and len(set(ports)) == 1, ports
