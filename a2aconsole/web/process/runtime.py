"""The process runtime: every long-lived part, built once (`build_runtime`) and found with `get_runtime()`.

One runtime per running event loop: the httpx client and the asyncio locks belong to the loop that made
them, so daphne's loop, a `runworker` loop and each test's loop get their own runtime (tests end theirs
with `close_runtime()`). The runtime that runs the watch worker holds the `WatchRegistry`; a web process
without it (scale-out) writes watch records to the files and sends the worker a wake-up message over the
channel layer, which is at-most-once: the worker acts on the files, and it watches them (`core.file_watch`,
inotify): a change another process makes (`manage.py a2a send`, a hand edit of `agents.json` or
`pending.json`) is followed within a fraction of a second, and a changed `agents.json` refreshes the open
pages. It also rescans every minute, for what a notification missed (file systems without them).

A worker runs only the workspaces whose lease it holds (`core.lease`): a second worker (or a second
embedded `serve`) skips a workspace another process runs and hands its writes to the channel. With file leases
(the embedded default) it tries the lease again at every rescan, so it takes over within a minute when the
holder stops. With Redis leases (`REDIS_URL`) a heartbeat renews the leases every few seconds, a standby tries
to take the others at each beat (a frozen or dead holder is replaced within about 20 s), and wake-ups go to the
holder's own channel, so a push never waits on a worker that would drop it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import weakref
from collections import Counter as Tally
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings

from a2aconsole.core import pending
from a2aconsole.core.chat import ChatTarget
from a2aconsole.core.clock import Clock, SystemClock
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.events import ALL_GROUP, EventSink
from a2aconsole.core.files import Workspace
from a2aconsole.core.metrics import REGISTRY
from a2aconsole.core.pending import WatchRecord
from a2aconsole.core.remote import Remote, new_http_client
from a2aconsole.core.tasks import cancel_and_wait
from a2aconsole.core.tool import A2ATool
from a2aconsole.core.watches import (
    HEARTBEAT,
    PendingFileWatches,
    RedisLeaseStore,
    ResultDelivery,
    WatchRegistry,
    WorkerLeases,
    WorkspaceFileWatch,
)
from a2aconsole.web import broadcast
from a2aconsole.web.broadcast import ChannelsBroadcast, notify
from a2aconsole.web.chats import enabled_workspaces
from a2aconsole.web.delivery.targets import TargetDelivery
from a2aconsole.web.metrics import WatchCollector
from a2aconsole.web.process import wakeups
from a2aconsole.web.push_check import PushBaseCheck
from a2aconsole.web.retention import Retention

log = logging.getLogger(__name__)

WORKER_CHANNEL = "a2a-watches"
RESCAN_SECONDS = 60.0
# embedded (default): the serving process runs the registry; external: `manage.py runworker a2a-watches` does.
WORKER_MODE_ENV = "A2ACONSOLE_WATCH_WORKER"


def worker_mode() -> str:
    """`embedded` or `external`, from settings (which validated the variable at start-up)."""
    mode = getattr(settings, "A2A_WATCH_WORKER", None) or os.environ.get(WORKER_MODE_ENV, "embedded")
    return "external" if str(mode).strip().lower() == "external" else "embedded"


async def wake_worker(message: dict[str, Any]) -> None:
    """Send the worker a wake-up (at most once; it only says "look at the files"). Never raises.

    A wake-up about a workspace goes to the channel of the worker holding its lease when the lease store names
    it (Redis), else to the shared channel, where any worker may take it (and hands it to the holder)."""
    layer = get_channel_layer()
    if layer is None or not settings.A2A_CLIENT.enabled:  # off: no worker runs to take it
        return
    try:
        channel = WORKER_CHANNEL
        if isinstance(message.get("workspace"), str) and message["workspace"]:
            leases = get_runtime().leases
            if leases.expires:
                ws = Workspace(message["workspace"])
                if message.get("type") == "watch.push" and isinstance(message.get("watch_id"), str):
                    await leases.note_wake(ws, message["watch_id"])  # the holder's rescan finds it if this is lost
                channel = await leases.holder_of(ws) or WORKER_CHANNEL
        await layer.send(channel, message)
    except Exception as e:
        log.warning("waking the watch worker (%s) failed: %s", message.get("type"), type(e).__name__)


class ChannelWatches:
    """The tool's WatchControl in a process without the registry: files first, then a wake-up to the worker."""

    def __init__(self) -> None:
        self.files = PendingFileWatches()

    async def arm(self, workspace: Workspace, record: WatchRecord) -> None:
        await wake_worker({"type": "watch.arm", "workspace": str(workspace.root), "watch_id": record.watch_id})

    async def stop_watching(
        self, workspace: Workspace, target: str, agent: str, task_id: str, reason: str = "stopped", *, by: str = ""
    ) -> WatchRecord | None:
        rec = await self.files.stop_watching(workspace, target, agent, task_id, reason, by=by)
        if rec is not None:
            await wake_worker({"type": "watch.stop", "workspace": str(workspace.root), "watch_id": rec.watch_id})
        return rec

    async def rearm(self, workspace: Workspace, record: WatchRecord) -> None:
        await self.files.rearm(workspace, record)
        await wake_worker({"type": "watch.arm", "workspace": str(workspace.root), "watch_id": record.watch_id})

    def holding(self, workspace: Workspace, target: str, agent: str, task_id: str) -> Any:
        """Nothing held here: the worker's watch may finish meanwhile (and deliver; at least once, never lost)."""
        return self.files.holding(workspace, target, agent, task_id)


