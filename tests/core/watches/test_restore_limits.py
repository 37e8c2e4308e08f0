"""A restore of many watches asks each agent, and all agents together, no more than the call limits allow at once,
holds no more streams open than the stream limits, and still re-arms every watch (issue 11, item 5)."""

from __future__ import annotations

import asyncio
import math
from collections import Counter

from a2aconsole.core import pending
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.events import MemorySink
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.remote.client import Remote
from a2aconsole.core.remote.limits import CallLimits, Slots
from a2aconsole.core.watches.delivery import StaticDelivery
from a2aconsole.core.watches.registry import WatchRegistry
from tests.support.agents import TestAgent
from tests.support.clock import FakeClock
from tests.support.watching import add_record, eventually, start_task

PER_AGENT, TOTAL = 4, 6
WATCHES = 12  # per agent


async def restored(
    remote: Remote, ws: Workspace, agents: dict[str, TestAgent], source: str, limits: CallLimits, **settings: str
) -> WatchRegistry:
    """WATCHES running tasks on each agent, each with a watch record in pending.json, and a registry (not started)."""
    ws.save_agents([{"name": name, "url": a.url} for name, a in agents.items()], None)
    clock = FakeClock()
    for name in agents:
        for i in range(WATCHES):
            task = await start_task(remote, ws, name, f"hold {name}")
            token = f"token-{name}-{i}" if source == "push" else None
            await add_record(ws, task, name, clock, source=source, push_token=token, extra={"state": "working"})
    registry = WatchRegistry(remote, ClientSettings(**settings), StaticDelivery({"chat1": ws}), clock, MemorySink())
    registry.limits = limits
    return registry


def calls(agent: TestAgent, method: str) -> int:
    return agent.methods.count(method)


async def test_a_restore_keeps_to_the_call_limits_per_agent_and_in_all_and_rearms_every_watch(
    make_agent, workspace, remote
) -> None:
    agents = {"a": make_agent(streaming=False), "b": make_agent(streaming=False)}
    registry = await restored(
        remote,
        workspace,
        agents,
        "push",
        CallLimits(calls_per_agent=PER_AGENT, calls_total=TOTAL, cpu_share=math.inf, busy_share=math.inf),
        push_base_url="http://127.0.0.1:9/console",
    )
    for a in agents.values():
        a.hold_calls = True  # every call waits at the agent: what the console sends at once piles up there
    try:
        await registry.start([workspace])
        queued = 2 * WATCHES - TOTAL
        await eventually(
            lambda: (
                sum(a.in_flight["calls"] for a in agents.values()) == TOTAL
                and registry.limits.waiting == registry.limits.waiting_first == queued  # restored: first calls
            ),
            what=f"{TOTAL} calls held at the agents and {queued} queued in the console",
        )
        # the rest wait in the console, not at the agents: no agent over its limit, both together at the total
        assert all(a.in_flight["calls"] <= PER_AGENT for a in agents.values())
        for a in agents.values():
            a.release("calls")
        await eventually(
            lambda: all(
                calls(a, "CreateTaskPushNotificationConfig") == WATCHES and calls(a, "GetTask") == WATCHES
                for a in agents.values()
            ),
            what="every push config created and every task checked once",
        )
        assert max(a.most_in_flight["calls"] for a in agents.values()) <= PER_AGENT
        assert sum(a.most_in_flight["calls"] for a in agents.values()) >= TOTAL  # the limits were reached
        assert Counter(w["source"] for w in registry.snapshot()) == {"push": 2 * WATCHES}
        assert registry.limits.waiting == 0
    finally:
        await registry.stop()


async def test_subscribe_watches_past_the_stream_limit_poll_and_every_watch_is_rearmed(
    make_agent, workspace, remote
) -> None:
    agent = make_agent(push=False)  # streaming only: restored watches subscribe
    limits = CallLimits(streams_per_agent=3, cpu_share=math.inf, busy_share=math.inf)  # (the test's CPU aside)
    registry = await restored(remote, workspace, {"bot": agent}, "subscribe", limits)
    try:
        await registry.start([workspace])
        await eventually(
            lambda: agent.in_flight["streams"] == 3 and calls(agent, "GetTask") == WATCHES - 3,
            what="3 streams open and the other watches checked once",
        )
        assert agent.most_in_flight["streams"] == 3
        assert calls(agent, "SubscribeToTask") == 3
        assert Counter(w["source"] for w in registry.snapshot()) == {"subscribe": 3, "poll": WATCHES - 3}
        # the file keeps `subscribe`: the next start tries to stream again
        assert {r.source for r in pending.read(workspace).records} == {"subscribe"}
        assert registry.limits.open_streams == 3
    finally:
        await registry.stop()
    assert registry.limits.open_streams == 0


def test_an_agents_slots_halve_while_the_process_is_busy_with_quick_calls_and_grow_back_while_not() -> None:
    slots, now = Slots(8), 0.0

    def calls(busy: bool, took: float, count: int) -> None:
        nonlocal now
        for _ in range(count):
            now += 0.2
            slots.adjust(busy, took, now)

    calls(True, 0.050, 5)  # busy, but the calls' time goes to waiting for an agent far away: all 8 slots
    assert slots.size == 8
    calls(True, 0.002, 20)  # busy with quick calls: their time is this process's work, more at once only queue it
    assert slots.size == 2  # halved down to 2, never fewer
    calls(False, 0.002, 10)
    assert slots.size == 8


async def test_a_watchs_first_call_goes_before_routine_calls_queued_earlier() -> None:
    slots = Slots(1)
    order: list[str] = []
    held = asyncio.Event()
    go = asyncio.Event()

    async def call(name: str, first: bool) -> None:
        async with slots.hold(first):
            order.append(name)
            if name == "holder":
                held.set()
                await go.wait()

    holder = asyncio.ensure_future(call("holder", False))
    await held.wait()
    routine = asyncio.ensure_future(call("poll", False))  # queued first
    await asyncio.sleep(0)  # (a yield, not a wait: lets it queue)
    restored = asyncio.ensure_future(call("restored", True))
    await asyncio.sleep(0)
    go.set()
    await asyncio.gather(holder, routine, restored)
    assert order == ["holder", "restored", "poll"]
    assert slots.held == 0
