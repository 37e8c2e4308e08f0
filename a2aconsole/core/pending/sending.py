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

import functools
import os
import socket
import uuid
from datetime import datetime, timedelta

from a2aconsole.core.pending.records import WatchRecord

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
