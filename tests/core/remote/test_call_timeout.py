"""The call timeout bounds every phase of a call, a subscription's silence included, whether the shared http
client was made for it (`new_http_client(call_timeout=...)`, the console's and the CLI's: the SDK is then
given no timeout of its own on each call) or not (a client made for another timeout: each call carries the
call timeout). Real agents on both SDKs; the silence is real time, a fraction of a second."""

from __future__ import annotations

import asyncio
import contextlib
import time

import pytest

from a2aconsole.core.remote.client import Remote
from a2aconsole.core.remote.errors import RemoteError
from a2aconsole.core.remote.http import new_http_client
from tests.support.watching import start_task

CALL_TIMEOUT = 0.5


@pytest.mark.parametrize("client_made_for_it", [True, False], ids=["client-timeout", "call-timeout"])
async def test_a_silent_subscription_fails_after_the_call_timeout(
    make_sdk_agent, workspace, client_made_for_it: bool
) -> None:
    agent = make_sdk_agent(push=False)
    workspace.save_agents([{"name": "bot", "url": agent.url}], None)
    http = new_http_client(call_timeout=CALL_TIMEOUT) if client_made_for_it else new_http_client()
    async with contextlib.AsyncExitStack() as stack:
        stack.push_async_callback(http.aclose)
        stack.callback(agent.release, "quiet")
        remote = Remote(http, call_timeout=CALL_TIMEOUT, card_timeout=5.0)
        task = await start_task(remote, workspace, "bot", "hold quiet")  # works until released: no event comes
        conn = await remote.connect(workspace.read_agents().get("bot"))
        stream = await stack.enter_async_context(contextlib.aclosing(conn.subscribe(task.id)))
        assert (await anext(stream)).id == task.id
        started = time.monotonic()
        with pytest.raises(RemoteError) as e:
            async with asyncio.timeout(10):  # the test's own guard: not the bound under test
                await anext(stream)
        silent = time.monotonic() - started
    assert e.value.kind == "timeout", e.value
    assert CALL_TIMEOUT * 0.9 <= silent < 5, silent