class LeasedWatches:
    """The tool's WatchControl in a worker: the registry for workspaces it holds the lease of, else the channel."""

    def __init__(self, registry: WatchRegistry, leases: WorkerLeases) -> None:
        self.registry = registry
        self.leases = leases
        self.channel = ChannelWatches()

    async def _for(self, workspace: Workspace) -> WatchRegistry | ChannelWatches:
        return self.registry if await self.leases.acquire(workspace) else self.channel

    async def arm(self, workspace: Workspace, record: WatchRecord) -> None:
        await (await self._for(workspace)).arm(workspace, record)

    async def stop_watching(
        self, workspace: Workspace, target: str, agent: str, task_id: str, reason: str = "stopped", *, by: str = ""
    ) -> WatchRecord | None:
        control = await self._for(workspace)
        return await control.stop_watching(workspace, target, agent, task_id, reason, by=by)

    @contextlib.asynccontextmanager
    async def holding(self, workspace: Workspace, target: str, agent: str, task_id: str) -> AsyncIterator[None]:
        async with (await self._for(workspace)).holding(workspace, target, agent, task_id):
            yield

    async def rearm(self, workspace: Workspace, record: WatchRecord) -> None:
        await (await self._for(workspace)).rearm(workspace, record)

    async def adopt(self, workspace: Workspace, record: WatchRecord, follower: Any, runner: Any) -> bool:
        """A send's follower goes on as the watch when this worker runs the workspace (else the tool arms)."""
        return await self.leases.acquire(workspace) and await self.registry.adopt(workspace, record, follower, runner)


