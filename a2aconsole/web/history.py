"""The task event history as pages read it: a chat's log, a task's timeline, questions still open.

Events are stored by the broadcaster (`TaskEvent` rows); these are the queries over them.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from a2aconsole.web.models import TaskEvent

QUESTION = "question"
SETTLING = ("result", "question", "state", "sent")
TERMINAL = frozenset({"completed", "failed", "canceled", "rejected"})


def dom_id(agent: str, task_id: str) -> str:
    """A short, stable HTML id for a task (ids may hold any character)."""
    return "t" + hashlib.sha1(f"{agent}\0{task_id}".encode()).hexdigest()[:12]


def chat_log(target: str, limit: int = 60) -> list[TaskEvent]:
    """The latest events of a chat, oldest first, without echoes (see `compact`)."""
    rows = list(TaskEvent.objects.filter(target=target).order_by("-created_at", "-id")[:limit])
    rows.reverse()
    return compact(rows)


def compact(events: list[TaskEvent]) -> list[TaskEvent]:
    """Drop a bare state change (no text) that the task's next event repeats (a result or question in that
    state): in a chat it reads as the same line twice. A task's own timeline keeps every event."""
    out: list[TaskEvent] = []
    for i, ev in enumerate(events):
        if ev.kind == "state" and not ev.text:
            nxt = next((e for e in events[i + 1 :] if (e.agent, e.task_id) == (ev.agent, ev.task_id)), None)
            if nxt is not None and nxt.kind in ("result", "question") and nxt.state == ev.state:
                continue
        out.append(ev)
    return out


def timeline(agent: str, task_id: str) -> list[TaskEvent]:
    return list(TaskEvent.objects.filter(agent=agent, task_id=task_id).order_by("created_at", "id"))


@dataclass
class TaskState:
    agent: str
    task_id: str
    context_id: str
    target: str
    state: str
    last: TaskEvent


def last_states(pairs: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """The latest known state of each (agent, task id), from the history."""
    out: dict[tuple[str, str], str] = {}
    if not pairs:
        return out
    ids = {t for _, t in pairs}
    for ev in TaskEvent.objects.filter(task_id__in=ids).exclude(state="").order_by("created_at", "id"):
        out[(ev.agent, ev.task_id)] = ev.state
    return out


def open_questions(target: str | None = None, limit: int = 20) -> list[TaskEvent]:
    """Questions whose task has had no state-changing event since: the owner's answer is awaited."""
    qs = TaskEvent.objects.filter(kind=QUESTION)
    if target:
        qs = qs.filter(target=target)
    found: list[TaskEvent] = []
    for q in qs.order_by("-created_at", "-id")[: limit * 3]:
        later = TaskEvent.objects.filter(
            agent=q.agent, task_id=q.task_id, kind__in=SETTLING, created_at__gte=q.created_at
        ).exclude(id=q.id)
        if not later.exclude(kind=QUESTION, text=q.text).exists() and all(
            (f.agent, f.task_id) != (q.agent, q.task_id) for f in found
        ):
            found.append(q)
        if len(found) >= limit:
            break
    return found


def open_question_ids(events: list[TaskEvent]) -> set[int]:
    """Of these events, the questions that are the latest word of their task (answerable inline)."""
    latest: dict[tuple[str, str], TaskEvent] = {}
    for ev in events:
        if ev.kind in SETTLING:
            latest[(ev.agent, ev.task_id)] = ev
    return {ev.id for ev in latest.values() if ev.kind == QUESTION}


def event_files(ev: TaskEvent) -> list[str]:
    data: Any = ev.data or {}
    files = data.get("files") if isinstance(data, dict) else None
    return [f for f in files or [] if isinstance(f, str)]
