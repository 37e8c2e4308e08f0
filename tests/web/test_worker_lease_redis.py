"""Scale-out leases in Redis: they expire unless renewed, wake-ups reach the holder, a lost lease moves the watches.

The in-process tests run two worker runtimes in one loop, each with its own Redis lease holder and fake clock;
the process test freezes a real `runworker` with SIGSTOP.
"""

from __future__ import annotations

import signal
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from a2aconsole.core import pending
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.watches.lease import RedisLeaseStore, WorkerLeases
from a2aconsole.web.process.runtime import Runtime, build_runtime
from a2aconsole.web.process.wakeups import dispatch
from tests.support.watching import SignalClock, WaitableDelivery, WaitableSink, add_record, eventually, start_task
from tests.support.worker_env import console_watch, inbox_texts, migrate, start_worker, worker_env

REDIS_URL = "redis://127.0.0.1:6379/8"  # keys are per workspace path (a tmp folder): no other test shares them


@pytest.fixture
async def redis() -> AsyncIterator[aioredis.Redis]:
    r = aioredis.from_url(REDIS_URL)
    yield r
    await r.aclose()


def _worker(ws: Workspace, clock: SignalClock) -> tuple[Runtime, WaitableDelivery]:
    delivery = WaitableDelivery({"chat1": ws})
    delivery.sink = WaitableSink()  # wait_for also waits for each delivery to be settled in pending.json
    rt = build_runtime(client_settings=ClientSettings(), clock=clock, delivery=delivery, events=delivery.sink)
    rt.leases = WorkerLeases(RedisLeaseStore(REDIS_URL), clock=clock)
    return rt, delivery


async def test_redis_lease_is_exclusive_renewed_and_lost_when_taken(tmp_path: Path, redis) -> None:
    ws = Workspace(tmp_path / "ws")
    clock = SignalClock()
    a = WorkerLeases(RedisLeaseStore(REDIS_URL), clock=clock)
    b = WorkerLeases(RedisLeaseStore(REDIS_URL), clock=SignalClock())
    try:
        assert await a.acquire(ws) and a.holds(ws)
        assert not await b.acquire(ws) and not b.holds(ws)
        assert await b.holder_of(ws) == a.holder
        assert 0 < await redis.pttl(RedisLeaseStore.key(ws)) <= 15_000  # it expires unless renewed
        assert await a.renew() == []

        await clock.advance(15)  # a holder that has not renewed for the TTL no longer counts on its lease
        assert not a.holds(ws)
        await redis.delete(RedisLeaseStore.key(ws))  # ...and Redis has let it expire
        assert await b.acquire(ws)
        assert await a.renew() == [ws] and len(a) == 0  # the frozen one learns it at its next beat
        await a.release_all()  # giving back a lease it lost leaves the new holder's alone
        assert await b.holder_of(ws) == b.holder
    finally:
        await a.aclose()
        await b.aclose()
    assert await redis.exists(RedisLeaseStore.key(ws)) == 0  # b gave it back at close


@pytest.mark.django_db(transaction=True)
async def test_wakeup_at_a_standby_reaches_the_holder_and_a_taken_lease_moves_the_watches(
    make_agent, ws: Workspace, redis
) -> None:
    agent = make_agent(streaming=False, push=False)  # polled: only a check or a wake-up finds the result
    ws.save_agents([{"name": "bot", "url": agent.url}], None)
    clock_a, clock_b = SignalClock(), SignalClock()
    a, delivered_a = _worker(ws, clock_a)
    b, delivered_b = _worker(ws, clock_b)
    try:
        first = await add_record(ws, await start_task(a.remote, ws, "bot", "hold w1"), "bot", clock_a)
        await a.start_registry([ws])
        await b.start_registry([ws])
        assert a.leases.holds(ws) and not b.leases.holds(ws)
        assert a.registry is not None and b.registry is not None
        assert first.watch_id in a.registry and first.watch_id not in b.registry

        # A push's wake-up reaches the standby (the shared channel gives it to any worker): it goes to the holder.
        agent.release("w1")
        await eventually(lambda: len(agent.finished) == 1, what="the agent to finish")
        await dispatch({"type": "watch.push", "workspace": str(ws.root), "watch_id": first.watch_id}, b)
        [(_, text)] = await delivered_a.wait_for(1)  # no clock advanced: only the wake-up can have done it
        assert "released w1" in text and delivered_b.delivered == []

        # The holder freezes past its lease: the standby's beat takes the workspace, the holder's beat lets go.
        second = await add_record(ws, await start_task(a.remote, ws, "bot", "hold w2"), "bot", clock_a)
        await a.rescan([ws])
        assert second.watch_id in a.registry
        await redis.delete(RedisLeaseStore.key(ws))  # what the TTL does to a lease nobody renews
        await b.keep_leases()
        assert b.leases.holds(ws) and second.watch_id in b.registry
        await a.keep_leases()
        assert not a.leases.holds(ws) and second.watch_id not in a.registry
        agent.release("w2")
        await eventually(lambda: len(agent.finished) == 2, what="the agent to finish")
        await dispatch({"type": "watch.push", "workspace": str(ws.root), "watch_id": second.watch_id}, a)
        [(_, text)] = await delivered_b.wait_for(1)
        assert "released w2" in text and len(delivered_a.delivered) == 1
        assert pending.read(ws).records == []
    finally:
        await a.aclose()
        await b.aclose()


