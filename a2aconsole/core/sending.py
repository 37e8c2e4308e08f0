"""The "sending" mark on a watch record: a send that waits for its task, written before the wait.

The remote task exists as soon as the agent returns its id; if the process died during `WaitSeconds`
with nothing on disk, the result would be lost. So `send` writes the watch record before it waits (a task its
first GetTask finds settled needs none: `RecordWriter`), marked as sending (state "sending", who sends, until
when). While that sender lives, no worker follows the record:
the send's own wait decides whether the result goes back in the answer (the record is removed) or to the
chat (the record becomes a plain watch). A record whose sender died (same host, its process gone, or this
process restarted) or whose time ran out is an orphan: a worker adopts it and follows the task to a
delivery in the chat.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import secrets
import socket
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from .errors import FileFormatError
from .pending import WatchRecord
from .pending_store import STORE
from .results import WORKING_NOTE
from .snapshots import new_id
from .watch_control import WatchControl
from .workspace import Workspace

if TYPE_CHECKING:
    from .clock import Clock
    from .following import Follower

log = logging.getLogger(__name__)

SENDING = "sending"
GRACE_SECONDS = 30.0  # past the wait, the time a live sender needs to settle its record
_INSTANCE = uuid.uuid4().hex  # this process, distinct from an earlier one that had the same pid


@functools.cache
def _host() -> str:
    """This machine's name, asked once (a system call on every send otherwise)."""
    return socket.gethostname()


def mark_sending(record: WatchRecord, now: datetime, wait_seconds: float) -> None:
    """Mark `record` as the watch of a send that waits up to `wait_seconds` from `now`, in this process."""
    until = now + timedelta(seconds=wait_seconds + GRACE_SECONDS)
    record.state = SENDING
    record.extra["sender"] = {
        "host": _host(),
        "pid": os.getpid(),
        "instance": _INSTANCE,
        "until": until.isoformat().replace("+00:00", "Z"),
    }


def clear_sending(record: WatchRecord, state: str | None) -> None:
    """The send's wait is over (or its sender is gone): the record is a plain watch whose task is in `state`
    (None: not known yet)."""
    record.extra.pop("sender", None)
    record.state = state or ""


def is_sending(record: WatchRecord) -> bool:
    return record.state == SENDING


def is_mine(record: WatchRecord) -> bool:
    """Marked by a send of this very process."""
    sender = record.extra.get("sender")
    return isinstance(sender, dict) and sender.get("instance") == _INSTANCE


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def sender_alive(record: WatchRecord, now: datetime) -> bool:
    """Whether the send that marked `record` may still be waiting: until its time runs out, this process's own
    send or another process's (a CLI send, a second web process). A sender on this host whose process is gone,
    or an earlier run of this process, is dead at once."""
    sender = record.extra.get("sender")
    if not isinstance(sender, dict):
        return False
    try:
        until = datetime.fromisoformat(str(sender.get("until")))
    except ValueError:
        return False
    if until.tzinfo is None or now >= until:
        return False
    if sender.get("instance") == _INSTANCE:
        return True
    pid = sender.get("pid")
    if sender.get("host") == _host() and isinstance(pid, int):
        return pid != os.getpid() and _pid_alive(pid)
    return True


def new_record(target: str, agent: str, task_id: str, context_id: str, source: str, now: datetime) -> WatchRecord:
    """A send's watch record (a push token for a push watch)."""
    return WatchRecord(
        watch_id=new_id(),
        target=target,
        agent=agent,
        task_id=task_id,
        context_id=context_id,
        push_token=secrets.token_urlsafe(32) if source == "push" else None,
        started_at=now.isoformat().replace("+00:00", "Z"),
        source=source,
    )


async def write_sending(
    workspace: Workspace, record: WatchRecord, now: datetime, wait_seconds: float
) -> tuple[WatchRecord | None, FileFormatError | None]:
    """Write the send's watch record, marked as sending, before the wait. A chat that already watches the task
    keeps its watch (None); a malformed pending.json is returned, to be told if the wait runs out."""
    mark_sending(record, now, wait_seconds)
    try:
        # not fsynced: it is there for this process dying during the wait (the page cache keeps it); a machine
        # crash in that window loses it as before. The watch it may become is written durably.
        async with workspace.pending_tx(durable=False) as tx:
            if tx.watching(record.target, record.agent, record.task_id):
                return None, None
            tx.add(record)
    except FileFormatError as e:
        return None, e
    return record, None


