"""A tool call as an agent host posts it: parsed and checked before anything reaches an agent.

A bad body is refused with the field at fault and what is wrong with it, so the host (or its model)
can fix the call; nothing is sent anywhere until the whole body is valid.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ACTIONS = ("agents", "send", "status", "cancel")
FIELDS = ("action", "agent", "message", "contextId", "taskId", "files", "hops")
MAX_HOPS = 1000
MAX_FILES = 50
MAX_MESSAGE = 1_000_000  # characters
MAX_REF = 200  # characters of a contextId or taskId


class BadCall(Exception):
    """A body the API refuses: `field` names the member (None: the body itself), `problem` says why."""

    def __init__(self, field: str | None, problem: str) -> None:
        super().__init__(problem)
        self.field = field
        self.problem = problem

    def to_json(self) -> dict[str, Any]:
        return {"error": self.problem, "field": self.field}


@dataclass
class ToolCall:
    action: str
    args: dict[str, Any] = field(default_factory=dict)
    hops: int | None = None


def _string(data: dict[str, Any], name: str, *, required: bool = False, limit: int = 200) -> str | None:
    value = data.get(name)
    if value is None:
        if required:
            raise BadCall(name, f"{name} is required for this action")
        return None
    if not isinstance(value, str):
        raise BadCall(name, f"{name} must be a string")
    if required and not value.strip():
        raise BadCall(name, f"{name} must not be empty")
    if len(value) > limit:
        raise BadCall(name, f"{name} must be at most {limit} characters")
    return value


def parse_call(data: object) -> ToolCall:
    """The call in `data` (decoded JSON), or BadCall naming the first problem."""
    if not isinstance(data, dict):
        raise BadCall(None, "the body must be a JSON object")
    unknown = sorted(k for k in data if k not in FIELDS)
    if unknown:
        raise BadCall(unknown[0], f"unknown field {unknown[0]!r}; allowed: {', '.join(FIELDS)}")
    action = data.get("action")
    if action is None:
        raise BadCall("action", "action is required: one of " + ", ".join(ACTIONS))
    if action not in ACTIONS:
        raise BadCall("action", "action must be one of " + ", ".join(ACTIONS))

    args: dict[str, Any] = {}
    needs_agent = action != "agents"
    agent = _string(data, "agent", required=needs_agent, limit=40)
    message = _string(data, "message", required=action == "send", limit=MAX_MESSAGE)
    context_id = _string(data, "contextId", limit=MAX_REF)
    task_id = _string(data, "taskId", required=action in ("status", "cancel"), limit=MAX_REF)
    files = data.get("files")
    if files is not None:
        if not isinstance(files, list) or not all(isinstance(f, str) and f.strip() for f in files):
            raise BadCall("files", "files must be a list of workspace paths (non-empty strings)")
        if len(files) > MAX_FILES:
            raise BadCall("files", f"files must list at most {MAX_FILES} paths")
    hops = data.get("hops")
    if hops is not None and (isinstance(hops, bool) or not isinstance(hops, int) or not 0 <= hops <= MAX_HOPS):
        raise BadCall("hops", f"hops must be a whole number from 0 to {MAX_HOPS}")

    for name, value in (
        ("agent", agent),
        ("message", message),
        ("contextId", context_id),
        ("taskId", task_id),
        ("files", files),
    ):
        if value is not None:
            args[name] = value
    return ToolCall(action=action, args=args, hops=hops)
