"""How a watch follows its task: push, SubscribeToTask or GetTask polling (the `Following` part of the registry).

push: the agent POSTs updates (each wakes the watch, which confirms with GetTask; a safety GetTask every
10 min). subscribe: a stream held at most 5 min, then GetTask and a new stream (a pause); 3 failed
streams in a row (one that ends before the task settles counts) switch to polling. poll: GetTask after
15 s, 30 s, 1 min, 2 min, then every 5 min. Every sleep is on the injected clock and bounded by the
watch's deadline, after which it ends with the timeout notice.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from datetime import datetime
from typing import Any

from a2a.types import StreamResponse, Task, TaskStatus

from .call_limits import CallLimits
from .client import Connection, RemoteError, origin_of
from .clock import Clock
from .config import ClientSettings
from .connections import ConnectionPool
from .errors import A2AConsoleError
from .events import STATE, WATCH_UPDATE, Event
from .pending import WatchRecord
from .pending_batch import BatchTx, PendingBatcher
from .results import is_settled, state_name
from .workspace import Workspace

POLL_BACKOFF = (15.0, 30.0, 60.0, 120.0, 300.0)
PUSH_SAFETY = 600.0
STREAM_CAP = 300.0
SUBSCRIBE_RETRY = (5.0, 15.0, 30.0)
SUBSCRIBE_FAILURES = 3


class WatchEnd(Exception):
    """A watch ends without a task outcome: `text` is the notice delivered instead (None: nothing)."""

    def __init__(self, reason: str, text: str | None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.text = text


class WatchGone(Exception):
    """The watch's record left pending.json (stopped elsewhere): end quietly, deliver nothing."""


def duration_text(seconds: float) -> str:
    """`86400` -> `24h`, `5400` -> `90min`, `45` -> `45s`: the span in the timeout notice."""
    s = int(seconds)
    if s >= 3600 and s % 3600 == 0:
        return f"{s // 3600}h"
    if s >= 60 and s % 60 == 0:
        return f"{s // 60}min"
    return f"{s}s"


def timeout_notice(agent: str, task_id: str, seconds: float) -> str:
    return (
        f"{agent} gave no result for task {task_id} within {duration_text(seconds)}; "
        "you can check it with action=status"
    )


def removed_notice(agent: str, task_id: str) -> str:
    return (
        f'[A2A watch ended: agent "{agent}" was removed from agents.json] task {task_id} is no longer watched; '
        "add the agent again and use action=status to check it"
    )


class WatchState:
    """What the registry keeps per followed task: the record and a few small fields (benchmarked per watch)."""

    __slots__ = (
        "checked_at",
        "deadline",
        "error",
        "record",
        "restored",
        "runner",
        "source",
        "state",
        "waker",
        "woken",
        "ws",
    )

    def __init__(self, record: WatchRecord, ws: Workspace, deadline: float, *, restored: bool = False) -> None:
        self.record = record
        self.restored = restored  # found in the file (start, rescan), not just handed over by a send that checked
        self.ws = ws
        self.deadline = deadline
        self.source = record.source
        self.state = str(record.extra.get("state") or "")
        self.error = ""
        self.checked_at: datetime | None = None
        self.runner: asyncio.Task[None] | None = None
        self.waker: asyncio.Future[None] | None = None
        self.woken = False


