"""The dashboard warns when the console's own push base does not lead back to it: one bounded GET of
`<PushBaseUrl>/healthz` from the console, asked at start and kept, not asked again by every page."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest
from django.test import AsyncClient

from a2aconsole.core.config import ClientSettings
from a2aconsole.web.models import ChatTarget
from tests.support.runtime import fresh_runtime
from tests.support.watching import LoopbackServer, SignalClock, eventually

pytestmark = pytest.mark.django_db(transaction=True)
WARNING = "The push base does not reach this console"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Console(LoopbackServer):
    """Answers `/healthz` as the console does (once `gate` is set, when given), and counts the asks."""

    def __init__(self, gate: asyncio.Event | None = None) -> None:
        super().__init__(self._app)
        self.asked = 0
        self.gate = gate

    async def _app(self, scope: Any, receive: Any, send: Any) -> None:
        self.asked += scope["path"] == "/healthz"
        if self.gate is not None:
            await self.gate.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok\n"})


async def test_a_closed_push_base_is_warned_of(console_target: ChatTarget, owner: AsyncClient) -> None:
    base = f"http://127.0.0.1:{closed_port()}"
    async with fresh_runtime(client_settings=ClientSettings(push_base_url=base), clock=SignalClock()) as rt:
        assert rt.push_check is not None
        rt.push_check.start()
        html = (await owner.get("/")).content.decode()
    assert WARNING in html and f"{base}/healthz is unreachable from the console (ConnectError)" in html


async def test_a_reaching_push_base_is_asked_once(console_target: ChatTarget, owner: AsyncClient) -> None:
    console = Console()
    async with console, fresh_runtime(client_settings=ClientSettings(push_base_url=console.url), clock=SignalClock()):
        first = (await owner.get("/")).content.decode()
        again = (await owner.get("/")).content.decode()
    assert WARNING not in first and WARNING not in again
    assert console.asked == 1  # the answer is kept


async def test_a_silent_push_base_is_bounded_on_the_clock_and_asked_again_later(
    console_target: ChatTarget, owner: AsyncClient
) -> None:
    gate, clock = asyncio.Event(), SignalClock()
    console = Console(gate)
    async with console, fresh_runtime(client_settings=ClientSettings(push_base_url=console.url), clock=clock) as rt:
        assert rt.push_check is not None
        rt.push_check.start()
        await clock.until(lambda s: 5.0 in s)
        await eventually(lambda: console.asked == 1, what="the ask to reach the silent base")
        await clock.advance(5)
        silent = (await owner.get("/")).content.decode()
        gate.set()
        await clock.advance(600)  # the answer is old now: the next page asks again, and the console answers
        answered = (await owner.get("/")).content.decode()
    assert f"{console.url}/healthz did not answer within 5 s" in silent
    assert WARNING not in answered and console.asked == 2
