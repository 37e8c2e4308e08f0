"""The "sending" mark on a watch record: a send that waits for its task, written before the wait.

The remote task exists as soon as the agent returns its id; if the process died during `WaitSeconds` with
nothing on disk, the result would be lost. So `send` writes the watch record as soon as the reply names the
task, before any wait, marked as sending (state "sending", who sends, until when). While that sender lives,
no worker follows the record: the send's own wait decides whether the result goes back in the answer (the
record is removed) or to the chat (the record becomes a plain watch). A record whose sender died (same host,
its process gone, or this process restarted) or whose time ran out is an orphan: a worker adopts it and
follows the task to a delivery in the chat.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import secrets
import socket
import uuid
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from a2aconsole.core.errors import FileFormatError
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.pending.records import WatchRecord
from a2aconsole.core.remote.values import new_id
from a2aconsole.core.results import WORKING_NOTE
from a2aconsole.core.watches.control import WatchControl

if TYPE_CHECKING:
    from a2aconsole.core.watches.follower import Follower

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


def _adopted(record: WatchRecord) -> bool:
    """Taken by a worker (no longer marked by a send of this process): the worker delivers its outcome."""
    return not is_mine(record)


async def unrecord(workspace: Workspace, record: WatchRecord) -> bool:
    """The wait ended with the outcome: remove the record, unless a worker adopted it (False; it delivers).
    A record already gone (stopped by a cancel or status meanwhile) leaves the outcome to the answer. Not
    fsynced, as its writing: one journal line."""
    try:
        async with workspace.pending_tx(durable=False) as tx:
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
