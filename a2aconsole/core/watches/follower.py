"""One follower of a remote task: by push, SubscribeToTask or GetTask polling, its states and its progress.

`Follower` follows one task from a send to its result (it replaces the tool's own wait, and the registry's
`Following` mixin with its per-watch `WatchState`). A send starts it at a send's pace (`follow(conn)`):
GetTask at once, then the stream (rebuilding the task from its events), else GetTask every 0.5 s doubling
to 2 s. When the wait runs out, the registry of the process takes it over (`take_over`) and it goes on at
a watch's pace: push (the agent POSTs updates: each push's state and status message are told at once,
`pushed`; one that says the task settled wakes the follower, which confirms with GetTask; a safety GetTask
every 10 min), subscribe (a stream held at most 5 min, then GetTask and a new stream; 3 failed streams in a
row, one that ends before the task settles counts, switch to polling; every stream's end is confirmed with
GetTask at once) or poll
(GetTask after 15 s, 30 s, 1 min, 2 min, then every 5 min). A watch restored from the file starts at
that pace. The stream is read the same way throughout (`fold`), and progress reported the same way: a
status message or an artifact update is a `progress` event, so a live page can show what the agent says
while it works. Every sleep is on the injected clock.

A **stale reply** (`core/tool/send.py`, `stale_status`) is the interrupted status a follow-up's immediate reply
still shows from before the answer (some SDKs, @a2a-js/sdk 1.3, answer so): not the outcome, so the follower
waits for the task to move past it; a watch knows it from its record's `staleStatus` (`is_stale`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from dataclasses import replace
from datetime import datetime
from typing import Any, Protocol

from a2aconsole.core.clock import Clock
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.errors import A2AConsoleError
from a2aconsole.core.events import PROGRESS, STATE, WATCH_UPDATE
from a2aconsole.core.files import Workspace, origin
from a2aconsole.core.pending import WatchRecord
from a2aconsole.core.remote import (
    ArtifactUpdate,
    CallLimits,
    Connection,
    ConnectionPool,
    RemoteError,
    StatusUpdate,
    StatusValue,
    TaskEvent,
    TaskSnapshot,
)
from a2aconsole.core.results import is_settled, message_text, preview
from a2aconsole.core.tasks import cancel_and_wait
from a2aconsole.core.watches.heard import HEARD, HEARD_AT, LAST_ERROR, PUSH_QUIET, QUIET, is_quiet, parse_at, reason

log = logging.getLogger(__name__)

POLL_BACKOFF = (15.0, 30.0, 60.0, 120.0, 300.0)
PUSH_SAFETY = 600.0
STREAM_CAP = 300.0
SUBSCRIBE_RETRY = (5.0, 15.0, 30.0)
SUBSCRIBE_FAILURES = 3
SEND_POLL_FIRST = 0.5
SEND_POLL_MAX = 2.0
PROGRESS_CHARS = 1024  # what a progress event keeps of a status message or an artifact update
RUNNING = ("submitted", "working")  # the states a push may say without the watch asking GetTask
LOST = "lost"  # the end, and the last state, of a watch whose agent no longer knows its task
SHORT_TASK = 4  # characters of a task id a notice shows
SAID_CHARS = 60  # of the last status message, what the lost notice repeats


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
        f"{agent} gave no result for task {task_id} within {duration_text(seconds)} (timed out); "
        "you can check it with action=status"
    )


def short_task(task_id: str) -> str:
    """A task id as notices name it: its first characters (`5c1e…`)."""
    return task_id[:SHORT_TASK] + ("…" if len(task_id) > SHORT_TASK else "")


def lost_notice(agent: str, task_id: str, state: str, said: str, heard_at: datetime | None) -> str:
    """The one notice a lost watch delivers: what the console last knew of the task, and when."""
    last = state or "unknown"
    if said:  # "working 64/200", not "working working 64/200"
        last = said if said.split(" ", 1)[0] == state else f"{last} {said}"
    when = f" at {heard_at:%H:%M}" if heard_at is not None else ""
    return (
        f'[A2A: "{agent}" no longer knows task {short_task(task_id)} (it may have restarted); last state {last}{when}]'
    )


def removed_notice(agent: str, task_id: str) -> str:
    return (
        f'[A2A watch ended: agent "{agent}" was removed from agents.json] task {task_id} is no longer watched; '
        "add the agent again and use action=status to check it"
    )


class FollowHost(Protocol):
    """What a watch's follower needs from its registry: the shared parts, and the file and events."""

    pool: ConnectionPool
    settings: ClientSettings
    clock: Clock
    limits: CallLimits  # bounds the remote calls and open streams of all followers, per agent and in all

    async def save_source(self, follower: Follower, source: str) -> bool:
        """Write the follower's new source (and push token) to its record; False when the record is gone."""
        ...

    async def follow_event(self, follower: Follower, kind: str, **kw: Any) -> None:
        """Emit an event about the follower's task (state, progress, watch.update)."""
        ...

    async def save_heard(self, follower: Follower) -> None:
        """Write when the agent last answered and why its last call failed (`heard.py`) to the record."""
        ...

    def push_answer(self, follower: Follower, error: str, fallback: str) -> None:
        """The agent's answer to the follower's push config: `error` the refusal's text ("": accepted), and
        `fallback` the source followed instead (`push_refusals.py`)."""
        ...

    async def listed(self, follower: Follower) -> TaskSnapshot | None:
        """A restored watch's first check answered from its agent's task list (`sweep.py`): its running status,
        or None when the follower must ask GetTask."""
        ...


