"""A host calling the API again counts as the target being reachable: its kept results go out."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator

import pytest
from asgiref.sync import sync_to_async
from django.test import AsyncClient

from a2aconsole.core import pending
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.web.delivery.webhook import new_secret
from a2aconsole.web.models import ApiToken, ChatTarget
from tests.support.chats import kept
from tests.support.hosts import LoopbackHost
from tests.support.runtime import fresh_runtime
from tests.support.watching import SignalClock, WaitableSink

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def hook() -> Iterator[LoopbackHost]:
    h = LoopbackHost().start()
    yield h
    h.stop()


@pytest.fixture
async def parts() -> AsyncIterator[tuple[SignalClock, WaitableSink]]:
    clock, sink = SignalClock(), WaitableSink()
    async with fresh_runtime(clock=clock, events=sink):
        yield clock, sink


async def test_api_call_flushes_kept_results(workspace: Workspace, hook: LoopbackHost, parts) -> None:
    clock, sink = parts
    target = await ChatTarget.objects.acreate(
        id="bot",
        name="Bot host",
        workspace=str(workspace.root),
        backend="webhook",
        backend_settings={"url": hook.url + "/results", "secret": new_secret()},
    )
    _, token = await sync_to_async(ApiToken.issue)(target)
    async with pending.transaction(workspace) as tx:
        tx.add(kept("w1", "bot", "first result"), kept("w2", "bot", "second result"))

    from a2aconsole.web.process.runtime import get_runtime

    hook.script = [(503, {}), (503, {})]  # the host is down when the process starts
    await get_runtime().start_registry([workspace])
    await sink.until(lambda: sink.kinds().count("undelivered") == 2)
    assert [r.watch_id for r in pending.read(workspace).records] == ["w1", "w2"]

    resp = await AsyncClient(enforce_csrf_checks=True).post(
        "/api/v1/targets/bot/tool",
        b'{"action": "agents"}',
        content_type="application/json",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert resp.status_code == 200
    await clock.until(lambda sleeps: 1.0 in sleeps)  # the flush waits a second, like a session start
    await clock.advance(1)
    await sink.until(lambda: sink.kinds().count("delivered") == 2)
    delivered = [json.loads(h.body)["text"] for h in hook.hits if h.status == 200]
    assert sorted(delivered) == ["first result", "second result"]
    assert pending.read(workspace).records == []
