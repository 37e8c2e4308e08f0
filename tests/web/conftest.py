"""Console fixtures: a workspace the settings point at, the console chat over it, the process runtime, the owner,
and a worker runtime following the console chat's watches."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async
from django.test import AsyncClient, override_settings

from a2aconsole.core.config import ClientSettings
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.tool.tool import A2ATool
from a2aconsole.web.broadcast import ChannelsBroadcast
from a2aconsole.web.models import ChatTarget
from a2aconsole.web.process.runtime import Runtime, build_runtime, close_runtime, install_runtime
from tests.support.agents import TestAgent
from tests.support.console import CONSOLE_SETTINGS, create_owner, owner_session
from tests.support.runtime import fresh_runtime
from tests.support.watching import WaitableSink


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    """A workspace that WORKSPACE_DIR names, so the console's own pages use it."""
    w = Workspace(tmp_path / "ws")
    w.root.mkdir(parents=True)
    with override_settings(WORKSPACE_DIR=w.root):
        yield w


@pytest.fixture
async def console_target(ws: Workspace) -> ChatTarget:
    """The `console` chat target over `ws` (needs a django_db mark)."""
    return await sync_to_async(ChatTarget.objects.create)(id="console", name="Console", workspace=str(ws.root))


@pytest.fixture
def client_settings() -> ClientSettings:
    """What `tool` is built with; a module overrides this fixture for other waits."""
    return CONSOLE_SETTINGS


@pytest.fixture
async def tool(console_target: ChatTarget, client_settings: ClientSettings) -> AsyncIterator[A2ATool]:
    """The process runtime (real tool, web delivery, event history) for the `console` chat over `ws`."""
    rt = install_runtime(build_runtime(client_settings=client_settings))
    yield rt.tool
    await close_runtime()


@pytest.fixture
def owner_cookie() -> str:
    """The owner logged in: its session cookie (needs a django_db mark)."""
    return owner_session()


@pytest.fixture
async def owner() -> AsyncClient:
    """A test client logged in as the owner (needs a django_db mark)."""
    c = AsyncClient()
    await c.aforce_login(await sync_to_async(create_owner)())
    return c


@pytest.fixture
async def watching(
    ws: Workspace, make_agent: Callable[..., TestAgent], client_settings: ClientSettings
) -> AsyncIterator[tuple[Runtime, WaitableSink, TestAgent]]:
    """The `console` chat (web inbox) over `ws`, its agent `bot` (no push), and a worker runtime following watches
    with `client_settings`; its events stored as the console stores them, and kept for the test to wait on."""
    await ChatTarget.objects.acreate(id="console", name="Console", workspace=str(ws.root))
    agent = make_agent(push=False)
    ws.save_agents([{"name": "bot", "url": agent.url}], None)
    events = WaitableSink(ChannelsBroadcast())
    async with fresh_runtime(client_settings=client_settings, events=events) as rt:
        await rt.start_registry([ws])
        yield rt, events, agent
