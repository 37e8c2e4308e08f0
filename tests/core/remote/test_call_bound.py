"""The bound of every remote call (`Connection._call`): the call timeout, on the remote's clock, ends a call in
the agent's timeout (timed and counted); a caller's own shorter bound around the call (`clock.timeout`) ends it
in TimeoutError, neither timed nor counted (the agent did not fail). Both on the fake clock: no test sleeps."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from a2a.types import AgentCard

from a2aconsole.core.files.agents import AgentEntry
from a2aconsole.core.metrics import REGISTRY
from a2aconsole.core.remote.client import Connection, Remote
from a2aconsole.core.remote.convert import card_summary
from a2aconsole.core.remote.errors import RemoteError
from tests.support.clock import FakeClock


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def _conn(http: httpx.AsyncClient, clock: FakeClock, call_timeout: float = 60.0) -> Connection:
    entry = AgentEntry(name="boundbot", url="http://127.0.0.1:9/")
    return Connection(Remote(http, call_timeout=call_timeout, clock=clock), entry, card_summary(AgentCard()))


def _counts() -> tuple[float, float]:
    return (
        sample("a2aconsole_remote_call_seconds_count", agent="boundbot", method="status"),
        sample("a2aconsole_remote_call_failures_total", agent="boundbot", method="status", kind="timeout"),
    )


async def _call_never_answered(conn: Connection) -> None:
    async with conn._call("status"):
        await asyncio.get_running_loop().create_future()


async def test_the_call_timeout_running_out_is_the_agent_s_timeout_timed_and_counted(http: httpx.AsyncClient) -> None:
    clock = FakeClock()
    timed, failed = _counts()
    call = asyncio.ensure_future(_call_never_answered(_conn(http, clock, call_timeout=5)))
    await clock.wait_for_sleepers(1)
    await clock.advance(5)
    with pytest.raises(RemoteError) as caught:
        await call
    assert caught.value.kind == "timeout" and "boundbot" in str(caught.value)
    assert _counts() == (timed + 1, failed + 1)


async def test_the_caller_s_own_bound_running_out_first_is_not_the_agent_s_failure(http: httpx.AsyncClient) -> None:
    clock = FakeClock()
    timed, failed = _counts()

    async def bounded() -> None:
        async with clock.timeout(1):
            await _call_never_answered(_conn(http, clock, call_timeout=5))

    call = asyncio.ensure_future(bounded())
    await clock.wait_for_sleepers(2)
    await clock.advance(1)
    with pytest.raises(TimeoutError):
        await call
    assert not isinstance(call.exception(), RemoteError)
    assert _counts() == (timed, failed)
    assert clock.sleeping == 0  # the call's own timer went with it
