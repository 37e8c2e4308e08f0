"""The timeline's words for what the console did about a task (a watch began, changed, ended; a result was
delivered): the owner's language, not the event names the core records (`watch.armed`, `watch.ended`)."""

from __future__ import annotations

from typing import Any

FOLLOWING = {"push": "by push", "subscribe": "by its stream", "poll": "by polling"}
ENDED = {
    "settled": "Stopped following: the task is over",
    "question": "Waiting for your answer",
    "stopped": "Stopped following: you stopped the watch",
    "timeout": "Stopped following: it ran past the watch's time limit",
    "agent removed": "Stopped following: the agent was removed",
    "too big": "Stopped following: the agent's answer is too big to read",
    "canceled": "Stopped following: the task was canceled",
    "lost": "Stopped following: the agent no longer knows the task",
}


def describe(kind: str, data: dict[str, Any] | None, target: str = "") -> str:
    """One line for an event of the console's own (any kind but the agent's: sent, state, result, …)."""
    data = data or {}
    how = FOLLOWING.get(str(data.get("source") or ""), "")
    note = str(data.get("note") or "")
    if kind == "watch.armed":
        return f"Following {how}" if how else "Following the task"
    if kind == "watch.update":
        line = f"Now following {how}" if how else "The watch changed"
        return f"{line}: {note}" if note else line
    if kind == "watch.ended":
        reason = str(data.get("reason") or "")
        return ENDED.get(reason, f"Stopped following: {reason}" if reason else "Stopped following")
    if kind == "delivered":
        return f"Result delivered to the chat {target}" if target else "Result delivered"
    if kind == "undelivered":
        attempt = data.get("attempt")
        tried = f" (attempt {attempt})" if attempt else ""
        return f"Result not delivered yet{tried}: kept, and tried again"
    return kind.replace(".", " ").replace("_", " ").capitalize()
