"""The Tasks page: every task the console has seen, running and finished, from the task index.

Search uses the watch table's syntax (`agent:x state:working source:poll target:y`, `chat:` for `target:`)
plus dates (`after:2026-12-01 before:2026-12-03`, `on:2026-12-02`, in the console's time zone) and free
words matched against the task and context ids and what was said (the message sent, the latest message,
the result). Sorted by a column, paged, so 10,000 tasks cost what 50 do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Any
from urllib.parse import urlencode

from asgiref.sync import sync_to_async
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils import timezone

from a2aconsole.web import asked, history, links, live, task_index, task_search, task_watch
from a2aconsole.web.models import TaskRecord
from a2aconsole.web.views.watches import KEYS, live_watches

TOKENS = re.compile(r'"([^"]+)"|(\S+)')
PAGE_SIZE = 25  # rows a page shows: what a page costs, whatever the number of tasks
DATE_KEYS = ("after", "before", "on")
ALIASES = {"chat": "target"}
SORTS = {
    "started": "started_at",
    "updated": "updated_at",
    "duration": "duration",
    "state": "state",
    "agent": "agent",
    "chat": "target",
}
DEFAULT_SORT = "-started"
SHOWN_CHARS = 200  # of the latest message or result, in a row
LIST_FIELDS = (
    "run_seconds",
    "agent",
    "task_id",
    "target",
    "context_id",
    "state",
    "source",
    "last_text",
    "result_text",
    "started_at",
    "updated_at",
    "finished_at",
)


@dataclass
class TaskQuery:
    """A parsed search: the watch table's `key:value` filters, dates, free words (quotes keep a phrase)."""

    filters: dict[str, str] = field(default_factory=dict)
    dates: dict[str, date] = field(default_factory=dict)
    words: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @classmethod
    def parse(cls, text: str) -> TaskQuery:
        q = cls()
        # "a quoted phrase" is one term; a stray quote is dropped; an apostrophe is part of its word
        tokens = [phrase or word.strip('"') for phrase, word in TOKENS.findall(text or "")]
        for token in tokens:
            key, sep, value = token.partition(":")
            key = ALIASES.get(key.lower(), key.lower())
            if sep and value and key in KEYS:
                q.filters[key] = value.lower()
            elif sep and key in DATE_KEYS:
                try:
                    q.dates[key] = date.fromisoformat(value)
                except ValueError:
                    q.errors.append(f"{key}: wants a date like 2026-12-03, not {value!r}; it was left out")
            elif token:
                q.words.append(token)
        return q

    def apply(self, qs: QuerySet[TaskRecord]) -> QuerySet[TaskRecord]:
        for key, value in self.filters.items():
            qs = qs.filter(task_search.key_filter(key, value))
        tz = timezone.get_current_timezone()

        def start_of(d: date) -> datetime:
            return datetime.combine(d, time.min, tzinfo=tz)

        if "on" in self.dates:
            d = self.dates["on"]
            qs = qs.filter(started_at__gte=start_of(d), started_at__lt=start_of(d + timedelta(days=1)))
        if "after" in self.dates:
            qs = qs.filter(started_at__gte=start_of(self.dates["after"]))
        if "before" in self.dates:
            qs = qs.filter(started_at__lt=start_of(self.dates["before"]))
        for word in self.words:
            qs = qs.filter(task_search.word_filter(word, within=qs))
        return qs


class ByDuration:
    """Tasks in order of how long they ran (finished: `run_seconds`; running: since `started_at`), for the
    Paginator: two indexed queries merged, each read only as far as the page asked for, so the first
    pages of 10,000 tasks cost what those of 10 do."""

    def __init__(self, qs: QuerySet[TaskRecord], descending: bool, now: datetime) -> None:
        self.qs, self.descending, self.now = qs, descending, now

    def count(self) -> int:
        return self.qs.count()

    def _key(self, r: TaskRecord) -> tuple[float, float, int]:
        seconds = r.run_seconds if r.run_seconds is not None else (self.now - r.started_at).total_seconds()
        key = (seconds, r.started_at.timestamp(), r.id)
        return (-key[0], -key[1], -key[2]) if self.descending else key

    def __getitem__(self, window: slice) -> list[TaskRecord]:
        stop = window.stop or 0
        finished = self.qs.filter(run_seconds__isnull=False)
        running = self.qs.filter(run_seconds__isnull=True)
        # each order follows the task_record_duration index (run_seconds, started_at, id), read one way or back
        if self.descending:  # the longest first: longest finished, or the running one started first
            finished = finished.order_by("-run_seconds", "-started_at", "-id")
            running = running.order_by("started_at", "id")
        else:
            finished = finished.order_by("run_seconds", "started_at", "id")
            running = running.order_by("-started_at", "-id")
        return sorted([*finished[:stop], *running[:stop]], key=self._key)[window]


def _sorted(qs: QuerySet[TaskRecord], sort: str) -> QuerySet[TaskRecord] | ByDuration:
    column = SORTS[sort.lstrip("-")]
    if column == "duration":
        return ByDuration(qs, sort.startswith("-"), timezone.now())
    order = f"-{column}" if sort.startswith("-") else column
    return qs.order_by(order, "-id" if sort.startswith("-") else "id")


