"""The watch registry: follows remote tasks that outlive `send` until they settle, then delivers the result.

One registry per worker process, on an injected clock. `pending.json` is the truth: the registry's map
only says which records this process is following now. How a watch follows its task (push, subscribe,
poll) is `following.Follower`, one per watch; this module arms, restores, stops, wakes and finishes watches.

Finishing is claim / announce / deliver / settle: under the workspace lock the watch leaves the map and its
text is stored as `undelivered` in `pending.json`, with the closing events the history needs (`end_events`:
the result or question, then `watch.ended`); the events are emitted, then the text is delivered outside any
lock; the record goes once delivered. A crash anywhere leaves either the watch or its kept text and events in
the file: whoever finds a kept record emits its events again before delivering it, and their stable keys
(`Event.key`) let the history keep each once, so history and delivery agree after any crash.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter, deque
from collections.abc import AsyncIterator, Collection, Coroutine, Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from a2aconsole.core import pending
from a2aconsole.core.chat import ChatTarget
from a2aconsole.core.clock import Clock
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.events import (
    DELIVERED,
    ERROR,
    QUESTION,
    RESULT,
    UNDELIVERED,
    WATCH_ARMED,
    WATCH_ENDED,
    Event,
    EventSink,
    NullSink,
    watch_event_key,
)
from a2aconsole.core.files import Workspace, origin
from a2aconsole.core.pending import PendingBatcher, PendingTx, WatchRecord, clear_sending, is_sending, sender_alive
from a2aconsole.core.remote import CallLimits, Connection, ConnectionPool, Remote, RemoteError, TaskSnapshot, push_event
from a2aconsole.core.results import has_files, is_interrupted, outcome_event, result_text, task_outcome
from a2aconsole.core.scrubber import Scrubber, Scrubbers
from a2aconsole.core.watches.control import take_watches
from a2aconsole.core.watches.delivery import ResultDelivery
from a2aconsole.core.watches.follower import LOST, Follower, WatchEnd, WatchGone
from a2aconsole.core.watches.heard import HEARD_AT, LAST_ERROR, reason
from a2aconsole.core.watches.push import (
    PUSH_REMOVAL_TIMEOUT,
    push_json,
    push_task_id,
    remove_push_config,
    token_matches,
)
from a2aconsole.core.watches.push_refusals import PushRefusal, PushRefusals, refusal_reason
from a2aconsole.core.watches.sweep import SWEEP_FROM, Sweep

log = logging.getLogger(__name__)

DELIVERY_RETRY = (30.0, 60.0, 120.0, 300.0)
FLUSH_DELAY = 1.0
AWAY = "away"  # a watch.ended's data: its task settled while no console followed it (`Follower.away`)

# Restored watches start following in batches, each once no more than RESTORE_BACKLOG first calls wait for a
# slot: the loop stays free for pages and signals, and a push's check waits behind a few hundred calls, not 10,000.
RESTORE_BATCH = 100
RESTORE_BACKLOG = 100

__all__ = ["DELIVERY_RETRY", "FLUSH_DELAY", "WatchRegistry"]


class WatchRegistry:
    """Follows tasks until they settle and hands their results to the delivery (a watch_control.WatchControl)."""

    def __init__(
        self,
        remote: Remote,
        settings: ClientSettings,
        delivery: ResultDelivery,
        clock: Clock,
        events: EventSink | None = None,
        pool: ConnectionPool | None = None,
    ) -> None:
        """`pool`: the process's connections, shared with the tool (one card fetch serves both)."""
        self.remote = remote
        self.settings = settings
        self.delivery = delivery
        self.clock = clock
        self.events: EventSink = events or NullSink()
        self.pool = pool if pool is not None else ConnectionPool(remote, clock)
        self._batch = PendingBatcher()
        self.scrubbers = Scrubbers()
        self.push_refusals = PushRefusals()  # the agents that refused a push config: said once per agent
        # Thousands of watches fall due together (a restart, a shared backoff step): a few calls at a time per
        # agent and in all keep the shared client's pool small and warm (httpcore's pool work grows with the
        # square of its queued requests and connections).
        self.limits = CallLimits()
        self._restoring: deque[Follower] = deque()  # restored watches in the map whose loop has not started
        # the restored watches' first checks, listed per agent (`sweep.py`) from this many watches of one agent
        self.sweep_from = SWEEP_FROM
        self._sweeps: dict[tuple[Path, str], Sweep] = {}
        self._starter: asyncio.Task[None] | None = None
        self._watches: dict[str, Follower] = {}
        self._by_task: dict[tuple[Any, str, str, str], str] = {}  # (workspace, target, agent, task) -> watch id
        self._workspaces: dict[Any, Workspace] = {}
        self._background: set[asyncio.Task[Any]] = set()
        self._retries: dict[str, asyncio.Task[None]] = {}
        self._delivering: set[str] = set()
        self._announced: set[str] = set()  # kept records whose closing events this process has emitted
        self._away: set[Any] = set()  # roots of workspaces whose lease another worker took from this one
        self._held: dict[tuple[Any, str, str, str], asyncio.Event] = {}  # watches a cancel in flight holds back
        self._stopped = False

    # lifecycle

    async def start(self, workspaces: Iterable[Workspace]) -> None:
        """Restore: re-arm every watch of every workspace, then flush the kept results (in the background)."""
        if self._stopped:
            return
        kept: list[tuple[Workspace, WatchRecord]] = []
        for ws in workspaces:
            ws = self._intern(ws)
            pf = pending.read(ws)
            if pf.parse_error:
                log.error("watches not restored: %s", pf.parse_error)
                await self._emit(Event(ERROR, str(ws.root), "", "", self.clock.now(), data={"message": pf.parse_error}))
                continue
            self._plan_sweeps(ws, [r for r in pf.records if r.undelivered is None])
            for i, rec in enumerate(pf.records):
                if rec.undelivered is not None:
                    kept.append((ws, rec))
                else:
                    # no `watch.armed` event: the watch was announced when first armed, not at every start
                    await self._arm(ws, rec, announce=False, restored=True)
                if i % RESTORE_BATCH == RESTORE_BATCH - 1:
                    await asyncio.sleep(0)  # thousands of records: let pages and signals in between
        if kept:
            self._spawn(self._deliver_all(kept))

    async def stop(self) -> None:
        """Stop every loop; idempotent. Records stay in pending.json for the next start."""
        self._stopped = True
        tasks = [w.runner for w in self._watches.values() if w.runner is not None]
        tasks += list(self._background) + list(self._retries.values())
        self._watches.clear()
        self._by_task.clear()
        self._restoring.clear()
        sweeps, self._sweeps = list(self._sweeps.values()), {}
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        for sweep in sweeps:
            await sweep.stop()

    @property
    def stopped(self) -> bool:
        return self._stopped

    def _intern(self, ws: Workspace) -> Workspace:
        return self._workspaces.setdefault(ws.root, ws)

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any] | None:
        if self._stopped:
            coro.close()
            return None
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    # WatchControl

    async def arm(self, workspace: Workspace, record: WatchRecord) -> None:
        """Follow a record the caller has already written to pending.json."""
        await self._arm(self._intern(workspace), record)

    async def adopt(
        self, workspace: Workspace, record: WatchRecord, follower: Follower, runner: asyncio.Future[TaskSnapshot]
    ) -> bool:
        """Take over a send's follower whose wait ran out (its record, already a plain watch in the file): the
        same follower goes on as this watch, its task running on. False when this watch cannot be taken (the
        registry stopped, or the chat already watches the task): the caller arms the record instead."""
        ws = self._intern(workspace)
        key = (ws.root, record.target, record.agent, record.task_id)
        if self._stopped or record.watch_id in self._watches or key in self._by_task:
            return False
        follower.take_over(self, ws, self._deadline(record))
        self._watches[record.watch_id] = follower
        self._by_task[key] = record.watch_id
        await self._emit(
            self._event(WATCH_ARMED, ws, record, data={"source": record.source, "watchId": record.watch_id})
        )
        follower.runner = asyncio.ensure_future(self._run(follower, runner))
        return True

    async def rearm(self, workspace: Workspace, record: WatchRecord) -> None:
        """Put a stopped watch back (same id, token and start): write it to the file, then follow it."""
        ws = self._intern(workspace)
        async with pending.transaction(ws) as tx:
            if tx.find(record.watch_id) is None:
                tx.add(record)
        await self._arm(ws, record)

    async def stop_watching(
        self, workspace: Workspace, target: str, agent: str, task_id: str, reason: str = "stopped", *, by: str = ""
    ) -> WatchRecord | None:
        """End the watch of (target, agent, task): it leaves the map and the file; its outcome is not delivered.
        What goes is `take_watches`'s rule, shared with the file-only control; the first record taken, or None.
        `reason`: how it ended (the owner stopped it, the task was canceled or found settled by the tool); `by`: who
        stopped it (its `watch.ended` event says so)."""
        ws = self._intern(workspace)
        async with pending.transaction(ws) as tx:
            taken = take_watches(tx, target, agent, task_id)
            stopped = [self._drop(r.watch_id) for r in taken]
        stopped.append(self._drop(self._by_task.get((ws.root, target, agent, task_id), "")))
        for w in stopped:
            if w is not None and w.runner is not None:
                w.runner.cancel()
        for rec in taken:
            # The push config stays here: a cancel that fails re-arms this very watch (same id and token);
            # the tool removes it once the watch has ended for good (cancel done, task settled).
            data = {"reason": reason, "watchId": rec.watch_id, **({"by": by} if by else {})}
            await self._emit(self._event(WATCH_ENDED, ws, rec, data=data))
        return taken[0] if taken else None

    @contextlib.asynccontextmanager
    async def holding(self, workspace: Workspace, target: str, agent: str, task_id: str) -> AsyncIterator[None]:
        """While inside (a cancel in flight), the watch of (target, agent, task) that finds its task settled waits
        before finishing: the cancel's answer decides whether it ends here (canceled) or goes on to deliver."""
        key = (self._intern(workspace).root, target, agent, task_id)
        gate = self._held.get(key)
        owner = gate is None
        if gate is None:
            gate = self._held[key] = asyncio.Event()
        try:
            yield
        finally:
            if owner:
                del self._held[key]
                gate.set()

    # push

    async def on_push(self, watch_id: str, token: str | None, body: bytes) -> str:
        """A push arrived: "ok", "not_found" (unknown watch or bad token, nothing happens) or "bad_request" (not
        JSON, or not about this watch's task).

        Its own news (state, status message, artifact) is told at once, and "ok" returned once those events are
        stored (the sink's `emit` returns then): an answered push is in the history, and one the process died
        before answering is found again by the restored watch's first GetTask. A push that says the task settled
        (or that the console cannot read) wakes the watch to confirm with GetTask; the pushes that arrive while that
        check runs make one more check after it, not one each (`Follower.wake` is a flag)."""
        w = self._watches.get(watch_id)
        if w is None or not token_matches(w.record.push_token, token):
            return "not_found"
        try:
            data = push_json(body)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return "bad_request"
        if push_task_id(data) != w.record.task_id:
            return "bad_request"
        ev = push_event(data)
        if ev is None or await w.pushed(ev):
            self.wake(watch_id)
        return "ok"

    def accepts(self, watch_id: str, token: str | None) -> bool:
        """Whether a push to this watch with this token gets past the token check (the server asks before the
        push's body arrives, so a stranger's body is never taken in)."""
        w = self._watches.get(watch_id)
        return w is not None and token_matches(w.record.push_token, token)

    def wake(self, watch_id: str) -> bool:
        """Make a watch check its task now (a push, or a console asking)."""
        w = self._watches.get(watch_id)
        if w is None:
            return False
        w.wake()
        return True

    # worker wake-ups (scale-out: the files are the truth, messages only wake us)

    async def rescan(self, workspace: Workspace) -> None:
        """Bring the map in line with the workspace's pending.json: arm new records, drop removed ones, and
        deliver kept results nobody is delivering."""
        if self._stopped:
            return
        ws = self._intern(workspace)
        self._away.discard(ws.root)
        pf = pending.read(ws)
        if pf.parse_error:
            return
        ids = {r.watch_id for r in pf.records}
        for w in [w for w in self._watches.values() if w.ws == ws and w.record.watch_id not in ids]:
            self._drop(w.record.watch_id)
            if w.runner is not None:
                w.runner.cancel()
        kept = []
        self._plan_sweeps(ws, [r for r in pf.records if r.undelivered is None and r.watch_id not in self._watches])
        for i, rec in enumerate(pf.records):
            if rec.undelivered is not None:
                if rec.watch_id not in self._delivering and rec.watch_id not in self._retries:
                    kept.append((ws, rec))
            elif rec.watch_id not in self._watches:
                await self._arm(ws, rec, restored=True)  # a lease taken over may bring thousands: batched
            if i % RESTORE_BATCH == RESTORE_BATCH - 1:
                await asyncio.sleep(0)
        if kept:
            self._spawn(self._deliver_all(kept))

    async def release_workspace(self, workspace: Workspace) -> int:
        """Another worker now runs this workspace (it took the lease): stop following its watches and retrying
        its deliveries. The records stay in pending.json for that worker. Returns how many watches stopped."""
        ws = self._intern(workspace)
        self._away.add(ws.root)
        stopped = [w for w in self._watches.values() if w.ws == ws]
        for w in stopped:
            self._drop(w.record.watch_id)
            if w.runner is not None:
                w.runner.cancel()
        return len(stopped)

    # flush

    async def flush(self, target: ChatTarget) -> int:
        """The target's session started: a second later, deliver its kept results. Returns how many went out."""
        await self.clock.sleep(FLUSH_DELAY)
        if self._stopped:
            return 0
        ws = self._intern(target.workspace)
        pf = pending.read(ws)
        done = 0
        for rec in pf.records:
            if rec.undelivered is not None and rec.target == target.id and await self._deliver(ws, rec):
                done += 1
        return done

    def request_flush(self, target: ChatTarget) -> None:
        """`flush` in the background (callers are session starts, which must not wait for deliveries)."""
        self._spawn(self.flush(target))

    # the console

    def snapshot(self, tasks: Collection[tuple[str, str]] | None = None) -> list[dict[str, Any]]:
        """The watches this process follows now, for the console's watch table (`tasks`: only those on these
        (agent, task id)). What the agent made (its task and context ids, its error texts) is scrubbed; the rest
        is the console's own."""
        now = self.clock.now()
        rows = []
        scrubs: dict[Path, Scrubber] = {}  # one look at a workspace's files per call, not one per watch
        for w in self._watches.values():
            if tasks is not None and (w.record.agent, w.record.task_id) not in tasks:
                continue
            scrub = scrubs.get(w.ws.root) or scrubs.setdefault(w.ws.root, self.scrubbers.for_workspace(w.ws))
            r = w.record
            age = None
            with contextlib.suppress(ValueError):
                age = (now - datetime.fromisoformat(r.started_at)).total_seconds()
            rows.append(
                {
                    "watchId": r.watch_id,
                    "workspace": str(w.ws.root),
                    "target": r.target,
                    "agent": r.agent,
                    "taskId": scrub.text(r.task_id),
                    "contextId": scrub.text(r.context_id),
                    "source": w.source,
                    "state": w.state,
                    "ageSeconds": age,
                    "lastError": scrub.text(w.error),
                    "checkedAt": w.checked_at.isoformat() if w.checked_at else None,
                    "heardAt": w.heard_at.isoformat() if w.heard_at else None,
                    "quietAfter": w.quiet_after,
                    "pushRefused": self._refused_text(w),
                }
            )
        return rows

    def tally(self) -> Counter[tuple[str, str]]:
        """How many watches this process follows, by source and last known state (metrics read it at scrape
        time, maybe from another thread: `list()` copies the table in one step under the GIL)."""
        return Counter((w.source, w.state or "unknown") for w in list(self._watches.values()))

    def __len__(self) -> int:
        return len(self._watches)

    def __contains__(self, watch_id: object) -> bool:
        return watch_id in self._watches

    # arming

    async def _arm(self, ws: Workspace, record: WatchRecord, *, announce: bool = True, restored: bool = False) -> None:
        if self._stopped or record.watch_id in self._watches:
            return
        if record.undelivered is not None:
            self._spawn(self._deliver(ws, record))
            return
        if is_sending(record) and not await self._adopt(ws, record):
            return
        key = (ws.root, record.target, record.agent, record.task_id)
        if key in self._by_task:
            # A chat watches a task at most once: the newer record goes.
            await self._batch.apply(ws, lambda tx: tx.remove(record.watch_id))
            return
        w = Follower(record, ws, self._deadline(record), self, restored=restored)
        self._watches[record.watch_id] = w
        self._by_task[key] = record.watch_id
        if announce:
            await self._emit(
                self._event(WATCH_ARMED, ws, record, data={"source": record.source, "watchId": record.watch_id})
            )
        if self._stopped:
            return
        if restored:
            self._restoring.append(w)
            if self._starter is None or self._starter.done():
                self._starter = self._spawn(self._start_restored())
        else:
            w.runner = asyncio.ensure_future(self._run(w))

    async def _start_restored(self) -> None:
        """Start the loops of restored watches, a batch at a time, each batch once the calls queued before it
        have mostly gone out. Each agent's connection is made first, so a batch goes straight to its calls."""
        unreachable: set[tuple[Path, str]] = set()  # tried once in this run: its watches find out themselves
        while self._restoring and not self._stopped:
            await self.limits.room(RESTORE_BACKLOG)
            batch: list[Follower] = []
            while self._restoring and len(batch) < RESTORE_BATCH:
                w = self._restoring.popleft()
                if self._watches.get(w.record.watch_id) is w and w.runner is None:
                    batch.append(w)
            await self._connect({(w.ws, w.record.agent) for w in batch}, unreachable)
            for w in batch:
                if self._watches.get(w.record.watch_id) is w and w.runner is None and not self._stopped:
                    w.runner = asyncio.ensure_future(self._run(w))
            await asyncio.sleep(0)

    def _plan_sweeps(self, ws: Workspace, records: list[WatchRecord]) -> None:
        """Before restoring these records: a sweep for each agent with `sweep_from` of them or more, whose first
        checks its task list answers (`sweep.py`)."""
        agents = self.pool.agents(ws)
        for name, count in Counter(r.agent for r in records).items():
            entry = agents.get(name)
            key = (ws.root, name)
            if key in self._sweeps:
                self._sweeps[key].expect(count)
                continue
            if count < self.sweep_from or entry is None:
                continue

            async def connect(ws: Workspace = ws, name: str = name) -> Connection:
                entry = self.pool.agents(ws).get(name)
                if entry is None:
                    raise RemoteError("config", f'agent "{name}" left agents.json')
                return await self.pool.get(ws, entry)

            self._sweeps[key] = Sweep(origin(entry.url), connect, self.limits, self.clock, count)

    async def listed(self, follower: Follower) -> TaskSnapshot | None:
        """A restored watch's first check from its agent's sweep, when this restore made one (else None: GetTask)."""
        key = (follower.ws.root, follower.record.agent)
        sweep = self._sweeps.get(key)
        if sweep is None:
            return None
        try:
            return await sweep.listed(follower.record.task_id)
        finally:
            if sweep.expected == 0 and self._sweeps.get(key) is sweep:
                del self._sweeps[key]

    async def _connect(self, agents: set[tuple[Workspace, str]], unreachable: set[tuple[Path, str]]) -> None:
        """Make the connections of these agents (once each, together); a failure is left to the watches."""

        async def one(ws: Workspace, name: str) -> None:
            entry = self.pool.agents(ws).get(name)
            if entry is None or self.pool.cached(ws, name) is not None or (ws.root, name) in unreachable:
                return
            try:
                async with self.limits.call(origin(entry.url), first=True):
                    await self.pool.get(ws, entry)
            except Exception:
                unreachable.add((ws.root, name))

        await asyncio.gather(*(one(ws, name) for ws, name in agents))

    async def _adopt(self, ws: Workspace, record: WatchRecord) -> bool:
        """A record a send wrote before its wait (`sending.py`): left to that send while it may still wait
        (False; a later rescan looks again), else adopted: written as a plain watch, then followed."""
        if sender_alive(record, self.clock.now()):
            return False
        rid = record.watch_id

        def adopt(tx: PendingTx) -> bool:
            rec = tx.find(rid)
            if rec is None or not is_sending(rec):
                return False
            tx.edit(rid)
            clear_sending(rec, None)
            return True

        if not await self._batch.apply(ws, adopt):
            return False
        clear_sending(record, None)
        return True

    def _deadline(self, record: WatchRecord) -> float:
        left = self.settings.watch_timeout
        with contextlib.suppress(ValueError, TypeError):
            started = datetime.fromisoformat(record.started_at)
            left = self.settings.watch_timeout - (self.clock.now() - started).total_seconds()
        return self.clock.monotonic() + left

    # the loop of one watch

    async def _run(self, w: Follower, running: asyncio.Future[TaskSnapshot] | None = None) -> None:
        """Follow, then finish; `running`: the follower's run begun by a send (taken over by `adopt`)."""
        try:
            try:
                task = await (running if running is not None else w.follow())
            except WatchEnd as end:
                # "lost" is the task's last word too (the task page, the Tasks page); other ends say nothing of it
                await self._finish(w, end.text, end.reason, state=LOST if end.reason == LOST else "")
            else:
                r = w.record
                gate = self._held.get((w.ws.root, r.target, r.agent, r.task_id))
                if gate is not None:  # a cancel in flight: its answer first (a stop meanwhile cancels this wait)
                    await gate.wait()
                await self._finish_task(w, task)
        except WatchGone:
            self._forget(w)
        except asyncio.CancelledError:
            raise
        except Exception:
            # A bug must not lose the watch: it stays in the file and the next rescan or start re-arms it.
            log.exception("watch %s of task %s stopped unexpectedly", w.record.watch_id, w.record.task_id)
            self._forget(w)

    def _forget(self, w: Follower) -> None:
        if self._watches.get(w.record.watch_id) is w:
            self._drop(w.record.watch_id)

    def _drop(self, watch_id: str) -> Follower | None:
        """Take a watch out of the map (and its task index); the caller cancels or finishes it."""
        w = self._watches.pop(watch_id, None)
        if w is not None:
            r = w.record
            key = (w.ws.root, r.target, r.agent, r.task_id)
            if self._by_task.get(key) == watch_id:
                del self._by_task[key]
        return w

    # finishing: claim / deliver / settle

    async def _finish_task(self, w: Follower, task: TaskSnapshot) -> None:
        r = w.record
        state = task.state
        if has_files(task):  # saving files blocks: off the loop
            outcome = await asyncio.to_thread(task_outcome, task, r.agent, w.ws, self.settings.max_file_bytes)
        else:
            outcome = task_outcome(task, r.agent, w.ws, self.settings.max_file_bytes)
        # scrubbed once, here: the kept text (shown in pages, delivered to the chat) and the events come from it
        outcome = self.scrubbers.for_workspace(w.ws)(outcome)
        reason = "question" if is_interrupted(state) else "settled"
        await self._finish(w, result_text(outcome), reason, state=state, outcome=outcome, away=w.away)

    async def _finish(
        self,
        w: Follower,
        text: str | None,
        reason: str,
        *,
        state: str,
        outcome: dict[str, Any] | None = None,
        away: bool = False,
    ) -> None:
        """`away`: the task settled while no console followed it (`Follower.away`): its `watch.ended` says so."""
        ws, rid = w.ws, w.record.watch_id
        ending = self._end_events(rid, reason, state, outcome, away)

        def claim(tx: PendingTx) -> WatchRecord | None:
            """Under the workspace lock: the watch leaves the map, its text and closing events are kept in the file."""
            rec = tx.edit(rid)
            if rec is None or self._watches.get(rid) is not w:
                self._forget(w)
                return None
            self._drop(rid)
            if text is None:
                tx.remove(rid)
            else:
                rec.undelivered = text
                rec.end_events = ending
                if state:
                    rec.state = state
            return rec

        rec = await self._batch.apply(ws, claim)
        if rec is None:
            return
        if text is None:  # nothing kept, nothing to deliver: the events are all there is
            await self._announce(ws, rec, ending)
        if rec.source == "push":
            self._spawn(self._delete_push(ws, rec))
        if text is not None:
            await self._deliver(ws, rec)

    def _end_events(
        self, rid: str, reason: str, state: str, outcome: dict[str, Any] | None, away: bool = False
    ) -> list[dict[str, Any]]:
        """The closing events of a watch, as kept in its record: the result or question (with the outcome's
        bounded preview), then `watch.ended`, both stamped now."""
        at = self.clock.now().isoformat()
        events: list[dict[str, Any]] = []
        if outcome is not None:
            kind = QUESTION if is_interrupted(state) else RESULT
            events.append({"kind": kind, "at": at, "state": state, **outcome_event(outcome or {}, rid)})
        ended: dict[str, Any] = {"reason": reason, "watchId": rid}
        if away:
            ended[AWAY] = True
        events.append({"kind": WATCH_ENDED, "at": at, "state": state, "data": ended})
        return events

    async def _announce(self, ws: Workspace, rec: WatchRecord, events: list[dict[str, Any]] | None) -> None:
        """Emit a finished watch's closing events, each under its stable key: at the claim, or again for a kept
        record found after a crash (the history keeps one of each)."""
        root = str(ws.root)
        for e in events or []:
            kind = str(e.get("kind") or "")
            at = self.clock.now()
            with contextlib.suppress(ValueError, TypeError):
                at = datetime.fromisoformat(str(e.get("at")))
            data = e.get("data")
            await self._emit(
                self._event(
                    kind,
                    ws,
                    rec,
                    at=at,
                    state=str(e.get("state") or ""),
                    text=str(e.get("text") or ""),
                    data=dict(data) if isinstance(data, dict) else {},
                    key=watch_event_key(root, rec.watch_id, kind),
                )
            )

    async def _deliver(self, ws: Workspace, rec: WatchRecord, attempt: int = 0) -> bool:
        """Hand a kept text to the delivery (outside any lock); remove the record once it went out. The record's
        closing events go to the history first, once per process (a kept record found at a start, a rescan or a
        flush may be one whose events a killed process never stored)."""
        rid = rec.watch_id
        if self._stopped or rid in self._delivering or rec.undelivered is None:
            return False
        self._delivering.add(rid)
        try:
            if rid not in self._announced:
                await self._announce(ws, rec, rec.end_events)
                self._announced.add(rid)
            try:
                ok = bool(await self.delivery.deliver(rec.target, rec.undelivered, rec))
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("delivery of watch %s to %s failed", rid, rec.target)
                ok = False
            if ok:
                await self._batch.apply(ws, lambda tx: tx.remove(rid))
                self._announced.discard(rid)
                retry = self._retries.pop(rid, None)
                if retry is not None and retry is not asyncio.current_task():
                    retry.cancel()
                await self._emit(
                    self._event(
                        DELIVERED,
                        ws,
                        rec,
                        text=rec.undelivered or "",
                        key=watch_event_key(str(ws.root), rid, DELIVERED),
                    )
                )
                return True
        finally:
            self._delivering.discard(rid)
        await self._emit(self._event(UNDELIVERED, ws, rec, data={"watchId": rid, "attempt": attempt + 1}))
        if rid not in self._retries or self._retries[rid] is asyncio.current_task():
            task = self._spawn(self._retry(ws, rid, attempt + 1))
            if task is not None:
                self._retries[rid] = task
        return False

    async def _retry(self, ws: Workspace, rid: str, attempt: int) -> None:
        await self.clock.sleep(DELIVERY_RETRY[min(attempt - 1, len(DELIVERY_RETRY) - 1)])
        if self._retries.get(rid) is asyncio.current_task():
            del self._retries[rid]
        if ws.root in self._away:  # the worker that took the workspace over delivers it
            return
        rec = pending.read(ws).records
        kept = next((r for r in rec if r.watch_id == rid and r.undelivered is not None), None)
        if kept is not None:
            await self._deliver(ws, kept, attempt)

    async def _deliver_all(self, kept: list[tuple[Workspace, WatchRecord]]) -> None:
        for ws, rec in kept:
            await self._deliver(ws, rec)

    async def _delete_push(self, ws: Workspace, rec: WatchRecord) -> None:
        """The watch ended (settled, question, timeout, agent removed): the agent must stop pushing to it.
        In the background, so it never holds up the delivery; bounded and best effort (`remove_push_config`).
        A removed agent is reached through its last connection, if this process still has one."""
        try:
            entry = self.pool.agents(ws).get(rec.agent)
            conn = self.pool.cached(ws, rec.agent)
            if entry is not None:
                conn = await asyncio.wait_for(self.pool.get(ws, entry), PUSH_REMOVAL_TIMEOUT)
        except Exception as e:  # unreachable agent, timeout: nothing to do but say so
            log.warning("push config of watch %s not removed: %s", rec.watch_id, getattr(e, "kind", type(e).__name__))
            return
        if conn is not None:
            async with self.limits.call(origin(conn.entry.url)):
                await remove_push_config(conn, rec)

    # FollowHost: what each watch's follower asks of the registry

    async def save_source(self, follower: Follower, source: str) -> bool:
        """Record first: the follower's new source (and token) in the file, unless its record is gone."""
        rid, token = follower.record.watch_id, follower.record.push_token

        def change(tx: PendingTx) -> bool:
            rec = tx.edit(rid)
            if rec is None or self._watches.get(rid) is not follower:
                return False
            rec.source = source
            rec.push_token = token
            return True

        return await self._batch.apply(follower.ws, change)  # many restored watches may change at once: batched

    async def follow_event(self, follower: Follower, kind: str, **kw: Any) -> None:
        await self._emit(self._event(kind, follower.ws, follower.record, **kw))

    def _refused_text(self, w: Follower) -> str:
        """What a watch row says of its agent's push refusal ("" when it follows by push, or nothing was refused)."""
        refusal = self.push_refusals.of(str(w.ws.root), w.record.agent) if w.source != "push" else None
        return refusal.said(w.source) if refusal is not None else ""

    def push_answer(self, follower: Follower, error: str, fallback: str) -> None:
        """Keep the agent's refusal of a push config (scrubbed, then cut), or forget it once one is accepted."""
        ws, agent = str(follower.ws.root), follower.record.agent
        if not error:
            self.push_refusals.accepted(ws, agent)
            return
        said = refusal_reason(self.scrubbers.for_workspace(follower.ws).text(error))
        self.push_refusals.refused(PushRefusal(ws, agent, said, fallback, self.clock.now()))

    async def save_heard(self, follower: Follower) -> None:
        """Record when the agent last answered and why its last call failed (`heard.py`: written at a change only,
        scrubbed like the rows that show it), unless the record is gone."""
        rid = follower.record.watch_id
        heard = follower.heard_at.isoformat() if follower.heard_at is not None else None
        error = self.scrubbers.for_workspace(follower.ws).text(reason(follower.error)) if follower.error else ""

        def change(tx: PendingTx) -> None:
            rec = tx.edit(rid)
            if rec is None or self._watches.get(rid) is not follower:
                return
            extra = {k: v for k, v in rec.extra.items() if k not in (HEARD_AT, LAST_ERROR)}  # a new dict: see cancel
            if heard is not None:
                extra[HEARD_AT] = heard
            if error:
                extra[LAST_ERROR] = error
            rec.extra = extra

        await self._batch.apply(follower.ws, change)

    # events

    def _event(self, kind: str, ws: Workspace, rec: WatchRecord, *, at: datetime | None = None, **kw: Any) -> Event:
        return Event(
            kind,
            str(ws.root),
            rec.agent,
            rec.task_id,
            at or self.clock.now(),
            context_id=rec.context_id,
            target=rec.target,
            **kw,
        )

    async def _emit(self, event: Event) -> None:
        try:
            ws = self._workspaces.get(Path(event.workspace)) or Workspace(event.workspace)
            await self.events.emit(self.scrubbers.for_workspace(ws).event(event))
        except Exception:
            log.exception("event sink failed on %s", event.kind)
