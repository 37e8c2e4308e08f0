"""The Tasks page: every task the console has seen, running and finished, from the task index.

Search uses the watch table's syntax (`agent:x state:working source:poll target:y`, `chat:` for `target:`)
plus dates (`after:2026-12-01 before:2026-12-03`, `on:2026-12-02`, in the console's time zone) and free
words matched against the task and context ids and what was said (the message sent, the latest message,
the result). Sorted by a column, paged by keyset (`task_pages`), so a million tasks cost what 50 do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Any
from urllib.parse import urlencode

from asgiref.sync import sync_to_async
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils import timezone

from a2aconsole.web import asked, history, links, live, task_index, task_pages, task_search, task_watch
from a2aconsole.web.models import TaskRecord
from a2aconsole.web.views.watches import KEYS, live_watches

TOKENS = re.compile(r'"([^"]+)"|(\S+)')
PAGE_SIZE = task_pages.PAGE_SIZE
SCAN = task_search.SCAN
PLACES = ("after", "before", "last")  # where a page link points (`task_pages.read_page`)
DATE_KEYS = ("after", "before", "on")
ALIASES = {"chat": "target"}
SORTS = ("started", "updated", "duration", "state", "agent", "chat")  # `task_pages.KEYS`, and duration
DEFAULT_SORT = "-started"
SHOWN_CHARS = 200  # of the latest message or result, in a row
LIST_FIELDS = (
    "run_seconds",
    "agent",
    "task_id",
    "target",
    "context_id",
    "sent_text",
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
        found = [task_search.word_filter(word) for word in self.words]
        bounded = [w for f in found for w in f.bounded]
        if found and all(f.bounded for f in found):  # no term read through an index: the newest tasks only
            newest = qs.order_by("-started_at").values_list("started_at", flat=True)[SCAN - 1 : SCAN]
            if since := newest.first():
                qs = qs.filter(started_at__gte=since)
                terms = ", ".join(f"“{w}”" for w in bounded)
                self.errors.append(
                    f"{terms}: too short or in too many tasks to look up, so looked for among the newest "
                    f"{SCAN:,} tasks only (add before: to look further back)"
                )
        for f in found:
            qs = qs.filter(f.hit)
        return qs


def _cursor(text: str, sort: str, errors: list[str]) -> task_pages.Cursor | None:
    """A page link's cursor; a bad one is said, and the list starts at its first page."""
    if not text:
        return None
    try:
        return task_pages.Cursor.decode(text, sort)
    except task_pages.BadCursor as e:
        errors.append(f"{e}: showing the first page")
        return None


def listing(
    q: str = "",
    sort: str = "",
    where: dict[str, str] | None = None,
    live_rows: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Everything the table shows: one page of the tasks matching `q`, sorted by `sort`, and how to go on.
    `where`: the page asked for (`after` or `before` a cursor, or `last`), else the first. `live_rows`: the
    watch registry's rows (`live_watches`), by which a followed task's row says when its agent last answered
    (without them, as its watch's record last kept it)."""
    where = where or {}
    query = TaskQuery.parse(q)
    qs = query.apply(TaskRecord.objects.only(*LIST_FIELDS))
    errors = list(query.errors)
    if sort and sort.lstrip("-") not in SORTS:
        errors.append(f"cannot sort by {sort!r}: use one of {', '.join(SORTS)} (a leading - reverses)")
        sort = ""
    sort = sort or DEFAULT_SORT
    after = _cursor(where.get("after", ""), sort, errors)
    before = None if after else _cursor(where.get("before", ""), sort, errors)
    matched = task_pages.count(qs)
    state = query.filters.get("state")
    finished = None if state is None else state in task_index.TERMINAL
    last = bool(where.get("last")) and not after
    current = task_pages.read_page(qs, sort, matched, after, before, last=last, finished=finished)
    now = timezone.now()
    today = timezone.localdate(now)
    rows = [_row(r, now, today) for r in current.rows]
    news = task_watch.news_of_tasks({(r["agent"], r["task_id"]) for r in rows if r["running"]}, live_rows)
    away = history.finished_away({(r["agent"], r["task_id"]) for r in rows})
    for r in rows:
        key = (r["agent"], r["task_id"])
        r["news"], r["away"] = news.get(key), key in away
    total = task_pages.count(TaskRecord.objects.all()) if q else matched
    base = _url(q, sort)
    return {
        "rows": rows,
        "page": current,
        "shown": f"{current.start:,}–{current.end:,}" if current.start else f"{len(rows)}",
        "matched": matched,
        "matched_label": task_pages.shown_count(matched),
        "total": total,
        "total_label": task_pages.shown_count(total),
        "first_url": base if current.previous else "",
        "previous_url": f"{base}before={current.previous.encode()}" if current.previous else "",
        "next_url": f"{base}after={current.next.encode()}" if current.next else "",
        "last_url": f"{base}last=1" if current.next else "",
        "q": q,
        "sort": sort,
        "errors": errors,
        "columns": [_column(name, label, q, sort) for name, label in COLUMNS],
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
    return {"label": label, "url": _url(q, nxt), "aria_sort": aria, "active": active}


def _url(q: str, sort: str) -> str:
    """The list's link for a search and sort, ready for a page's `after=`, `before=` or `last=`."""
    sort = "" if sort == DEFAULT_SORT else sort
    params = {k: v for k, v in (("q", q), ("sort", sort)) if v}
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
    where = {k: g[k] for k in PLACES if g.get(k)}
    ctx = await sync_to_async(listing)(g.get("q", ""), g.get("sort", ""), where, await live_watches())
    query = urlencode({"q": ctx["q"], "sort": ctx["sort"], **where})  # as asked: a live table keeps its notices
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
        where = {k: p[k] for k in PLACES if p.get(k)}
        ctx = listing(p.get("q", ""), p.get("sort", ""), where, tab.prepared.get("live"))
        tab.memo["tasks"] = {(r["agent"], r["task_id"]) for r in ctx["rows"]}
        return [render_to_string("web/tasks.html#task-table", {**ctx, "oob": True})]

    def progress_mark(self, params: dict[str, str]) -> Any:
        return task_index.progress_at()
