"""API fixtures: the process runtime, an agent host of target `bot` (tests/support/api_host.py) and an `echo`
agent in its workspace. A module whose agent or host differs (a key, no network) overrides the fixture."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest

from a2aconsole.core.files.workspace import Workspace
from a2aconsole.web.process.runtime import Runtime
from tests.support.agents import TestAgent
from tests.support.api_host import Host, make_host
from tests.support.runtime import fresh_runtime
from tests.support.toolkit import entry, write_agents


@pytest.fixture
async def api_runtime() -> AsyncIterator[Runtime]:
    """The process runtime, fresh for this test's event loop."""
    async with fresh_runtime() as runtime:
        yield runtime


@pytest.fixture
async def host(workspace: Workspace, api_runtime: Runtime) -> Host:
    """The host of target `bot` over `workspace` (needs a django_db mark)."""
    return await make_host(workspace)


@pytest.fixture
def echo(workspace: Workspace, make_agent: Callable[..., TestAgent]) -> TestAgent:
    """A default agent, `echo` in the workspace's agents.json."""
    agent = make_agent()
    write_agents(workspace, entry("echo", agent))
    return agent
