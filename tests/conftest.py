"""Shared fixtures: real loopback A2A agents (tests/support/agents.py) and a temp workspace."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from a2aconsole.core.workspace import Workspace
from tests.support.agents import AgentOptions, TestAgent


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    ws = Workspace(tmp_path / "ws")
    ws.root.mkdir(parents=True, exist_ok=True)
    return ws


@pytest.fixture
def make_agent() -> Iterator[Callable[..., TestAgent]]:
    """Start agents with options (`make_agent(key="k", streaming=False)`); all are stopped afterwards."""
    started: list[TestAgent] = []

    def make(**options: Any) -> TestAgent:
        agent = TestAgent(AgentOptions(**options)).start()
        started.append(agent)
        return agent

    yield make
    for a in started:
        a.stop()


@pytest.fixture
def agent(make_agent: Callable[..., TestAgent]) -> TestAgent:
    """A default agent: streaming, push, no key."""
    return make_agent()
