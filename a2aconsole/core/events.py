"""Events: every change to a task or watch, as one record the Django side stores and broadcasts.

Record first, notify second: whoever emits an event has already made the change durable (the file write)
before calling `emit`. Sinks must never raise into the caller; a lost event loses a live update, not data.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, Protocol

# kinds
SENT = "sent"  # a message went out (send)
STATE = "state"  # the task's state changed (data: status text)
PROGRESS = "progress"  # work in progress seen on a stream: a status message or an artifact update (text, data)
QUESTION = "question"  # input-required / auth-required, with the question
RESULT = "result"  # a final result (terminal), with its text
MESSAGE = "message"  # a message-only reply (no task): its text, files and links, like a result
WATCH_ARMED = "watch.armed"  # data: source, watchId
WATCH_UPDATE = "watch.update"  # a watch changed source, failed a check, or saw a state
WATCH_ENDED = "watch.ended"  # data: reason
DELIVERED = "delivered"  # a result reached its chat target
UNDELIVERED = "undelivered"  # a result is kept for later delivery
ERROR = "error"  # a call failed (data: message)


@dataclass
class Event:
    kind: str
    workspace: str
    agent: str
    task_id: str
    at: datetime
    context_id: str = ""
    target: str = ""
    state: str = ""
    text: str = ""
    data: dict[str, Any] = field(default_factory=dict)
    # A stable id for an event that may be emitted again after a crash (a watch's result, its end, its
    # delivery): the history keeps one event per key. Empty: every emission is a new event.
    key: str = ""

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["at"] = self.at.isoformat()
        return d


def watch_event_key(workspace: str, watch_id: str, kind: str) -> str:
    """The key of a watch's once-only event (`Event.key`): short, fixed-length, the same at every emission."""
    digest = hashlib.sha256(f"{workspace}\0{watch_id}".encode()).hexdigest()[:40]
    return f"{kind}:{digest}"


def task_group(agent: str, task_id: str) -> str:
    """Channel-layer group of one task (names must be short ASCII, so ids are hashed)."""
    return "a2a.task." + hashlib.sha1(f"{agent}\0{task_id}".encode()).hexdigest()[:20]


def target_group(target: str) -> str:
    return "a2a.target." + hashlib.sha1(target.encode()).hexdigest()[:20]


ALL_GROUP = "a2a.all"


def groups_for(event: Event) -> list[str]:
    """Every group an event goes to: all tabs (dashboard, watch table), its task, its chat target."""
    groups = [ALL_GROUP]
    if event.task_id:
        groups.append(task_group(event.agent, event.task_id))
    if event.target:
        groups.append(target_group(event.target))
    return groups


class EventSink(Protocol):
    async def emit(self, event: Event) -> None: ...


class NullSink:
    async def emit(self, event: Event) -> None:
        return None


class MemorySink:
    """Keeps events in a list (CLI, tests)."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    async def emit(self, event: Event) -> None:
        self.events.append(event)

    def kinds(self) -> list[str]:
        return [e.kind for e in self.events]
