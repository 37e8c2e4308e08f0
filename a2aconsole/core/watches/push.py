"""Push notifications: what a remote agent sends to `/a2a/push/<watchId>` (its token, the task it is about),
and removing the agent's push config once the watch ends."""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from a2aconsole.core.pending import WatchRecord
    from a2aconsole.core.remote import Connection

log = logging.getLogger(__name__)


def push_json(body: bytes) -> dict[str, Any]:
    """A push body read once, for its task id (`push_task_id`) and its news (`remote.push_event`). Raises ValueError
    (or UnicodeDecodeError, RecursionError) when it is not a JSON object."""
    data = json.loads(body)
    if not isinstance(data, dict):
        raise ValueError("push body is not a JSON object")
    return data


def push_task_id(data: dict[str, Any]) -> str | None:
    """The task id a push body (`push_json`) is about (`task`, `statusUpdate` or `artifactUpdate`); None when it
    has none."""
    task = data.get("task")
    if isinstance(task, dict) and isinstance(task.get("id"), str):
        return task["id"]
    for key in ("statusUpdate", "artifactUpdate", "status_update", "artifact_update"):
        ev = data.get(key)
        if isinstance(ev, dict):
            tid = ev.get("taskId", ev.get("task_id"))
            return tid if isinstance(tid, str) else None
    tid = data.get("taskId", data.get("id"))
    return tid if isinstance(tid, str) else None


def token_matches(expected: str | None, given: str | None) -> bool:
    """Constant-time comparison; no token on either side never matches."""
    if not expected or not given:
        return False
    return hmac.compare_digest(expected.encode(), given.encode())


PUSH_REMOVAL_TIMEOUT = 10.0


async def remove_push_config(conn: Connection, record: WatchRecord, timeout: float = PUSH_REMOVAL_TIMEOUT) -> bool:
    """Ask the agent to forget the push config of an ended watch, so it stops pushing to a removed watch.

    Best effort, bounded by `timeout`: the agent may be gone or may have dropped the config with the task.
    A failure is logged by agent, task and kind only (an agent's error text may echo its key); never raises.
    """
    try:
        await asyncio.wait_for(conn.delete_push(record.task_id, record.watch_id), timeout)
    except asyncio.CancelledError:
        raise
    except Exception as e:
        kind = getattr(e, "kind", type(e).__name__)
        log.warning(
            'push config of watch %s (agent "%s", task %s) not removed: %s',
            record.watch_id,
            record.agent,
            record.task_id,
            kind,
        )
        return False
    return True


async def end_push(conn: Connection, stopped: WatchRecord | None) -> None:
    """A watch ended here (a status that found its task settled, a cancel): a push watch's agent must stop pushing
    to it (bounded, best effort)."""
    if stopped is not None and stopped.source == "push":
        await remove_push_config(conn, stopped)