class Following:
    """The registry's methods that follow one watch's task until it settles (a mixin of WatchRegistry)."""

    pool: ConnectionPool
    settings: ClientSettings
    clock: Clock
    _batch: PendingBatcher
    limits: CallLimits
    _watches: dict[str, WatchState]

    def _event(self, kind: str, ws: Workspace, rec: WatchRecord, **kw: Any) -> Event:
        raise NotImplementedError

    async def _emit(self, event: Event) -> None:
        raise NotImplementedError

    async def _follow(self, w: WatchState) -> Task:
        source = await self._choose_source(w)
        if source == "push":
            return await self._push_loop(w)
        if source == "subscribe":
            slot = self.limits.stream(self._agent_key(w))
            if slot is None:  # every stream slot is taken: poll (for this run; the file still says subscribe)
                w.source = "poll"
                return await self._poll_loop(w)
            with slot:
                task = await self._subscribe_loop(w)
            if task is not None:
                return task
            await self._set_source(w, "poll", "the stream failed 3 times; polling instead")
        return await self._poll_loop(w)

    async def _choose_source(self, w: WatchState) -> str:
        """push when the card offers it and a push URL is set, else subscribe when it streams, else poll."""
        try:
            conn = await self._connection(w)
        except RemoteError as e:
            self._note_error(w, e)
            want = "subscribe" if w.source in ("push", "subscribe") else "poll"
            if want != w.source:
                await self._set_source(w, want, "")
            return want
        base = self.settings.push_base_url
        want = "push" if conn.push and base else "subscribe" if conn.streaming else "poll"
        if want == "push":
            if not w.record.push_token or w.source != "push":
                w.record.push_token = w.record.push_token or secrets.token_urlsafe(32)
                await self._set_source(w, "push", "")
            try:
                async with self.limits.call(self._agent_key(w), first=w.checked_at is None):
                    await conn.create_push(
                        w.record.task_id, f"{base}/a2a/push/{w.record.watch_id}", w.record.push_token, w.record.watch_id
                    )
            except RemoteError as e:
                self._note_error(w, e)
                want = "subscribe" if conn.streaming else "poll"
            else:
                return "push"
        if want != w.source:
            await self._set_source(w, want, "")
        return want

    async def _set_source(self, w: WatchState, source: str, note: str) -> None:
        """Record first (the file), then the map and the event."""
        rid, token = w.record.watch_id, w.record.push_token

        def change(tx: BatchTx) -> bool:
            rec = tx.find(rid)
            if rec is None or self._watches.get(rid) is not w:
                return False
            rec.source = source
            rec.push_token = token
            return True

        if not await self._batch.apply(w.ws, change):  # many restored watches may change at once: batched
            raise WatchGone
        w.record.source = w.source = source
        data = {"watchId": w.record.watch_id, "source": source}
        if note:
            data["note"] = note
        await self._emit(self._event(WATCH_UPDATE, w.ws, w.record, data=data))

    async def _connection(self, w: WatchState) -> Connection:
        """The agent's connection, looked up in agents.json now. An agent gone from the file ends the watch;
        a malformed file is a passing failure."""
        af = self.pool.agents(w.ws)
        if af.parse_error:
            raise RemoteError("config", af.parse_error)
        entry = af.get(w.record.agent)
        if entry is None:
            raise WatchEnd("agent removed", removed_notice(w.record.agent, w.record.task_id))
        return await self.pool.get(w.ws, entry)

    def _agent_key(self, w: WatchState) -> str:
        """Whom the call limits count a watch's calls against: its agent's origin (the name, if it left the file)."""
        entry = self.pool.agents(w.ws).get(w.record.agent)
        return origin_of(entry.url) if entry is not None else w.record.agent

    async def _check(self, w: WatchState) -> Task | None:
        """GetTask once: the task when it settled, None while it runs or when the check failed (passing)."""
        conn: Connection | None = None
        try:
            async with self.limits.call(self._agent_key(w), first=w.checked_at is None):
                conn = await self._connection(w)
                task = await conn.get_task(w.record.task_id)
        except RemoteError as e:
            if e.kind == "too_big":  # every later check would read the same oversized answer: end with why
                raise WatchEnd(
                    "too big", f"[A2A watch ended] {e}; task {w.record.task_id} is no longer watched"
                ) from None
            self._note_error(w, e, conn)
            return None
        w.checked_at = self.clock.now()
        w.error = ""
        state = state_name(task.status.state)
        await self._saw(w, state)
        return task if is_settled(state) and not is_stale(w.record, task.status) else None

    def _note_error(self, w: WatchState, e: A2AConsoleError, conn: Connection | None = None) -> None:
        w.error = str(e)
        w.checked_at = self.clock.now()
        if conn is not None:
            self.pool.drop(w.ws, conn)

    async def _saw(self, w: WatchState, state: str) -> None:
        if state and state != w.state:
            w.state = state
            await self._emit(self._event(STATE, w.ws, w.record, state=state))

    async def _nap(self, w: WatchState, seconds: float) -> bool:
        """Sleep on the clock until `seconds` pass (False) or a push wakes the watch (True); past the
        watch's deadline it ends with the timeout notice."""
        if w.woken:
            w.woken = False
            return True
        left = w.deadline - self.clock.monotonic()
        if left <= 0:
            raise self._timeout(w)
        sleeper = asyncio.ensure_future(self.clock.sleep(min(seconds, left)))
        w.waker = sleeper
        try:
            await sleeper
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if not w.woken or (task is not None and task.cancelling()):
                raise
        finally:
            w.waker = None
        if w.woken:
            w.woken = False
            return True
        if self.clock.monotonic() >= w.deadline:
            raise self._timeout(w)
        return False

    def _timeout(self, w: WatchState) -> WatchEnd:
        return WatchEnd("timeout", timeout_notice(w.record.agent, w.record.task_id, self.settings.watch_timeout))

    async def _poll_loop(self, w: WatchState) -> Task:
        # A restored watch's task may have ended long ago (or while we were down): check once at once. Many
        # restored at one start queue on the checks' semaphore, which spreads them out.
        if w.restored:
            task = await self._check(w)
            if task is not None:
                return task
        step = 0
        while True:
            await self._nap(w, POLL_BACKOFF[min(step, len(POLL_BACKOFF) - 1)])
            step += 1
            task = await self._check(w)
            if task is not None:
                return task

    async def _push_loop(self, w: WatchState) -> Task:
        # Check once at once: the task may have settled before the config existed, or while we were down.
        task = await self._check(w)
        if task is not None:
            return task
        while True:
            await self._nap(w, PUSH_SAFETY)
            task = await self._check(w)
            if task is not None:
                return task

    async def _subscribe_loop(self, w: WatchState) -> Task | None:
        """Follow the stream; None after 3 failures in a row (the caller polls instead)."""
        failures = 0
        while True:
            conn: Connection | None = None
            try:
                conn = await self._connection(w)
                outcome = await self._stream(w, conn)
            except RemoteError as e:
                if e.kind in ("terminal", "too_big"):  # check at once (an oversized task ends the watch there)
                    outcome = "settled"
                else:
                    self._note_error(w, e, conn)
                    outcome = "failed"
            if outcome in ("settled", "cap"):
                # A pause (the 5-minute cap) or the end: confirm with GetTask, then go on streaming.
                task = await self._check(w)
                if task is not None:
                    return task
                if outcome == "cap":
                    failures = 0
                    continue
                outcome = "failed"
            if outcome == "ended":
                w.error = "the stream ended before the task settled"
            failures += 1
            if failures >= SUBSCRIBE_FAILURES:
                return None
            await self._nap(w, SUBSCRIBE_RETRY[failures - 1])

    async def _stream(self, w: WatchState, conn: Connection) -> str:
        """One subscription, held at most STREAM_CAP: "settled", "ended" (before settling) or "cap"."""
        left = w.deadline - self.clock.monotonic()
        if left <= 0:
            raise self._timeout(w)
        reader = asyncio.ensure_future(self._read_stream(w, conn))
        timer = asyncio.ensure_future(self.clock.sleep(min(STREAM_CAP, left)))
        try:
            done, _ = await asyncio.wait({reader, timer}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for t in (reader, timer):
                if not t.done():
                    t.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.gather(reader, timer, return_exceptions=True)
        if reader in done and not reader.cancelled():
            return reader.result()
        if self.clock.monotonic() >= w.deadline:
            raise self._timeout(w)
        return "cap"

    async def _read_stream(self, w: WatchState, conn: Connection) -> str:
        opened = self.limits.opening(self._agent_key(w), conn.subscribe(w.record.task_id), first=w.checked_at is None)
        async with contextlib.aclosing(opened) as events:
            async for ev in events:
                status = _stream_status(ev)
                if status is not None:
                    state = state_name(status.state)
                    w.checked_at = self.clock.now()
                    w.error = ""
                    await self._saw(w, state)
                    if is_settled(state) and not is_stale(w.record, status):
                        return "settled"
        return "ended"


def _stream_status(ev: StreamResponse) -> TaskStatus | None:
    kind = ev.WhichOneof("payload")
    if kind == "task":
        return ev.task.status
    if kind == "status_update":
        return ev.status_update.status
    return None


def is_stale(record: WatchRecord, status: TaskStatus) -> bool:
    """True for the interrupted status the send's stale reply showed (the record's `staleStatus`, written by
    the tool): the question from before the answer, not the outcome the watch waits for."""
    marker = record.extra.get("staleStatus")
    if not isinstance(marker, dict) or marker.get("state") != state_name(status.state):
        return False
    message_id = status.message.message_id if status.HasField("message") else ""
    timestamp = status.timestamp.ToJsonString() if status.HasField("timestamp") else ""
    return marker.get("messageId", "") == message_id and marker.get("timestamp", "") == timestamp
