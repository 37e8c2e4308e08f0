"""Core fixtures: a fake clock to wait on, and watch registries over a workspace (the A2A client: tests/conftest.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from a2aconsole.core.config import ClientSettings
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.remote.client import Remote
from a2aconsole.core.remote.http import new_http_client
from a2aconsole.core.watches.registry import WatchRegistry
from tests.support.watching import SignalClock, WaitableDelivery, WaitableSink

Registry = tuple[WatchRegistry, WaitableDelivery, WaitableSink]


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    """The process's shared client (`new_http_client`), for a tool made over it (`make_tool`)."""
    client = new_http_client()
    yield client
    await client.aclose()


@pytest.fixture
def clock() -> SignalClock:
    return SignalClock()


@pytest.fixture
async def registry_for(remote: Remote, clock: SignalClock) -> AsyncIterator[Callable[..., Registry]]:
    """`make(ws, available=True, **settings)`: a registry delivering to chat1 (over `ws`), its delivery and sink;
    every registry made is stopped at the end."""
    made: list[WatchRegistry] = []

    def make(ws: Workspace, *, available: bool = True, **settings: Any) -> Registry:
        delivery = WaitableDelivery({"chat1": ws}, available=available)
        sink = WaitableSink()
        delivery.sink = sink
        reg = WatchRegistry(remote, ClientSettings(**settings), delivery, clock, sink)
        made.append(reg)
        return reg, delivery, sink

    yield make
    for reg in made:
        await reg.stop()
