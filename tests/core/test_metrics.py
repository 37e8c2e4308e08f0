"""The core's own metric families: remote calls timed and failures counted by kind; the lease gauge per workspace."""

from __future__ import annotations

import asyncio

import pytest
from prometheus_client import generate_latest

from a2aconsole.core.clock import SystemClock
from a2aconsole.core.files.agents import AgentEntry
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.metrics import REGISTRY
from a2aconsole.core.remote.client import Remote
from a2aconsole.core.remote.errors import RemoteError
from a2aconsole.core.remote.http import new_http_client
from a2aconsole.core.watches.lease import WorkerLeases
from tests.support.daphne_process import closed_port
from tests.support.worker_env import open_remote


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


async def test_a_call_to_an_agent_that_is_down_is_timed_and_counted_as_network() -> None:
    entry = AgentEntry(name="downbot", url=f"http://127.0.0.1:{closed_port()}", key="k-never-a-label-123")
    timed = sample("a2aconsole_remote_call_seconds_count", agent="downbot", method="card fetch")
    failed = sample("a2aconsole_remote_call_failures_total", agent="downbot", method="card fetch", kind="network")
    http = new_http_client()
    try:
        with pytest.raises(RemoteError):
            await Remote(http, call_timeout=5, card_timeout=5).fetch_card(entry)
    finally:
        await http.aclose()
    assert sample("a2aconsole_remote_call_seconds_count", agent="downbot", method="card fetch") == timed + 1
    assert (
        sample("a2aconsole_remote_call_failures_total", agent="downbot", method="card fetch", kind="network")
        == failed + 1
    )
    assert "k-never-a-label-123" not in generate_latest(REGISTRY).decode()


async def test_calls_are_timed_by_agent_and_method(agent) -> None:
    entry = AgentEntry(name="upbot", url=agent.url)
    before = sample("a2aconsole_remote_call_seconds_count", agent="upbot", method="status")
    async with open_remote() as remote:
        conn = await remote.connect(entry)
        with pytest.raises(RemoteError):
            await conn.get_task("no-such-task")
    assert sample("a2aconsole_remote_call_seconds_count", agent="upbot", method="status") == before + 1
    assert sample("a2aconsole_remote_call_failures_total", agent="upbot", method="status", kind="not_found") >= 1


async def test_the_lease_gauge_follows_acquire_and_release(workspace: Workspace) -> None:
    label = str(workspace.root)
    leases = WorkerLeases()
    assert await leases.acquire(workspace)
    assert sample("a2aconsole_worker_lease_held", workspace=label) == 1
    await leases.release_all()
    assert sample("a2aconsole_worker_lease_held", workspace=label) == 0


async def test_a_call_its_caller_stops_waiting_for_is_cut_and_not_counted_as_the_agent_s_failure(make_agent) -> None:
    """A send's first GetTask is bounded by the send's wait (`clock.timeout` around the call): when the wait runs
    out first the call ends with TimeoutError, neither timed nor counted (the agent did not fail); when the call
    timeout comes first it is the agent's timeout, as any call's."""
    agent = make_agent(streaming=False, push=False)
    agent.hold_methods = {"GetTask"}  # every GetTask waits for the test
    entry = AgentEntry(name="slowbot", url=agent.url)
    timed = sample("a2aconsole_remote_call_seconds_count", agent="slowbot", method="status")
    http = new_http_client()
    loop = asyncio.get_running_loop()
    try:
        conn = await Remote(http, call_timeout=1.0, card_timeout=5).connect(entry)
        start = loop.time()
        with pytest.raises(TimeoutError):
            async with SystemClock().timeout(0.2):
                await conn.get_task("t1")
        assert 0.2 <= loop.time() - start < 1.0
        assert sample("a2aconsole_remote_call_seconds_count", agent="slowbot", method="status") == timed
        with pytest.raises(RemoteError) as caught:
            async with SystemClock().timeout(30):  # the call's 1 s comes first
                await conn.get_task("t1")
        assert caught.value.kind == "timeout"
    finally:
        agent.release("calls")
        await http.aclose()
    assert sample("a2aconsole_remote_call_seconds_count", agent="slowbot", method="status") == timed + 1
    assert sample("a2aconsole_remote_call_failures_total", agent="slowbot", method="status", kind="timeout") == 1


def test_timed_calls_wait_for_a_read_of_the_registry_but_never_pile_up() -> None:
    """A call only notes its time; the histogram takes the notes in when it is read, or once FOLD_AT wait (a
    process nobody scrapes keeps no more than that)."""
    from a2aconsole.core import metrics

    before = sample("a2aconsole_remote_call_seconds_count", agent="foldbot", method="status")
    for _ in range(3):
        with metrics.remote_call("foldbot", "status"):
            pass
    assert len(metrics._timed) >= 3  # noted, not observed yet
    assert sample("a2aconsole_remote_call_seconds_count", agent="foldbot", method="status") == before + 3
    assert len(metrics._timed) == 0  # the read folded them in
    for _ in range(metrics.FOLD_AT + 5):
        with metrics.remote_call("foldbot", "status"):
            pass
    assert len(metrics._timed) < metrics.FOLD_AT
    assert sample("a2aconsole_remote_call_seconds_count", agent="foldbot", method="status") == before + 3 + (
        metrics.FOLD_AT + 5
    )