@pytest.mark.django_db(transaction=True)
async def test_a_push_whose_wakeup_message_was_lost_is_acted_on_at_the_holders_rescan(
    make_agent, ws: Workspace, redis
) -> None:
    """Channel messages are at-most-once: the push's wake-up is also noted beside the lease, and the holder's rescan
    (every minute) wakes the watch, instead of the watch waiting for its 10-minute safety check."""
    agent = make_agent(streaming=False, push=False)
    ws.save_agents([{"name": "bot", "url": agent.url}], None)
    clock = SignalClock()
    a, delivered = _worker(ws, clock)
    try:
        rec = await add_record(ws, await start_task(a.remote, ws, "bot", "hold lost"), "bot", clock)
        await a.start_registry([ws])
        assert a.registry is not None and rec.watch_id in a.registry
        await clock.until(lambda s: 15.0 in s)  # restored: checked once (still working), then the first poll nap
        agent.release("lost")
        await eventually(lambda: len(agent.finished) == 1, what="the agent to finish")
        await a.leases.note_wake(ws, rec.watch_id)  # what the web process does before sending the (lost) message
        assert delivered.delivered == []
        await a.rescan([ws])
        [(_, text)] = await delivered.wait_for(1)  # no clock advanced: only the noted wake-up can have done it
        assert "released lost" in text
        assert await a.leases.take_wakes(ws) == []  # taken once
    finally:
        await a.aclose()


@pytest.mark.timeout(150)
async def test_a_frozen_worker_is_replaced_and_delivers_nothing_twice(make_agent, workspace, remote, tmp_path) -> None:
    """SIGSTOP the lease holder: the standby takes over within 30 s; woken again, the old one lets go."""
    agent = make_agent(push=False)
    await console_watch(remote, workspace, agent, "hold frozen")
    data = tmp_path / "data"
    env = {**worker_env(data, workspace), "REDIS_URL": REDIS_URL}
    migrate(env)
    logs = [tmp_path / "w1.log", tmp_path / "w2.log"]
    workers: list[subprocess.Popen[bytes]] = []
    try:
        for log in logs:
            with log.open("w") as f:
                workers.append(start_worker(env, stderr=f))
                # one at a time: the first takes the lease before the second starts
                await eventually(lambda log=log: "watch worker started" in log.read_text(), timeout=60, what="start")
        assert "runs 1 of 1" in logs[0].read_text() and "runs 0 of 1" in logs[1].read_text()
        await eventually(lambda: agent.methods.count("SubscribeToTask") == 1, timeout=30, what="the holder")

        workers[0].send_signal(signal.SIGSTOP)
        await eventually(lambda: "took the lease" in logs[1].read_text(), timeout=30, what="the standby to take over")
        await eventually(lambda: agent.methods.count("SubscribeToTask") == 2, timeout=10, what="the standby to follow")
        workers[0].send_signal(signal.SIGCONT)
        await eventually(lambda: "another worker took the lease" in logs[0].read_text(), timeout=15, what="let go")

        agent.release("frozen")
        await eventually(lambda: pending.read(workspace).records == [], timeout=30, what="delivery")
        texts = inbox_texts(data / "db.sqlite3")
        assert len(texts) == 1 and "released frozen" in texts[0]
    finally:
        for w in workers:
            w.send_signal(signal.SIGCONT)
            w.send_signal(signal.SIGTERM)
        for w in workers:
            try:
                w.wait(timeout=15)
            except subprocess.TimeoutExpired:
                w.kill()
                w.wait(timeout=10)
