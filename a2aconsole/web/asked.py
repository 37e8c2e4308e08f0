"""What the owner asked: the first line of the message that started a task, for the lists that show its result
(Tasks, the dashboard's Latest results, the Inbox), so a result is never read without its question."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Q

from a2aconsole.web.models import TaskEvent, TaskRecord

CHARS = 120  # a line of a list, not the message (the task page has it all)


def first_line(text: str, chars: int = CHARS) -> str:
    """The first non-blank line of `text`, cut to `chars` with an ellipsis."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= chars else line[: chars - 1].rstrip() + "…"


def of_tasks(keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """(agent, task id) -> what was asked, from the task index (one query)."""
    keys = {k for k in keys if k[1]}
    if not keys:
        return {}
    match = Q()
    for agent, task_id in keys:
        match |= Q(agent=agent, task_id=task_id)
    rows = TaskRecord.objects.filter(match).values_list("agent", "task_id", "sent_text")
    return {(a, t): first_line(text) for a, t, text in rows if text}


def of_events(events: Iterable[TaskEvent]) -> dict[int, str]:
    """Event id -> what was asked for it: a task's first message, or for an answer without a task (`message`)
    the message sent just before it to that agent in that conversation."""
    events = list(events)
    by_task = of_tasks((ev.agent, ev.task_id) for ev in events)
    out = {ev.id: by_task[(ev.agent, ev.task_id)] for ev in events if (ev.agent, ev.task_id) in by_task}
    for ev in events:
        if ev.task_id or ev.kind != "message":
            continue
        sent = (
            TaskEvent.objects.filter(
                kind="sent", target=ev.target, agent=ev.agent, context_id=ev.context_id, task_id="", id__lt=ev.id
            )
            .order_by("-id")
            .values_list("text", flat=True)
            .first()
        )
        if sent:
            out[ev.id] = first_line(sent)
    return out
