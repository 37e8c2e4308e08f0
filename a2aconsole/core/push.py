"""The push notification a remote agent sends to `/a2a/push/<watchId>`: its token and the task it is about."""

from __future__ import annotations

import hmac
import json


def push_task_id(body: bytes) -> str | None:
    """The task id a push body is about (`task`, `statusUpdate` or `artifactUpdate`); None when it has none.

    Raises ValueError when the body is not a JSON object.
    """
    data = json.loads(body)
    if not isinstance(data, dict):
        raise ValueError("push body is not a JSON object")
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
