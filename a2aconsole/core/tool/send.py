"""A send from the reply to the hand-over: its watch record written as soon as the reply names the task, the
wait, then the record removed (the result goes back in the answer) or handed to the watches (it goes to the
chat). The "sending" mark on the record: `pending/sending.py`.

A **stale reply** (`stale_status`) is the interrupted status a follow-up's immediate reply still shows from
before the answer (some SDKs, @a2a-js/sdk 1.3, answer so): not the outcome; the record keeps it
(`stale_marker`) so the watch that may take over knows it too (`watches.follower.is_stale`).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import secrets
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from a2aconsole.core import pending
from a2aconsole.core.clock import Clock
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.errors import FileFormatError
from a2aconsole.core.files import Workspace
from a2aconsole.core.pending import WatchRecord, clear_sending, is_mine, mark_sending
from a2aconsole.core.remote import (
    CallLimits,
    Connection,
    ConnectionPool,
    OutgoingMessage,
    StatusValue,
    TaskSnapshot,
    new_id,
)
from a2aconsole.core.results import WORKING_NOTE, is_interrupted, is_settled
from a2aconsole.core.watches import WatchControl

if TYPE_CHECKING:
    from a2aconsole.core.watches import Follower

log = logging.getLogger(__name__)


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
        async with pending.transaction(workspace, durable=False) as tx:
            if tx.watching(record.target, record.agent, record.task_id):
                return None, None
            tx.add(record)
    except FileFormatError as e:
        return None, e
    return record, None


def _adopted(record: WatchRecord) -> bool:
    """Taken by a worker (no longer marked by a send of this process): the worker delivers its outcome."""
    return not is_mine(record)


async def unrecord(workspace: Workspace, record: WatchRecord) -> bool:
    """The wait ended with the outcome: remove the record, unless a worker adopted it (False; it delivers).
    A record already gone (stopped by a cancel or status meanwhile) leaves the outcome to the answer. Not
    fsynced, as its writing: one journal line."""
    try:
        async with pending.transaction(workspace, durable=False) as tx:
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
    async with pending.transaction(workspace) as tx:
        current = tx.find(record.watch_id)
        if current is not None and not is_mine(current):
            return False
        tx.replace(record)
    return True


def watched_in_context(workspace: Workspace, target: str, agent: str, context_id: str) -> WatchRecord | None:
    """The chat's watch of a task of `agent` in `context_id`, if any: an agent may refuse a second task in a
    context whose task is still working, and the send's error then says the result will come by itself."""
    records = pending.read(workspace).records
    return next((r for r in records if (r.target, r.agent, r.context_id) == (target, agent, context_id)), None)


def new_task_note(sent_task_id: str, reply_task_id: str, sent_context_id: str) -> str:
    """What the answer says when the agent took a follow-up (a send naming `sent_task_id`) as a new task, as
    fasta2a does with every message; "" when it continued the task. Such an agent keeps a conversation by its
    context only: a follow-up that named none is told to."""
    if not sent_task_id or reply_task_id == sent_task_id:
        return ""
    note = f"the agent started a new task {reply_task_id} instead of continuing {sent_task_id}"
    if not sent_context_id:
        note += (
            "; this send named no contextId, and the agent may have lost the conversation: to keep it, send the "
            "task's contextId with the answer"
        )
    return note


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


# the reply and the first check


def stale_status(reply: TaskSnapshot, sent: OutgoingMessage, sent_at: datetime) -> StatusValue | None:
    """The reply's status when it is the interrupted status from before a send on an existing task, else None.

    Some SDKs (@a2a-js/sdk 1.3) answer a follow-up with the task as it was before the answer arrived: still
    input-required (or auth-required) with the old question. That is not the outcome. It is recognised by its
    status message coming before the sent message in the task's history, or, without that evidence, by a
    status timestamp not after the send, or by a status with neither (no message, no timestamp) on a task whose
    history has the sent message (a2a-sdk 0.3 over HTTP+JSON). A reply with another task (the agent took the
    follow-up as a new task) is never the old task's status.
    """
    if not sent.task_id or reply.id != sent.task_id or not is_interrupted(reply.state):
        return None
    ids = reply.history_ids
    asked = reply.status.message.message_id if reply.status.message is not None else ""
    if asked and asked in ids and sent.message_id in ids:
        return reply.status if ids.index(asked) < ids.index(sent.message_id) else None
    at = reply.status.at
    if at is not None and at <= sent_at:
        return reply.status
    if reply.status.message is None and at is None and sent.message_id in ids:
        # a2a-sdk 0.3 over HTTP+JSON: its task manager moves the question into the history when the answer comes,
        # and its REST answers carry no status timestamp; a new question comes with its message
        return reply.status
    return None


def stale_marker(stale: StatusValue) -> dict[str, str]:
    """The stale status as a watch record keeps it (`staleStatus`), so the watch does not take it as the outcome."""
    marker = {"state": stale.state}
    if stale.message is not None:
        marker["messageId"] = stale.message.message_id
    if stale.stamp is not None:
        marker["timestamp"] = stale.timestamp
    return marker


async def first_check(
    conn: Connection, task_id: str, clock: Clock, seconds: float
) -> tuple[TaskSnapshot | None, Exception | None]:
    """A send's first GetTask within what is left of its wait (`seconds`), in the send's own task, before any
    follower: a quick task ends with it (a task of its own cost such a send 0.2 ms, tests/bench/send_overhead.py).
    The task (None when the wait ran out first), or the failure."""
    if seconds <= 0:
        return None, None
    try:
        async with clock.timeout(seconds):
            return await conn.get_task(task_id), None
    except TimeoutError:
        return None, None
    except Exception as e:
        return None, e


def told_already(stale: StatusValue | None) -> str:
    """The state a send's history already holds when its first check comes: none, so the first state seen is news
    (an answer's reply already says `working`: without that, nothing told the question was answered until the
    task moved again), or a stale reply's, the old question's, not told again."""
    return stale.state if stale is not None else ""


def done(task: TaskSnapshot, stale: StatusValue | None) -> bool:
    """Settled, and not the stale status a follow-up's reply still showed (the task has to move on first)."""
    return is_settled(task.state) and (stale is None or task.status != stale)


SendEvent = Callable[..., Awaitable[None]]  # (kind, follower, *, state="", text="", data=None): the tool's emit


class SendHost:
    """A follower's host during a send's wait: the tool's pool, settings and clock, and its events."""

    def __init__(self, pool: ConnectionPool, settings: ClientSettings, clock: Clock, emit: SendEvent | None) -> None:
        self.pool = pool
        self.settings = settings
        self.clock = clock
        self._emit = emit  # None: the tool has no event sink

    @functools.cached_property
    def limits(self) -> CallLimits:
        """A send's own calls (its wait's GetTasks) are few: not the watches' limits; made when first asked."""
        return CallLimits()

    async def save_source(self, follower: Follower, source: str) -> bool:
        return True  # the send's record is written by the send

    async def save_heard(self, follower: Follower) -> None:
        return None  # a send's wait is short: the watch that takes it over keeps its news

    def push_answer(self, follower: Follower, error: str, fallback: str) -> None:
        return None  # a send's wait sets up no push: the watch that takes it over does

    async def listed(self, follower: Follower) -> TaskSnapshot | None:
        return None  # a send's follower is no restored watch: it asks GetTask

    async def follow_event(self, follower: Follower, kind: str, **kw: Any) -> None:
        if self._emit is not None:
            await self._emit(kind, follower, **kw)
