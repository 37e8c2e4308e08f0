"""The task event history as pages read it: a chat's log, a task's timeline, questions still open.

Events are stored by the broadcaster (`TaskEvent` rows); these are the queries over them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from typing import Any

from django.db.models import Max

from a2aconsole.core.events import WATCH_ENDED
from a2aconsole.core.watches import AWAY
from a2aconsole.web.models import TaskEvent

QUESTION = "question"
SETTLING = ("result", "question", "state", "sent")
# finished: the task's own terminal states, and "lost" (its agent no longer knows it: nothing more comes)
TERMINAL = frozenset({"completed", "failed", "canceled", "rejected", "lost"})


def dom_id(agent: str, task_id: str) -> str:
    """A short, stable HTML id for a task (ids may hold any character)."""
    return "t" + hashlib.sha1(f"{agent}\0{task_id}".encode()).hexdigest()[:12]


def timeline(agent: str, task_id: str) -> list[TaskEvent]:
    return list(TaskEvent.objects.filter(agent=agent, task_id=task_id).order_by("created_at", "id"))


def latest_events(
    pairs: list[tuple[str, str]] | set[tuple[str, str]], kinds: tuple[str, ...] = (), states_only: bool = False
) -> dict[tuple[str, str], TaskEvent]:
    """The latest event of each (agent, task id), of `kinds` (any when empty) or with a state: one grouped query
    for the ids, one for the rows."""
    wanted = set(pairs)
    if not wanted:
        return {}
    qs = TaskEvent.objects.filter(task_id__in={t for _, t in wanted})
    if kinds:
        qs = qs.filter(kind__in=kinds)
    if states_only:
        qs = qs.exclude(state="")
    ids = qs.values("agent", "task_id").annotate(last=Max("id")).values_list("agent", "task_id", "last")
    last_ids = [i for a, t, i in ids if (a, t) in wanted]
    return {(ev.agent, ev.task_id): ev for ev in TaskEvent.objects.filter(id__in=last_ids)}


def resendable(agent: str, task_id: str, finished: bool) -> bool:
    """Whether a task page offers Re-send (a new task with the same parts, `conversation.resend`): the task is
    over (lost too: its agent forgot it) and the history keeps the message that started it."""
    return finished and TaskEvent.objects.filter(agent=agent, task_id=task_id, kind="sent").exists()


def open_questions(target: str | None = None, limit: int = 20) -> list[TaskEvent]:
    """Questions whose task has had no state-changing event since: the owner's answer is awaited. Two queries:
    the latest questions, then every settling event of their tasks."""
    qs = TaskEvent.objects.filter(kind=QUESTION)
    if target:
        qs = qs.filter(target=target)
    candidates = list(qs.order_by("-created_at", "-id")[: limit * 3])
    later: dict[tuple[str, str], list[tuple[Any, int, str, str]]] = {}
    rows = TaskEvent.objects.filter(task_id__in={q.task_id for q in candidates}, kind__in=SETTLING).values_list(
        "agent", "task_id", "created_at", "id", "kind", "text"
    )
    for agent, task_id, at, pk, kind, text in rows:
        later.setdefault((agent, task_id), []).append((at, pk, kind, text))
    found: list[TaskEvent] = []
    for q in candidates:
        key = (q.agent, q.task_id)
        if any(f.agent == q.agent and f.task_id == q.task_id for f in found):
            continue
        settled = any(
            at >= q.created_at and pk != q.id and not (kind == QUESTION and text == q.text)
            for at, pk, kind, text in later.get(key, [])
        )
        if not settled:
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


def finished_away(tasks: Collection[tuple[str, str]]) -> set[tuple[str, str]]:
    """Which of these (agent, task id) settled while no console followed them: a watch of theirs ended with `away`
    (`core.watches.Follower.away`: restored from the file, the agent's first answer since already settled). One
    query for a page of rows."""
    if not tasks:
        return set()
    ids = {task_id for _, task_id in tasks}
    ended = TaskEvent.objects.filter(kind=WATCH_ENDED, task_id__in=ids, **{f"data__{AWAY}": True})
    return {key for key in ended.values_list("agent", "task_id") if key in tasks}


def duration(seconds: float) -> str:
    """How long a task ran, as lists show it: 45s, 3m 05s, 2h 10m, 1d 04h."""
    s = int(max(seconds, 0))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m {s % 60:02d}s"
    if s < 86400:
        return f"{s // 3600}h {s % 3600 // 60:02d}m"
    return f"{s // 86400}d {s % 86400 // 3600:02d}h"