def write_sending_now(workspace: Workspace, record: WatchRecord, now: datetime, wait_seconds: float) -> bool | None:
    """`write_sending` in the usual case, without waiting and without a transaction: the lock free and the files
    as this process left them, one journal line appended (`PendingStore.add_new`). True: written; False: the chat
    already watches the task; None: not done (the lock is held, the files moved): `write_sending` does it."""
    fd = workspace.lock.try_hold()
    if fd is None:
        return None
    try:
        mark_sending(record, now, wait_seconds)
        return STORE.add_new(workspace, record)
    finally:
        workspace.lock.release(fd)


ASKED_WAIT_SECONDS = 0.05  # at most this long after the send's reply a record waits to be written


class RecordWriter:
    """Writes a send's record (`write_sending`) once: when the follower's first question of its own is written to
    the agent (`asked`, the callback of `client.telling_when_sent`), when ASKED_WAIT_SECONDS passed, or when the
    send wants it (`written`), whichever comes first; or never (`dropped`), when the send's first GetTask found
    the task settled before any of these. Most sends to a quick agent end so: a record written and removed
    around that GetTask cost about 0.3 ms of a 4 ms send (the JS agent answers it before the write is done), for
    a window a crash could hit that is no longer than the send's own round trip, during which a crash loses
    the task just as one before the send's reply would. That window is bounded: past ASKED_WAIT_SECONDS (a slow
    GetTask) the record is written. Written when the follower asks, the file work overlaps the agent's. Started
    from a callback, not a task of its own waiting on an event; in the usual case (`write_sending_now`) done in
    that callback, without a task or a transaction.

    `record` may be a function that makes it: called once, when the record is first needed (`record`, or the
    write), so a send that never needs one does not make it either (a record, its follower and the write's
    timer were a tenth of the tool's own time in a send to a quick agent)."""

    def __init__(
        self, workspace: Workspace, record: WatchRecord | Callable[[], WatchRecord], clock: Clock, wait_seconds: float
    ) -> None:
        self._workspace, self._clock, self._wait_seconds = workspace, clock, wait_seconds
        self._record, self._make = (record, None) if isinstance(record, WatchRecord) else (None, record)
        loop = asyncio.get_running_loop()
        self._timer: asyncio.Handle = loop.call_later(ASKED_WAIT_SECONDS, self.asked)
        self._started = False
        self._outcome: tuple[WatchRecord | None, FileFormatError | None] | None = None
        self._failure: Exception | None = None
        self._task: asyncio.Task[tuple[WatchRecord | None, FileFormatError | None]] | None = None

    @property
    def record(self) -> WatchRecord:
        """The record (made now, if it was not yet)."""
        if self._record is None:
            assert self._make is not None
            self._record, self._make = self._make(), None
        return self._record

    def asked(self) -> None:
        """Start the write now: on the loop's next turn, after the question is on its way (a call after the
        first does nothing)."""
        if not self._started:
            self._started = True
            self._timer.cancel()
            self._timer = asyncio.get_running_loop().call_soon(self._write)

    def _write(self) -> None:
        workspace, record, wait_seconds = self._workspace, self.record, self._wait_seconds
        now = self._clock.now()
        try:
            done = write_sending_now(workspace, record, now, wait_seconds)
        except Exception as e:  # told by `written`, as the task's would be
            self._failure = e
            return
        if done is None:
            self._task = asyncio.ensure_future(write_sending(workspace, record, now, wait_seconds))
        else:
            self._outcome = (record if done else None), None

    def dropped(self) -> bool:
        """Give up the write if it has not begun (True: nothing of the record was or will be written); False
        when it has (`written` says how it went)."""
        if self._outcome is not None or self._failure is not None or self._task is not None:
            return False
        self._started = True
        self._timer.cancel()
        return True

    async def written(self) -> tuple[WatchRecord | None, FileFormatError | None]:
        """`write_sending`'s outcome, the write started now if it was not yet."""
        if self._outcome is None and self._failure is None and self._task is None:  # not written yet
            self._started = True
            self._timer.cancel()
            self._write()
        if self._failure is not None:
            raise self._failure
        if self._outcome is not None:
            return self._outcome
        assert self._task is not None
        return await self._task


