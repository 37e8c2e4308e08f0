"""Scale-out: a worker holds a lease per workspace, so two worker processes never follow the same watch."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
from typing import Any

import pytest

from a2aconsole.core import pending
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.watches.lease import WorkerLeases, lease_path
from tests.support.watching import add_record, eventually, start_task
from tests.support.worker_env import ROOT, console_watch, inbox_texts, migrate, start_worker, worker_env

HOLDER = """
import asyncio, sys
from a2aconsole.core.watches.lease import WorkerLeases
from a2aconsole.core.files.workspace import Workspace
leases = WorkerLeases()
print("held" if asyncio.run(leases.acquire(Workspace(sys.argv[1]))) else "refused", flush=True)
sys.stdin.read()
asyncio.run(leases.release_all())
print("released", flush=True)
"""


def _holder(ws: Workspace) -> subprocess.Popen[str]:
    p = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(ws.root)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert p.stdout is not None
    assert p.stdout.readline().strip() == "held"
    return p


async def test_lease_excludes_other_processes_until_released_or_killed(tmp_path) -> None:
    ws = Workspace(tmp_path / "ws")
    mine = WorkerLeases()
    with _holder(ws) as holder:
        assert not await mine.acquire(ws) and len(mine) == 0  # held by another process: skipped, not waited for
        holder.communicate("", timeout=30)  # it releases at stop
        assert await mine.acquire(ws) and mine.holds(ws)
        again = WorkerLeases()
        assert await again.acquire(ws)  # one process: its runtimes share the lease
    await mine.release_all()
    await mine.release_all()  # idempotent
    await again.release_all()

    with _holder(ws) as crashed:
        crashed.send_signal(signal.SIGKILL)  # a crashed worker never strands its workspaces
        crashed.wait(timeout=10)
    other = WorkerLeases()
    assert await other.acquire(ws)
    assert lease_path(ws) == ws.root / ".volcanic" / "a2a" / ".worker.lock"
    await other.release_all()


async def test_lease_on_an_unusable_workspace_is_refused(tmp_path) -> None:
    (tmp_path / "file").write_text("not a folder")
    assert await WorkerLeases().acquire_all([Workspace(tmp_path / "file")]) == []


async def test_two_worker_processes_follow_a_watch_once(make_agent, workspace, remote, tmp_path) -> None:
    agent = make_agent(push=False)
    await console_watch(remote, workspace, agent, "hold two")

    data = tmp_path / "data"
    env = worker_env(data, workspace)
    migrate(env)
    logs = [tmp_path / "w1.log", tmp_path / "w2.log"]
    workers = []
    try:
        for log in logs:
            with log.open("w") as f:
                workers.append(start_worker(env, stderr=f))
        # both registries have started (and restored what their leases allow) before the task finishes
        await eventually(
            lambda: all("watch worker started" in log.read_text() for log in logs), timeout=60, what="both workers"
        )
        started = sorted(log.read_text().split("watch worker started: ")[1].split("\n")[0] for log in logs)
        assert started == ["runs 0 of 1 workspace(s)", "runs 1 of 1 workspace(s)"]
        await eventually(lambda: "SubscribeToTask" in agent.methods, timeout=30, what="a worker to subscribe")
        agent.release("two")
        await eventually(lambda: pending.read(workspace).records == [], timeout=30, what="delivery")
        assert agent.methods.count("SubscribeToTask") == 1
        texts = inbox_texts(data / "db.sqlite3")
        assert len(texts) == 1 and "released two" in texts[0]
    finally:
        for w in workers:
            w.send_signal(signal.SIGTERM)
        for w in workers:
            try:
                w.wait(timeout=15)
            except subprocess.TimeoutExpired:
                w.kill()
                w.wait(timeout=10)


@pytest.mark.django_db(transaction=True)
async def test_a_worker_skips_a_leased_workspace_until_it_gets_the_lease(make_agent, workspace) -> None:
    from channels.layers import get_channel_layer

    from a2aconsole.core.config import ClientSettings
    from a2aconsole.web.process.runtime import build_runtime, close_runtime, install_runtime
    from tests.support.watching import SignalClock

    clock = SignalClock()
    agent = make_agent(streaming=False, push=False)
    workspace.save_agents([{"name": "bot", "url": agent.url}], None)
    rt = install_runtime(build_runtime(client_settings=ClientSettings(), clock=clock))
    try:
        first = await add_record(workspace, await start_task(rt.remote, workspace, "bot", "hold l1"), "bot", clock)
        with _holder(workspace) as holder:
            registry = await rt.start_registry([workspace])
            assert first.watch_id not in registry and len(rt.leases) == 0  # another process runs it
            layer = get_channel_layer()
            await layer.flush()
            second = await add_record(workspace, await start_task(rt.remote, workspace, "bot", "hold l2"), "bot", clock)
            await rt.tool.watches.arm(workspace, second)  # the tool's new watch goes to the lease holder
            assert (await layer.receive("a2a-watches"))["watch_id"] == second.watch_id
            assert second.watch_id not in registry
            holder.communicate("", timeout=30)  # the holder stops
        await rt.rescan([workspace])  # the next rescan takes the workspace over
        assert rt.leases.holds(workspace) and first.watch_id in registry and second.watch_id in registry
    finally:
        await close_runtime()
    with _holder(workspace) as after:  # released at stop: another process gets it
        after.communicate("", timeout=30)


class _MemoryLeaseStore:
    """Leases that expire (so the runtime keeps a heartbeat and listens for wake-ups), held in memory; at close it
    notes which of the runtime's own tasks still run, and whether any call came after the close."""

    def __init__(self) -> None:
        self.holders: dict[str, str] = {}
        self.runtime_tasks: set[asyncio.Task[Any]] = set()
        self.running_at_close: list[asyncio.Task[Any]] | None = None

    def _used(self) -> None:
        assert self.running_at_close is None, "the lease store was used after it was closed"

    async def take(self, ws: Workspace, holder: str, ttl: float) -> bool:
        self._used()
        return self.holders.setdefault(str(ws.root), holder) == holder

    async def give_back(self, ws: Workspace, holder: str) -> None:
        self._used()
        if self.holders.get(str(ws.root)) == holder:
            del self.holders[str(ws.root)]

    async def holder(self, ws: Workspace) -> str | None:
        self._used()
        return self.holders.get(str(ws.root))

    async def note_wake(self, ws: Workspace, watch_id: str) -> None:
        self._used()

    async def take_wakes(self, ws: Workspace) -> list[str]:
        self._used()
        return []

    async def aclose(self) -> None:
        self.running_at_close = [t for t in self.runtime_tasks if not t.done()]


@pytest.mark.django_db(transaction=True)
async def test_a_stopping_worker_ends_its_own_tasks_before_it_closes_the_lease_store(workspace) -> None:
    """A rescan (or a heartbeat) that went on past the close of the Redis lease store opened a connection nobody
    closed: CI saw it as an unclosed socket to Redis in a later test."""
    from a2aconsole.core.config import ClientSettings
    from a2aconsole.core.watches.lease import HEARTBEAT
    from a2aconsole.web.process.runtime import RESCAN_SECONDS, build_runtime
    from tests.support.watching import SignalClock

    clock = SignalClock()
    store = _MemoryLeaseStore()
    rt = build_runtime(client_settings=ClientSettings(), clock=clock)
    rt.leases = WorkerLeases(store, clock=clock)
    store.runtime_tasks = rt._tasks
    try:
        await rt.start_registry([workspace])
        assert rt.leases.holds(workspace)
        await clock.until(lambda s: HEARTBEAT in s and RESCAN_SECONDS in s)  # both asleep, the listener waits
        assert len([t for t in rt._tasks if not t.done()]) == 4  # and the history's daily run
    finally:
        await rt.aclose()
    assert store.running_at_close == []
    assert store.holders == {}  # the lease was given back