@dataclass
class Runtime:
    http: httpx.AsyncClient
    remote: Remote
    settings: ClientSettings
    delivery: ResultDelivery
    events: EventSink
    clock: Clock
    tool: A2ATool
    registry: WatchRegistry | None = None
    leases: WorkerLeases = field(default_factory=WorkerLeases)
    files: WorkspaceFileWatch | None = None  # the worker's watch of agents.json / pending.json (inotify)
    push_check: PushBaseCheck | None = None  # whether the push base leads back here (the dashboard warns)
    _tasks: set[asyncio.Task[Any]] = field(default_factory=set)
    _known: list[Workspace] = field(default_factory=list)  # the workspaces to run, as of the last rescan

    def request_flush(self, target: ChatTarget) -> None:
        """The target's session started (a tab opened its chat, its host called): deliver its kept results."""
        if self.registry is None:
            ws = str(target.workspace.root)
            self.spawn(wake_worker({"type": "target.flush", "target": target.id, "workspace": ws}))
        elif self.leases.holds(target.workspace):
            self.registry.request_flush(target)
        # else another worker holds that workspace's lease: its rescan delivers the kept results

    def spawn(self, coro: Any) -> asyncio.Task[Any]:
        """Run `coro` in a task the runtime keeps (ended with it): work a request starts and does not wait for."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def start_registry(self, workspaces: list[Workspace]) -> WatchRegistry:
        """Make this runtime the worker: restore the watches of the workspaces whose lease it gets, and rescan
        (retrying the other leases) every minute."""
        if self.registry is None:
            self.registry = WatchRegistry(
                self.remote, self.settings, self.delivery, self.clock, self.events, pool=self.tool.pool
            )
            self.tool.watches = LeasedWatches(self.registry, self.leases)
            self._known = list(workspaces)
            await self.registry.start(await self.leases.acquire_all(workspaces))
            self.files = WorkspaceFileWatch(self.files_changed)
            await self.files.watch(self._known)
            self.spawn(self._rescan_forever())
            # the history's daily prune (none for 0 days) and planner statistics, with the worker
            days = getattr(settings, "A2A_HISTORY_DAYS", 0)
            self.spawn(Retention(days, self.clock, self.watched_tasks).run_forever())
            if self.leases.expires:
                self.spawn(self._keep_leases_forever())
                self.spawn(wakeups.listen(self))
        return self.registry

    async def watched_tasks(self) -> set[tuple[str, str]]:
        """The (agent, task id) of every watch record in the known workspaces' `pending.json`: tasks the
        retention keeps, whichever worker follows them."""

        def read() -> set[tuple[str, str]]:
            return {(r.agent, r.task_id) for ws in self._known for r in pending.read(ws).records}

        return await asyncio.to_thread(read)

    async def _keep_leases_forever(self) -> None:
        """The heartbeat: renew the leases held, stop following the workspaces lost, take over the free ones."""
        while self.registry is not None and not self.registry.stopped:
            await self.clock.sleep(HEARTBEAT)
            try:
                await self.keep_leases()
            except Exception:
                log.exception("keeping the worker leases failed; trying again at the next beat")

    async def keep_leases(self) -> None:
        """One beat of the heartbeat."""
        if self.registry is None:
            return
        for ws in await self.leases.renew():
            n = await self.registry.release_workspace(ws)
            log.warning("watch worker: another worker took the lease of %s; stopped following %d watch(es)", ws.root, n)
        for ws in self._known:
            if not self.leases.holds(ws) and await self.leases.acquire(ws):
                log.info("watch worker: took the lease of %s; restoring its watches", ws.root)
                await self.registry.rescan(ws)

    async def _rescan_forever(self) -> None:
        """Records a missed wake-up announced (or the CLI wrote) are found here; so are new chat targets."""
        while self.registry is not None and not self.registry.stopped:
            await self.clock.sleep(RESCAN_SECONDS)
            try:
                self._known = await database_sync_to_async(enabled_workspaces)()
                await self.rescan(self._known)
                if self.files is not None:  # new chat targets' folders watched too (and a failed watch retried)
                    await self.files.watch(self._known)
            except Exception:
                log.exception("rescanning the watch files failed; trying again in a minute")

    async def files_changed(self, workspace: Workspace, names: frozenset[str]) -> None:
        """Another process (the CLI, a hand edit) changed a workspace's files: follow them now, not at the
        minute's rescan; a changed agents.json also refreshes the open pages (they re-read the file)."""
        await self.rescan([workspace])
        if "agents.json" in names:
            await notify([ALL_GROUP], {"kind": "agents.changed", "workspace": str(workspace.root)})

    async def rescan(self, workspaces: list[Workspace]) -> None:
        """Rescan the workspaces this worker holds (or now gets) the lease of; skip the others."""
        for ws in workspaces:
            if self.registry is None or self.registry.stopped:
                return
            if await self.leases.acquire(ws):
                await self.registry.rescan(ws)
                for watch_id in await self.leases.take_wakes(ws):  # pushes whose wake-up message was lost
                    self.registry.wake(watch_id)

    async def aclose(self) -> None:
        """Stop the registry (records stay), give the leases back and close the shared client.

        The runtime's own tasks (heartbeat, rescans, wake-ups) end before the lease store closes: a rescan that
        went on past the store's close opened a Redis connection nobody closed afterwards."""
        if self.files is not None:
            await self.files.stop()
        if self.push_check is not None:
            await self.push_check.aclose()
        if self.registry is not None:
            await self.registry.stop()
        await cancel_and_wait(*self._tasks)
        await self.leases.aclose()

        await broadcast.close()  # the events still queued are written
        await self.http.aclose()