def _adopted(record: WatchRecord) -> bool:
    """Taken by a worker (no longer marked by a send of this process): the worker delivers its outcome."""
    return not is_mine(record)


async def unrecord(workspace: Workspace, record: WatchRecord) -> bool:
    """The wait ended with the outcome: remove the record, unless a worker adopted it (False; it delivers).
    A record already gone (stopped by a cancel or status meanwhile) leaves the outcome to the answer. The
    usual case (the record is the journal line this process wrote, and nothing else wrote since) is one line
    appended (`PendingStore.remove_added`); else a transaction."""
    try:
        fd = workspace.lock.try_hold()  # the lock is mostly free: taken without the queue of those who wait
        if fd is not None:
            try:
                removed = STORE.remove_added(workspace, record.watch_id, _adopted)
            finally:
                workspace.lock.release(fd)
        else:
            async with workspace.lock.ahold():
                removed = STORE.remove_added(workspace, record.watch_id, _adopted)
        if removed is not None:
            return removed
        async with workspace.pending_tx(durable=False) as tx:  # back after a machine crash: delivered again
            current = tx.find(record.watch_id)
            if current is not None and _adopted(current):
                return False
            tx.remove(record.watch_id)
    except FileFormatError:
        log.warning("pending.json is malformed; the record of watch %s stays", record.watch_id)
    return True


async def become_watch(workspace: Workspace, record: WatchRecord, state: str) -> bool:
    """The wait ran out: the record becomes a plain watch, durably. False when a worker adopted it meanwhile
    (it follows the task); raises FileFormatError for a malformed pending.json."""
    clear_sending(record, state)
    async with workspace.pending_tx() as tx:
        current = tx.find(record.watch_id)
        if current is not None and not is_mine(current):
            return False
        tx.replace(record)
    return True


def watched_in_context(workspace: Workspace, target: str, agent: str, context_id: str) -> WatchRecord | None:
    """The chat's watch of a task of `agent` in `context_id`, if any: an agent may refuse a second task in a
    context whose task is still working, and the send's error then says the result will come by itself."""
    records = workspace.read_pending().records
    return next((r for r in records if (r.target, r.agent, r.context_id) == (target, agent, context_id)), None)


def working_answer(agent: str, task_id: str, context_id: str) -> dict[str, Any]:
    """The send's answer for a task a watch follows: the result comes to the chat."""
    return {"state": "working", "agent": agent, "taskId": task_id, "contextId": context_id, "note": WORKING_NOTE}


def unwatchable_answer(e: FileFormatError, agent: str, task_id: str, context_id: str) -> dict[str, Any]:
    return {
        "error": f'{e}. Task {task_id} of "{agent}" runs on but cannot be watched until the file is fixed; '
        "check it later with action=status",
        "taskId": task_id,
        "contextId": context_id,
        "state": "working",
    }


def drop_runner(runner: asyncio.Future[Any] | None) -> None:
    """Stop a send's follower no watch took over (the watch that arms the record checks the task itself)."""
    if runner is None:
        return
    if runner.done():
        if not runner.cancelled():
            runner.exception()  # retrieved: never logged as "never retrieved"
    else:
        runner.cancel()


async def hand_over(
    watches: WatchControl,
    workspace: Workspace,
    state: str,
    record: WatchRecord | None,
    follower: Follower,
    runner: asyncio.Future[Any] | None,
) -> dict[str, Any]:
    """The wait ran out (task in `state`): the sending record becomes a plain watch (written first); the watch
    registry of this process takes the follower over as it is (`adopt`: no second card fetch, no check
    missed), else the watch control arms the record. `record` None: the chat already watched this task."""
    rec = follower.record
    try:
        if record is None or not await become_watch(workspace, record, state):
            drop_runner(runner)
            return working_answer(rec.agent, rec.task_id, rec.context_id)
    except FileFormatError as e:
        drop_runner(runner)
        return unwatchable_answer(e, rec.agent, rec.task_id, rec.context_id)
    adopt = getattr(watches, "adopt", None)
    try:
        if runner is None or runner.done() or adopt is None or not await adopt(workspace, record, follower, runner):
            drop_runner(runner)
            await watches.arm(workspace, record)
    except Exception:
        log.exception("arming watch %s failed; the record stays in pending.json", record.watch_id)
    return working_answer(rec.agent, rec.task_id, rec.context_id)