class Follower:
    """Follows one watch's task; the registry keeps one per watch (its fields are benchmarked per watch)."""

    __slots__ = (
        "checked_at",
        "deadline",
        "error",
        "failing",
        "first_state",
        "heard_at",
        "host",
        "latest",
        "quiet_after",
        "record",
        "restored",
        "runner",
        "said",
        "sending",
        "source",
        "state",
        "told",
        "warned",
        "waker",
        "woken",
        "ws",
    )

    def __init__(
        self, record: WatchRecord, ws: Workspace, deadline: float, host: FollowHost, *, restored: bool = False
    ) -> None:
        self.host = host
        self.record = record
        self.restored = restored  # found in the file (start, rescan), not just handed over by a send that checked
        self.first_state = ""  # the state the agent said first to this follower (`away`)
        self.ws = ws
        self.deadline = deadline
        self.source = record.source
        self.state = record.state
        # when the agent last answered about the task, and why its last call failed: as the record last kept them
        self.heard_at: datetime | None = parse_at(record.extra.get(HEARD_AT)) or parse_at(record.started_at)
        self.error = str(record.extra.get(LAST_ERROR) or "")
        self.failing = bool(self.error)  # as the record says (written at a change only: `_news`)
        self.warned = False  # the silence was told as news (a `watch.update`), until the agent answers
        self.quiet_after = PUSH_QUIET  # how long a silence after a failed call may last before it is news
        self.checked_at: datetime | None = None
        self.said = ""  # its last status message, in short: the lost notice repeats it
        self.runner: asyncio.Task[None] | None = None
        self.waker: asyncio.Future[None] | None = None
        self.woken = False
        self.sending = False  # in a send's wait (`follow(conn)`), until a watch takes it over
        self.latest: TaskSnapshot | None = None  # during a send's wait: the task as last seen, for the send's answer
        self.told = ""  # the status message last told as progress (its id, else its text): told once

    def wake(self) -> None:
        """Check the task now (a push arrived, or a console asked); during a send's wait, the hand-over."""
        self.woken = True
        if self.waker is not None and not self.waker.done():
            self.waker.cancel()

    async def pushed(self, ev: TaskEvent) -> bool:
        """A push's own news, told at once (its token authenticates its sender): its state, its status message or
        artifact. True when the watch must still confirm with GetTask: the push says the task settled (or a state
        the console does not know), and the watch's end is decided from the agent's answer, never from a push."""
        if isinstance(ev, ArtifactUpdate):
            await self._progress(ev)
            return False
        status = ev.status  # a task or a status update
        await self._saw(status.state, first=False)  # a push is no first answer: `away` is for GetTask to say
        await self._heard(status)
        return status.state not in RUNNING

    def take_over(self, host: FollowHost, ws: Workspace, deadline: float) -> None:
        """The send's wait ran out: from now on this follower is a watch of `host` (its registry), at a watch's
        pace and deadline. A nap or a stream of the send's pace in progress is cut short (`_send_stream`)."""
        self.host, self.ws, self.deadline = host, ws, deadline
        self.sending = False
        self.wake()

    async def saw_first(self, task: TaskSnapshot) -> None:
        """What the send's first GetTask (`first_check`) found: seen by this follower (its events told), which goes
        on from it (`follow(conn)` does not ask again at once)."""
        self.sending = True
        await self._send_saw(task)

    async def follow(self, conn: Connection | None = None) -> TaskSnapshot:
        """The task once it settles (past a stale status); WatchEnd when the watch ends without it. With
        `conn`, first at a send's pace (`_send_phase`) until the task settles or a watch takes it over."""
        if conn is not None:
            task = await self._send_phase(conn)
            if task is not None:
                return task
            self.latest, self.woken = None, False
        source = await self._choose_source()
        if source == "push":
            return await self._push_loop()
        if source == "subscribe":
            slot = self.host.limits.stream(self._agent_key())
            if slot is None:  # every stream slot is taken: poll (for this run; the file still says subscribe)
                self.source = "poll"
                return await self._poll_loop()
            with slot:
                task = await self._subscribe_loop()
            if task is not None:
                return task
            await self._set_source("poll", "the stream failed 3 times; polling instead")
        return await self._poll_loop()

    # a send's wait: GetTask at once, then the stream (rebuilding the task from it), else GetTask every 0.5 s
    # doubling to 2 s; a failed GetTask ends the wait (the send hands the task to a watch, which retries)

    async def _send_phase(self, conn: Connection) -> TaskSnapshot | None:
        """The task once it settles, or None when a watch took this follower over meanwhile. A task already seen
        (`latest`: the send's `first_check`, `saw_first`) is not asked for again at once."""
        self.sending = True
        try:
            if self.latest is None and self._send_done(await self._send_check(conn)):
                return self.latest
            # not started yet when asked: a quick task has settled by the next round trip, which costs less than
            # opening a stream (about half the sends to a fast agent find it still submitted at first)
            submitted = self.latest is not None and self.latest.state == "submitted"
            if submitted and self.sending and self._send_done(await self._send_check(conn)):
                return self.latest
            if conn.streaming and self.sending:
                streamed = await self._send_stream(conn)
                if streamed is not None:
                    return streamed
                if self.sending and self._send_done(await self._send_check(conn)):
                    return self.latest
            delay = SEND_POLL_FIRST
            while self.sending:
                await self._send_nap(delay)
                if not self.sending:
                    break
                delay = min(SEND_POLL_MAX, delay * 2)
                if self._send_done(await self._send_check(conn)):
                    return self.latest
            return None
        except RemoteError:
            if self.sending:
                raise
            return None  # taken over meanwhile: the watch's own loops retry

    def _send_done(self, task: TaskSnapshot) -> bool:
        return is_settled(task.state) and not is_stale(self.record, task.status)

    async def _send_check(self, conn: Connection) -> TaskSnapshot:
        """One GetTask; a state change is an event."""
        current = await conn.get_task(self.record.task_id)
        await self._send_saw(current)
        return current

    async def _send_saw(self, current: TaskSnapshot) -> None:
        self.latest = current
        await self._saw(current.state)
        await self._heard(current.status)

    async def _send_nap(self, seconds: float) -> None:
        """Sleep on the clock; a hand-over (`take_over`) cuts it short."""
        await self._wakeable_sleep(seconds)

    async def _wakeable_sleep(self, seconds: float) -> None:
        """Sleep on the clock until `seconds` pass or `wake` cuts the sleep short (a cancellation of our own
        task is still raised)."""
        sleeper = asyncio.ensure_future(self.host.clock.sleep(seconds))
        self.waker = sleeper
        try:
            await sleeper
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if not self.woken or (task is not None and task.cancelling()):
                raise
        finally:
            self.waker = None

    async def _send_stream(self, conn: Connection) -> TaskSnapshot | None:
        """SubscribeToTask until the task settles, rebuilding it from the events (no GetTask needed after).
        None when the stream ends early or fails, or the task finished meanwhile (the caller checks), or a
        watch took over (it subscribes at its own pace)."""
        reader = asyncio.ensure_future(self._send_read(conn))
        self.waker = reader
        try:
            return await reader
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if not self.woken or (task is not None and task.cancelling()):
                raise
            return None
        finally:
            self.waker = None

    async def _send_read(self, conn: Connection) -> TaskSnapshot | None:
        try:
            async with contextlib.aclosing(conn.subscribe(self.record.task_id)) as stream:
                async for ev in stream:
                    snapshot = fold(self.latest, ev) if self.latest is not None else None
                    if snapshot is None:
                        continue
                    await self._progress(ev)
                    await self._send_saw(snapshot)
                    if self._send_done(snapshot):
                        return snapshot
        except RemoteError as e:
            # not_found: a2a-sdk 0.3 refuses to stream a task with no work running (one asking a question meanwhile);
            # the caller's GetTask then tells whether the agent knows the task
            if e.kind not in ("terminal", "network", "timeout", "protocol", "unsupported", "not_found"):
                raise
        return None

    async def _choose_source(self) -> str:
        """push when the card offers it and a push URL is set, else subscribe when it streams, else poll."""
        try:
            conn = await self._connection()
        except RemoteError as e:
            self._note_error(e)
            want = "subscribe" if self.source in ("push", "subscribe") else "poll"
            if want != self.source:
                await self._set_source(want, "")
            return want
        base = self.host.settings.push_base_url
        want = "push" if conn.push and base else "subscribe" if conn.streaming else "poll"
        if want == "push":
            if not self.record.push_token or self.source != "push":
                self.record.push_token = self.record.push_token or secrets.token_urlsafe(32)
                await self._set_source("push", "")
            try:
                async with self.host.limits.call(self._agent_key(), first=self.checked_at is None):
                    await conn.create_push(
                        self.record.task_id,
                        f"{base}/a2a/push/{self.record.watch_id}",
                        self.record.push_token,
                        self.record.watch_id,
                    )
            except RemoteError as e:
                want = "subscribe" if conn.streaming else "poll"
                if e.kind in ("network", "timeout"):  # not heard: a passing failure, tried again at the next start
                    self._note_error(e)
                else:  # the agent answered, and refused (an SSRF guard on the URL, push off): said once per agent
                    self.host.push_answer(self, str(e), want)
            else:
                self.host.push_answer(self, "", "push")
                return "push"
        if want != self.source:
            await self._set_source(want, "")
        return want

    async def _set_source(self, source: str, note: str) -> None:
        """Record first (the file, by the host), then this follower and the event."""
        if not await self.host.save_source(self, source):
            raise WatchGone
        self.record.source = self.source = source
        data = {"watchId": self.record.watch_id, "source": source}
        if note:
            data["note"] = note
        await self.host.follow_event(self, WATCH_UPDATE, data=data)

    async def _connection(self) -> Connection:
        """The agent's connection, looked up in agents.json now. An agent gone from the file ends the watch;
        a malformed file is a passing failure."""
        af = self.host.pool.agents(self.ws)
        if af.parse_error:
            raise RemoteError("config", af.parse_error)
        entry = af.get(self.record.agent)
        if entry is None:
            raise WatchEnd("agent removed", removed_notice(self.record.agent, self.record.task_id))
        return await self.host.pool.get(self.ws, entry)

    def _agent_key(self) -> str:
        """Whom the call limits count this watch's calls against: its agent's origin (the name, if it left the file)."""
        entry = self.host.pool.agents(self.ws).get(self.record.agent)
        return origin(entry.url) if entry is not None else self.record.agent

    async def _check(self) -> TaskSnapshot | None:
        """GetTask once: the task when it settled, None while it runs or when the check failed (passing). A restored
        watch's first check may be answered by its agent's task list instead (`host.listed`: a running task only)."""
        first = self.checked_at is None
        task = await self.host.listed(self) if first and self.restored else None
        if task is None:
            conn: Connection | None = None
            try:
                async with self.host.limits.call(self._agent_key(), first=first):
                    conn = await self._connection()
                    task = await conn.get_task(self.record.task_id)
            except RemoteError as e:
                if e.kind == "too_big":  # every later check would read the same oversized answer: end with why
                    raise WatchEnd(
                        "too big", f"[A2A watch ended] {e}; task {self.record.task_id} is no longer watched"
                    ) from None
                if e.kind == "not_found":  # the agent answered, and does not know the task: no retry brings it back
                    raise self._lost() from None
                self._note_error(e, conn)
                await self._news()
                return None
        self.checked_at = self.heard_at = self.host.clock.now()
        self.error = ""
        await self._news()
        state = task.state
        await self._saw(state)
        await self._heard(task.status)
        return task if is_settled(state) and not is_stale(self.record, task.status) else None

    async def _news(self) -> None:
        """After each call: record first a change between answering and failing (`heard.py`: not every answer, which
        would be a file write per push), then tell the owner once the silence lasts past `quiet_after`, and once
        the agent answers again."""
        if self.failing != bool(self.error):
            self.failing = bool(self.error)
            await self.host.save_heard(self)
        heard = self.heard_at.isoformat() if self.heard_at is not None else None
        data: dict[str, Any] = {"watchId": self.record.watch_id, "heardAt": heard}
        if not self.warned and is_quiet(self.heard_at, self.error, self.quiet_after, self.host.clock.now()):
            self.warned = True
            await self.host.follow_event(self, WATCH_UPDATE, data={**data, "news": QUIET, "error": reason(self.error)})
        elif self.warned and not self.error:
            self.warned = False
            await self.host.follow_event(self, WATCH_UPDATE, data={**data, "news": HEARD})

    def _lost(self) -> WatchEnd:
        r = self.record
        state = self.state or r.state
        if state == "sending":
            state = ""
        return WatchEnd(LOST, lost_notice(r.agent, r.task_id, state, self.said, self.heard_at))

    def _note_error(self, e: A2AConsoleError, conn: Connection | None = None) -> None:
        self.error = str(e)
        self.checked_at = self.host.clock.now()
        if conn is not None:
            self.host.pool.drop(self.ws, conn)

    @property
    def away(self) -> bool:
        """True when the task settled while no console followed it: the watch was restored from the file (a start,
        a lease taken over) and the agent's first answer since was already settled (terminal or a question)."""
        return self.restored and is_settled(self.first_state)

    async def _saw(self, state: str, *, first: bool = True) -> None:
        if first and state and not self.first_state:
            self.first_state = state
        if state and state != self.state:
            self.state = state
            await self.host.follow_event(self, STATE, state=state)

    async def _nap(self, seconds: float) -> bool:
        """Sleep on the clock until `seconds` pass (False) or a push wakes the watch (True); past the
        watch's deadline it ends with the timeout notice."""
        if self.woken:
            self.woken = False
            return True
        left = self.deadline - self.host.clock.monotonic()
        if left <= 0:
            raise self._timeout()
        await self._wakeable_sleep(min(seconds, left))
        if self.woken:
            self.woken = False
            return True
        if self.host.clock.monotonic() >= self.deadline:
            raise self._timeout()
        return False

    def _timeout(self) -> WatchEnd:
        seconds = self.host.settings.watch_timeout
        return WatchEnd("timeout", timeout_notice(self.record.agent, self.record.task_id, seconds))

    async def _progress(self, ev: TaskEvent) -> None:
        note = progress_of(ev)
        if note is not None:
            if isinstance(ev, StatusUpdate):
                self.told = status_key(ev.status)
                self.said = said_of(note[0])
            await self.host.follow_event(self, PROGRESS, text=note[0], data=note[1])

    async def _heard(self, status: StatusValue) -> None:
        """A status message seen by GetTask (after a push, or a poll) while the task works is progress too, told
        once: a push that carries only a new status message changes no state, and would show nothing else."""
        key = status_key(status)
        if status.message is not None:
            self.said = said_of(message_text(status.message))
        if not key or key == self.told or is_settled(status.state):
            return
        self.told = key
        note = status_progress(status)
        if note is not None:
            await self.host.follow_event(self, PROGRESS, text=note[0], data=note[1])

    async def _poll_loop(self) -> TaskSnapshot:
        # A restored watch's task may have ended long ago (or while we were down): check once at once. Many
        # restored at one start queue on the checks' semaphore, which spreads them out.
        if self.restored:
            task = await self._check()
            if task is not None:
                return task
        step = 0
        while True:
            delay = POLL_BACKOFF[min(step, len(POLL_BACKOFF) - 1)]
            if not self.error:  # news once two checks in a row went unanswered: twice the interval it last heard at
                self.quiet_after = 2 * delay
            await self._nap(delay)
            step += 1
            task = await self._check()
            if task is not None:
                return task

    async def _push_loop(self) -> TaskSnapshot:
        # Check once at once: the task may have settled before the config existed, or while we were down.
        self.quiet_after = PUSH_QUIET
        task = await self._check()
        if task is not None:
            return task
        failed = 0
        while True:
            # an agent that did not answer is checked on the poll backoff until it does, not only by the safety check
            failed = failed + 1 if self.error else 0
            await self._nap(POLL_BACKOFF[min(failed - 1, len(POLL_BACKOFF) - 1)] if failed else PUSH_SAFETY)
            task = await self._check()
            if task is not None:
                return task

    async def _subscribe_loop(self) -> TaskSnapshot | None:
        """Follow the stream; None after 3 failures in a row (the caller polls instead)."""
        failures = 0
        while True:
            conn: Connection | None = None
            try:
                conn = await self._connection()
                outcome = await self._stream(conn)
            except RemoteError as e:
                if e.kind in ("terminal", "too_big", "not_found"):  # check at once: it ends the watch (too big, lost)
                    outcome = "settled"
                else:
                    self._note_error(e, conn)
                    await self._news()
                    outcome = "failed"
            # Every stream's end is confirmed with GetTask at once: a pause (the 5-minute cap), the end, and a stream
            # that failed or ended early too, as the 0.3 SDKs' do for a task that settled or asks a question meanwhile
            # (a refused or broken stream, one that ends after the snapshot), whose result would wait for the retries.
            task = await self._check()
            if task is not None:
                return task
            if outcome == "cap":
                failures = 0
                continue
            if outcome == "ended":
                self.error = "the stream ended before the task settled"
            failures += 1
            if failures >= SUBSCRIBE_FAILURES:
                return None
            await self._nap(SUBSCRIBE_RETRY[failures - 1])

    async def _stream(self, conn: Connection) -> str:
        """One subscription, held at most STREAM_CAP: "settled", "ended" (before settling) or "cap"."""
        left = self.deadline - self.host.clock.monotonic()
        if left <= 0:
            raise self._timeout()
        reader = asyncio.ensure_future(self._read_stream(conn))
        timer = asyncio.ensure_future(self.host.clock.sleep(min(STREAM_CAP, left)))
        try:
            done, _ = await asyncio.wait({reader, timer}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            await cancel_and_wait(reader, timer)  # a stop of this watch meanwhile still stops it
        if reader in done and not reader.cancelled():
            return reader.result()
        if self.host.clock.monotonic() >= self.deadline:
            raise self._timeout()
        return "cap"

    async def _read_stream(self, conn: Connection) -> str:
        opened = self.host.limits.opening(
            self._agent_key(), conn.subscribe(self.record.task_id), first=self.checked_at is None
        )
        async with contextlib.aclosing(opened) as events:
            async for ev in events:
                await self._progress(ev)
                status = _stream_status(ev)
                if status is not None:
                    state = status.state
                    self.checked_at = self.heard_at = self.host.clock.now()
                    self.error = ""
                    if self.failing or self.warned:
                        await self._news()
                    await self._saw(state)
                    if is_settled(state) and not is_stale(self.record, status):
                        return "settled"
        return "ended"


def said_of(text: str) -> str:
    """A status message as the lost notice repeats it: its first line, cut to SAID_CHARS."""
    line = text.strip().split("\n", 1)[0]
    return line if len(line) <= SAID_CHARS else line[: SAID_CHARS - 1] + "…"


def status_key(status: StatusValue) -> str:
    """What tells one status message from the next: its id, else its text."""
    if status.message is None:
        return ""
    return status.message.message_id or message_text(status.message)


def _stream_status(ev: TaskEvent) -> StatusValue | None:
    if isinstance(ev, TaskSnapshot | StatusUpdate):
        return ev.status
    return None


def is_stale(record: WatchRecord, status: StatusValue) -> bool:
    """True for the interrupted status the send's stale reply showed (the record's `staleStatus`, written by
    the tool): the question from before the answer, not the outcome the watch waits for."""
    marker = record.extra.get("staleStatus")
    if not isinstance(marker, dict) or marker.get("state") != status.state:
        return False
    message_id = status.message.message_id if status.message is not None else ""
    return marker.get("messageId", "") == message_id and marker.get("timestamp", "") == status.timestamp


# the stream, read the same way at either pace


def _apply_artifact(task: TaskSnapshot, event: ArtifactUpdate) -> TaskSnapshot:
    """A task with a streamed artifact update folded in: a new artifact, a replacement, or appended parts."""
    art = event.artifact
    arts = task.artifacts
    i = next((i for i, a in enumerate(arts) if a.artifact_id == art.artifact_id), None)
    if i is None:
        return replace(task, artifacts=(*arts, art))
    if event.append:
        art = replace(arts[i], parts=arts[i].parts + art.parts)
    return replace(task, artifacts=(*arts[:i], art, *arts[i + 1 :]))


def fold(latest: TaskSnapshot, ev: TaskEvent) -> TaskSnapshot | None:
    """The task after one stream event (`latest` is a value: it stays as it was), None for other events."""
    if isinstance(ev, TaskSnapshot):
        return ev
    if isinstance(ev, StatusUpdate):
        return replace(latest, status=ev.status)
    if isinstance(ev, ArtifactUpdate):
        return _apply_artifact(latest, ev)
    return None


def progress_of(ev: TaskEvent) -> tuple[str, dict[str, Any]] | None:
    """What a stream event says of the work in progress, as a `progress` event's text and data: a status
    update's message, or an artifact update (its name, and its text cut to PROGRESS_CHARS). An artifact
    streamed in many chunks is told at its start and at its last chunk, not chunk by chunk: every one is
    stored and sent to open pages."""
    if isinstance(ev, StatusUpdate):
        return status_progress(ev.status)
    if isinstance(ev, ArtifactUpdate) and (not ev.append or ev.last_chunk):
        art = ev.artifact
        text = "\n".join(p.text for p in art.parts if p.kind == "text").strip()
        data: dict[str, Any] = {"kind": "artifact", "artifactId": art.artifact_id, "name": art.name}
        data["append"], data["lastChunk"] = bool(ev.append), bool(ev.last_chunk)
        data["parts"] = len(art.parts)
        return preview(text, PROGRESS_CHARS), data
    return None


def status_progress(status: StatusValue) -> tuple[str, dict[str, Any]] | None:
    """A status's message as a `progress` event's text and data (None without a text)."""
    text = message_text(status.message) if status.message is not None else ""
    if not text:
        return None
    return preview(text, PROGRESS_CHARS), {"kind": "status", "state": status.state}