def listing(
    q: str = "", sort: str = "", page: str | int = 1, live_rows: dict[str, dict[str, Any]] | None = None
) -> dict[str, Any]:
    """Everything the table shows: one page of the tasks matching `q`, sorted by `sort`, and how to go on.
    `live_rows`: the watch registry's rows (`live_watches`), by which a followed task's row says when its agent
    last answered (without them, as its watch's record last kept it)."""
    query = TaskQuery.parse(q)
    errors = list(query.errors)
    if sort and sort.lstrip("-") not in SORTS:
        errors.append(f"cannot sort by {sort!r}: use one of {', '.join(SORTS)} (a leading - reverses)")
        sort = ""
    sort = sort or DEFAULT_SORT
    qs = _sorted(query.apply(TaskRecord.objects.only(*LIST_FIELDS)), sort)
    pages = Paginator(qs, PAGE_SIZE)
    current = pages.get_page(page)
    now = timezone.now()
    today = timezone.localdate(now)
    rows = [_row(r, now, today) for r in current.object_list]
    news = task_watch.news_of_tasks({(r["agent"], r["task_id"]) for r in rows if r["running"]}, live_rows)
    away = history.finished_away({(r["agent"], r["task_id"]) for r in rows})
    for r in rows:
        key = (r["agent"], r["task_id"])
        r["news"], r["away"] = news.get(key), key in away
    return {
        "rows": rows,
        "page": current,
        "pages": pages,
        "matched": pages.count,
        "total": TaskRecord.objects.count() if q else pages.count,
        "q": q,
        "sort": sort,
        "errors": errors,
        "columns": [_column(name, label, q, sort) for name, label in COLUMNS],
        "page_url": _url(q, sort, None),
    }


COLUMNS = [
    ("state", "State"),
    ("agent", "Agent"),
    (None, "Task"),
    (None, "You asked"),
    ("chat", "Chat"),
    ("started", "Started"),
    ("duration", "Duration"),
    (None, "Last message"),
]


def _column(name: str | None, label: str, q: str, sort: str) -> dict[str, Any]:
    """A header: its label, the link that sorts by it (descending first, then flips), aria-sort."""
    if name is None:
        return {"label": label}
    active = sort.lstrip("-") == name
    descending = sort.startswith("-")
    nxt = name if active and descending else f"-{name}"
    aria = ("descending" if descending else "ascending") if active else "none"
    return {"label": label, "url": _url(q, nxt, None), "aria_sort": aria, "active": active}


def _url(q: str, sort: str, page: int | None) -> str:
    sort = "" if sort == DEFAULT_SORT else sort
    params = {k: v for k, v in (("q", q), ("sort", sort), ("page", page)) if v}
    return "?" + urlencode(params) + ("&" if params else "")


def _clip(text: str, chars: int = SHOWN_CHARS) -> str:
    return text if len(text) <= chars else text[: chars - 1] + "…"


def _row(r: TaskRecord, now: datetime, today: date) -> dict[str, Any]:
    """One row, with its links, times and texts made here: the template only places them (a page of 25 rows
    costs about what 10 do; see tests/bench/tasks_page.py)."""
    end = r.finished_at or now
    finished = r.state in history.TERMINAL
    started = timezone.localtime(r.started_at)
    said = r.result_text if finished or r.state in ("input-required", "auth-required") else ""
    return {
        "agent": r.agent,
        "task_id": r.task_id,
        "target": r.target,
        "state": r.state or "unknown",
        "source": r.source,
        "started_iso": started.isoformat(),
        "started": started.strftime("%H:%M:%S" if started.date() == today else "%Y-%m-%d %H:%M:%S"),
        "started_full": started.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "duration": history.duration((end - r.started_at).total_seconds()),
        "running": not finished,
        "text": _clip(said or r.last_text),
        "asked": asked.first_line(r.sent_text),
        "dom_id": history.dom_id(r.agent, r.task_id),
        "agent_url": links.agent_url(r.agent),
        "task_url": links.task_url(r.agent, r.task_id, r.target),
        "chat_url": links.chat_url(r.target, r.context_id) if r.target else "",
    }


async def page(request: HttpRequest) -> HttpResponse:
    g = request.GET
    ctx = await sync_to_async(listing)(g.get("q", ""), g.get("sort", ""), g.get("page", 1), await live_watches())
    query = urlencode({"q": ctx["q"], "sort": ctx["sort"], "page": ctx["page"].number})
    ctx.update(nav="tasks", title="Tasks", ws_url=f"/ws/console/tasks/?{query}")
    return await sync_to_async(render)(request, "web/tasks.html", ctx)


@live.register("tasks")
class TasksLive(live.LivePage):
    """The Tasks page: its table again for the tab's search, sort and page (25 rows, a few KB)."""

    async def prepare(self, tab: live.Tab) -> None:
        """The registry's rows of the tasks the tab shows and of those just changed (a new row is one), not of
        every watch: the table is rendered again at each change."""
        shown: set[tuple[str, str]] | None = tab.memo.get("tasks")
        changed = tab.changes.tasks if tab.changes is not None else set()
        tab.prepared["live"] = await live_watches(None if shown is None else shown | changed)

    def full(self, tab: live.Tab) -> list[str]:
        """The table again for the tab's search, sort and page."""
        p = tab.params
        ctx = listing(p.get("q", ""), p.get("sort", ""), p.get("page", 1), tab.prepared.get("live"))
        tab.memo["tasks"] = {(r["agent"], r["task_id"]) for r in ctx["rows"]}
        return [render_to_string("web/tasks.html#task-table", {**ctx, "oob": True})]

    def progress_mark(self, params: dict[str, str]) -> Any:
        return task_index.progress_at()