def console_state_paths() -> list[Path]:
    """The console's own files the tool must never attach (besides each workspace's `.volcanic/`): the data
    folder (database, secret key, set-up token, their locks), and a SQLite database kept elsewhere."""
    paths = [Path(settings.DATA_DIR)]
    db = settings.DATABASES.get("default", {})
    name = str(db.get("NAME") or "")
    if "sqlite" in str(db.get("ENGINE", "")) and name and not name.startswith((":memory:", "file:")):
        paths += [Path(name + suffix) for suffix in ("", "-wal", "-shm", "-journal")]
    return paths


def build_runtime(
    *,
    client_settings: ClientSettings | None = None,
    clock: Clock | None = None,
    delivery: ResultDelivery | None = None,
    events: EventSink | None = None,
) -> Runtime:
    """Every part of the process, passed in explicitly (tests swap the clock, delivery or sink)."""

    cs = client_settings or settings.A2A_CLIENT
    clock = clock or SystemClock()
    http = new_http_client(cs.response_limit, cs.call_timeout)
    remote = Remote(http, call_timeout=cs.call_timeout, card_timeout=cs.card_timeout_seconds)
    delivery = delivery or TargetDelivery(http=http)
    events = events or ChannelsBroadcast()
    tool = A2ATool(remote, cs, ChannelWatches(), events, clock, private_paths=console_state_paths())
    redis_url = os.environ.get("REDIS_URL", "")
    store = RedisLeaseStore(redis_url) if redis_url else None  # several processes: leases that expire
    leases = WorkerLeases(store, clock=clock)
    check = PushBaseCheck(http, cs.push_base_url, clock)
    return Runtime(http, remote, cs, delivery, events, clock, tool, leases=leases, push_check=check)


_runtimes: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Runtime] = weakref.WeakKeyDictionary()


def get_runtime() -> Runtime:
    """The runtime of the running event loop (built on first use). Needs a running loop."""
    loop = asyncio.get_running_loop()
    rt = _runtimes.get(loop)
    if rt is None:
        rt = _runtimes[loop] = build_runtime()
    return rt


def loop_runtime() -> Runtime | None:
    """The running loop's runtime if it has one: for a page that only reads what it knows (none built for that)."""
    return _runtimes.get(asyncio.get_running_loop())


def live_runtimes() -> list[Runtime]:
    """Every loop's runtime in this process (for metrics and readiness, which may look from another thread)."""
    for _ in range(5):
        try:
            return list(_runtimes.values())
        except RuntimeError:  # a loop's runtime came or went meanwhile
            continue
    return []


def _watch_tally() -> Tally[tuple[str, str]]:
    """The watches every live runtime's registry follows, by source and state (`WatchCollector`)."""
    tally: Tally[tuple[str, str]] = Tally()
    for rt in live_runtimes():
        registry = rt.registry
        if registry is not None and not registry.stopped:
            tally.update(registry.tally())
    return tally


REGISTRY.register(WatchCollector(_watch_tally))


def install_runtime(rt: Runtime) -> Runtime:
    """Use `rt` as the running loop's runtime (tests build one with a fake clock or delivery)."""
    _runtimes[asyncio.get_running_loop()] = rt
    return rt


async def close_runtime() -> None:
    """End the running loop's runtime, if any: registry stopped, client closed. The next get builds anew."""
    rt = _runtimes.pop(asyncio.get_running_loop(), None)
    if rt is not None:
        await rt.aclose()


async def start_worker(workspaces: list[Workspace] | None = None) -> Runtime | None:
    """Run the watch registry in this loop's runtime (idempotent); None when the A2A client is off."""
    cs: ClientSettings = settings.A2A_CLIENT
    if not cs.enabled:
        log.info("the A2A client is off (A2AClient__Enabled=false): no watches are restored or armed")
        return None
    rt = get_runtime()
    if rt.push_check is not None:
        rt.push_check.start()  # at the console's start: the dashboard finds the answer
    if rt.registry is None:
        if workspaces is None:
            workspaces = await database_sync_to_async(enabled_workspaces)()
        await rt.start_registry(workspaces)
        log.info("watch worker started: runs %d of %d workspace(s)", len(rt.leases), len(workspaces))
    return rt


async def stop_worker() -> None:
    """Stop this loop's registry and close its runtime (idempotent); records stay in pending.json."""
    await close_runtime()
