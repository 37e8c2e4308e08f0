"""A chat read as a chat: its conversations (one thread per A2A context), and a page of a thread's messages
with each task's bookkeeping (watch armed, states passed, ended, delivered) folded into one status line.

Queries over `TaskEvent` rows, bounded: a page of messages, the most recent threads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Count, Max, OuterRef, Subquery

from a2aconsole.web import event_words, history, task_index
from a2aconsole.web.models import TaskEvent

PAGE_EVENTS = 60  # events read for one page of a conversation
THREADS = 30  # conversations listed
BOOKKEEPING = frozenset({"watch.armed", "watch.update", "watch.ended", "delivered", "undelivered", "progress"})


@dataclass
class Thread:
    """One conversation of a chat: an A2A context, who it is with, how it began, when it last moved."""

    context_id: str
    agent: str
    title: str
    last: datetime
    count: int


@dataclass
class StatusLine:
    """The bookkeeping of one task in a conversation, as one small line: states passed, how it was watched,
    how the watch ended, whether the result reached the chat."""

    agent: str
    task_id: str
    target: str
    events: list[TaskEvent] = field(default_factory=list)
    progress: dict[str, Any] | None = None  # the running task's progress line (`task_index.progress_view`)
    record: Any = None  # the task's row of the Tasks page (`task_index.rows_of`): its state and times
    asked: bool = False  # the message that started it is on the page (what Re-send sends again)
    context_id: str = ""

    kind = "status-line"

    @property
    def state(self) -> str:
        return (self.record.state if self.record is not None else "") or "unknown"

    @property
    def finished(self) -> bool:
        return self.state in history.TERMINAL

    @property
    def started_at(self) -> datetime | None:
        return self.record.started_at if self.record is not None else None

    @property
    def took(self) -> str:
        """How long the finished task ran ("" while it runs: the card's clock ticks in the browser)."""
        r = self.record
        if r is None or not self.finished or r.started_at is None:
            return ""
        return history.duration(((r.finished_at or r.updated_at) - r.started_at).total_seconds())

    @property
    def dom_id(self) -> str:
        return history.dom_id(self.agent, self.task_id)

    def add(self, ev: TaskEvent) -> None:
        self.events.append(ev)

    @property
    def parts(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        states: list[str] = []
        for ev in self.events:
            data = ev.data if isinstance(ev.data, dict) else {}
            if ev.kind == "state":
                if not states or states[-1] != ev.state:
                    states.append(ev.state)
                continue
            if ev.kind == "progress":  # shown as the line's progress, updated in place, not one part each
                continue
            line = event_words.describe(
                ev.kind, data, state=ev.state or ""
            )  # the timeline's words, as a part of one line
            text = line[:1].lower() + line[1:]
            out.append({"text": text, "at": ev.created_at})
        if states and states != [self.state]:  # the badge says it already when it is the only one
            out.insert(0, {"text": " → ".join(states), "at": self.events[0].created_at})
        return out


def is_bookkeeping(ev: TaskEvent) -> bool:
    """Events that say how a task is followed rather than what was said: folded into status lines."""
    return ev.kind in BOOKKEEPING or (ev.kind == "state" and not ev.text)


def fold(events: list[TaskEvent], records: dict[tuple[str, str], Any] | None = None) -> list[Any]:
    """Messages in order, each task's bookkeeping gathered into one StatusLine (the task's card) placed after the
    task's first message (or where its first bookkeeping event was, when no message of it is on the page), with
    the task's state, times and progress line (`records`: `task_index.rows_of` rows)."""
    items: list[Any] = []
    lines: dict[tuple[str, str], StatusLine] = {}
    for ev in events:
        key = (ev.agent, ev.task_id)
        if ev.task_id and is_bookkeeping(ev):
            line = lines.get(key)
            if line is None:
                line = lines[key] = StatusLine(ev.agent, ev.task_id, ev.target, context_id=ev.context_id)
                items.append(line)
            line.add(ev)
            line.context_id = line.context_id or ev.context_id
            continue
        items.append(ev)
        if ev.task_id and key not in lines:
            lines[key] = StatusLine(ev.agent, ev.task_id, ev.target, context_id=ev.context_id)
            items.append(lines[key])
        if ev.task_id and ev.kind == "sent":
            lines[key].asked = True
            lines[key].context_id = lines[key].context_id or ev.context_id
    for key, line in lines.items():
        line.record = (records or {}).get(key)
        line.progress = task_index.progress_view(line.record)
    return [i for i in items if not isinstance(i, StatusLine) or i.events or i.record is not None]


@dataclass
class Page:
    """A page of a conversation: its items, the events they came from, and where older ones start."""

    items: list[Any]
    events: list[TaskEvent]
    older: int | None  # the `before` of the previous page, None at the start


def page(target: str, context_id: str = "", before: int | None = None) -> Page:
    """The latest PAGE_EVENTS events of a chat (of one conversation when `context_id`), before event
    `before` when given, oldest first and folded."""
    qs = TaskEvent.objects.filter(target=target)
    if context_id:
        qs = qs.filter(context_id=context_id)
    if before:
        qs = qs.filter(id__lt=before)
    rows = list(qs.order_by("-id")[: PAGE_EVENTS + 1])
    more = len(rows) > PAGE_EVENTS
    rows = rows[:PAGE_EVENTS]
    rows.reverse()
    records = task_index.rows_of({(ev.agent, ev.task_id) for ev in rows if ev.task_id}, times=True)
    return Page(items=fold(rows, records), events=rows, older=rows[0].id if more and rows else None)


def threads(target: str, limit: int = THREADS) -> list[Thread]:
    """The chat's conversations, most recently active first, titled by their first message."""
    first_sent = TaskEvent.objects.filter(target=target, context_id=OuterRef("context_id"), kind="sent").order_by("id")
    rows = (
        TaskEvent.objects.filter(target=target)
        .exclude(context_id="")
        .values("context_id")
        .annotate(
            last=Max("created_at"),
            count=Count("id"),
            title=Subquery(first_sent.values("text")[:1]),
            agent=Max("agent"),
        )
        .order_by("-last")[:limit]
    )
    return [
        Thread(r["context_id"], r["agent"], (r["title"] or "").strip() or r["context_id"], r["last"], r["count"])
        for r in rows
    ]


@dataclass
class ThreadMark:
    """Where the all-conversations view passes from one conversation to another."""

    context_id: str
    title: str

    kind = "thread-mark"


def mark_threads(items: list[Any], titles: dict[str, str]) -> list[Any]:
    """The items with a ThreadMark before each run of one conversation's messages (all-conversations view)."""
    out: list[Any] = []
    current: str | None = None
    for it in items:
        ctx = it.context_id
        if ctx and ctx != current:
            out.append(ThreadMark(ctx, titles.get(ctx, ctx)))
            current = ctx
        out.append(it)
    return out
