"""Shared fixtures: real loopback A2A agents on two SDKs and fasta2a, a temp workspace and the test's own A2A client.

`make_agent`/`agent` give Python `a2a-sdk` agents (tests/support/agents.py). `make_sdk_agent`/`sdk_agent`
are parametrized over both SDKs, with the same interface, for the wire tests that must hold on both:
"python", "js" (npm `@a2a-js/sdk` agents served by one node process per session, tests/support/js_agents.py)
and "js-rest" (the same agents with an HTTP+JSON card, so the REST binding is on the wire too). Every implementation
(those two SDKs, `a2a-sdk` 0.3 from its own venv, fasta2a) is listed once in tests/support/implementations.py, for
the matrix (tests/core/tool/test_matrix.py). `make_js03_agent` gives agents on `@a2a-js/sdk` 0.3 (protocol 0.3),
served as the 1.3 ones are.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any, Protocol, TypeVar

import pytest
from xdist.scheduler import LoadGroupScheduling

from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.remote.client import Remote
from tests.support.agents import AgentOptions, TestAgent
from tests.support.fasta2a_agents import Fasta2aAgent
from tests.support.js_agents import JS03, JsAgent, JsAgentHost
from tests.support.py03_agents import Py03Agent, Py03AgentHost
from tests.support.worker_env import open_remote

SDKS = ["python", "js", "js-rest"]  # test ids: test_x[python], test_x[js], test_x[js-rest]

# Tests that share the machine's Redis databases (fixed numbers, flushed by some) and create PostgreSQL databases:
# `make test` runs the suite on two xdist workers, and these all on one of them, one after another.
SHARED_SERVICES = {
    "tests/web/test_parallel_start.py",
    "tests/web/test_redis_idle.py",
    "tests/web/test_task_fts.py",
    "tests/web/test_worker_lease.py",
    "tests/web/test_worker_lease_redis.py",
    "tests/web/test_worker_process.py",
}


# Modules whose tests share module-scoped fixtures that cost seconds to start (a Chromium, a console server, agents):
# each runs on one worker, so they start once, not once on each worker.
WHOLE_MODULES = ("tests/live/",)


class SharedServicesScheduling(LoadGroupScheduling):
    """xdist's `loadgroup`, with SHARED_SERVICES as one group and each module of WHOLE_MODULES as one. Not the
    `xdist_group` mark: xdist 3.8 puts the group into a test's id by writing `item._nodeid`, which pytest 9 no longer
    reads, so marked tests were spread over both workers (two of them, on one Redis database, then saw each other's
    messages). The groups with the most tests go first (xdist's loadscope reorder), the single tests fill in after."""

    def _split_scope(self, nodeid: str) -> str:
        module = nodeid.split("::", 1)[0]
        if module in SHARED_SERVICES:
            return "shared-services"
        return module if module.startswith(WHOLE_MODULES) else nodeid


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> SharedServicesScheduling:
    return SharedServicesScheduling(config, log)


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    ws = Workspace(tmp_path / "ws")
    ws.root.mkdir(parents=True, exist_ok=True)
    return ws


@pytest.fixture
async def remote() -> AsyncIterator[Remote]:
    """The test's own A2A client (to start tasks a watch or worker then follows), closed afterwards."""
    async with open_remote() as r:
        yield r


class _Stoppable(Protocol):
    def stop(self) -> None: ...


A = TypeVar("A", bound=_Stoppable)


def _stopped_after(start: Callable[..., A]) -> Iterator[Callable[..., A]]:
    """A fixture's factory: `start(**options)` makes an agent; every agent made is stopped when the test ends."""
    made: list[A] = []

    def make(**options: Any) -> A:
        agent = start(**options)
        made.append(agent)
        return agent

    yield make
    for agent in made:
        agent.stop()


@pytest.fixture
def make_agent() -> Iterator[Callable[..., TestAgent]]:
    """Start agents with options (`make_agent(key="k", streaming=False)`); all are stopped afterwards."""
    yield from _stopped_after(lambda **options: TestAgent(AgentOptions(**options)).start())


@pytest.fixture
def agent(make_agent: Callable[..., TestAgent]) -> TestAgent:
    """A default agent: streaming, push, no key."""
    return make_agent()


@pytest.fixture
def fasta2a_agent() -> Iterator[Fasta2aAgent]:
    """An agent on `fasta2a` (pydantic's A2A server, its stock storage and broker, a plain worker), stopped after."""
    agent = Fasta2aAgent().start()
    yield agent
    agent.stop()


@pytest.fixture(scope="session")
def js_host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JsAgentHost]:
    """The node process serving `@a2a-js/sdk` agents, once per session (its log in the session's tmp dir)."""
    host = JsAgentHost(tmp_path_factory.mktemp("js-agent") / "agent.log")
    yield host
    host.stop()


@pytest.fixture
def make_js_agent(js_host: JsAgentHost) -> Iterator[Callable[..., JsAgent]]:
    """Make JS agents with the Python agent's options; all are dropped afterwards."""
    yield from _stopped_after(js_host.make)


@pytest.fixture(scope="session")
def js03_host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JsAgentHost]:
    """The node process serving `@a2a-js/sdk` 0.3 agents (protocol 0.3), once per session."""
    host = JsAgentHost(tmp_path_factory.mktemp("js03-agent") / "agent.log", sdk=JS03)
    yield host
    host.stop()


@pytest.fixture
def make_js03_agent(js03_host: JsAgentHost) -> Iterator[Callable[..., JsAgent]]:
    """Make `@a2a-js/sdk` 0.3 agents with the Python agent's options (`rest=True`: an HTTP+JSON card); all are
    dropped afterwards."""
    yield from _stopped_after(js03_host.make)


@pytest.fixture(scope="session")
def py03_host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Py03AgentHost]:
    """The process serving `a2a-sdk` 0.3 agents (in its own venv, tests/py03), once per session."""
    host = Py03AgentHost(tmp_path_factory.mktemp("py03-agent") / "agent.log")
    yield host
    host.stop()


@pytest.fixture
def make_py03_agent(py03_host: Py03AgentHost) -> Iterator[Callable[..., Py03Agent]]:
    """Make `a2a-sdk` 0.3 agents with the Python agent's options (`rest=True`: HTTP+JSON); dropped afterwards."""
    yield from _stopped_after(py03_host.make)


@pytest.fixture
def make_fasta2a_agent() -> Iterator[Callable[..., Fasta2aAgent]]:
    """Make fasta2a agents (`make_agent`'s shape; it takes no options but `push=False`: it has none); stopped
    afterwards."""

    def start(**options: Any) -> Fasta2aAgent:
        if set(options) - {"push", "streaming"} or options.get("streaming") is False:
            raise ValueError(f"the fasta2a test agent takes no options ({', '.join(options)})")
        return Fasta2aAgent().start()

    yield from _stopped_after(start)


@pytest.fixture(params=SDKS)
def make_sdk_agent(request: pytest.FixtureRequest) -> Callable[..., TestAgent | JsAgent]:
    """`make_agent` on each SDK in turn: the test runs once per entry of SDKS."""
    if request.param == "python":
        return request.getfixturevalue("make_agent")
    make = request.getfixturevalue("make_js_agent")
    if request.param == "js-rest":
        return lambda **options: make(rest=True, **options)
    return make


@pytest.fixture
def sdk_agent(make_sdk_agent: Callable[..., TestAgent | JsAgent]) -> TestAgent | JsAgent:
    """A default agent (streaming, push, no key) on each SDK in turn."""
    return make_sdk_agent()
