"""The watch table: `pending.json` of every workspace, filtered by one search box, with per-row actions.

Search syntax: `agent:x state:working source:poll target:y` plus free text matched against task and
context ids. Actions go through the tool (`status`, `cancel`, `unwatch`, `send` again) and show its answer inline.
"""

from __future__ import annotations

import heapq
import json
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import islice, repeat
from typing import Any

from asgiref.sync import sync_to_async
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from a2aconsole.core.files import Workspace
from a2aconsole.core.pending import WatchRecord
from a2aconsole.core.tool import CANCEL_REQUESTED, age
from a2aconsole.core.watches import news_of
from a2aconsole.web import history, links, live, pending_cache, scope, task_index
from a2aconsole.web.paging import WATCH_PAGE_SIZE
from a2aconsole.web.process.runtime import loop_runtime

log = logging.getLogger(__name__)
KEYS = ("agent", "state", "source", "target")


@dataclass
class Query:
    """A parsed search: `key:value` filters plus free words."""

    filters: dict[str, str] = field(default_factory=dict)
    words: list[str] = field(default_factory=list)

    @classmethod
    def parse(cls, text: str) -> Query:
        q = cls()
        for token in (text or "").split():
            key, sep, value = token.partition(":")
            if sep and key.lower() in KEYS and value:
                q.filters[key.lower()] = value.lower()
            else:
                q.words.append(token.lower())
        return q

    def matching_records(self, records: list[WatchRecord]) -> list[WatchRecord]:
        """The records `matches` would keep, judged on what a record holds (agent, target, ids): no state or source
        filter here. This is on the path of every page of the table, so no row dict is made, and each term is one
        pass over the list (10,000 records: 0.5 ms; record by record it was 2 ms). Order kept."""
        for k, v in self.filters.items():
            records = [r for r in records if str(getattr(r, k, "")).lower() == v]
        for w in self.words:  # a word has no space, so it is in "task context" when it is in either
            records = [r for r in records if w in r.task_id.lower() or w in r.context_id.lower()]
        return records

    def matches(self, row: dict[str, Any]) -> bool:
        for k, v in self.filters.items():
            if str(row.get(k, "")).lower() != v:
                return False
        hay = f"{row['task_id']} {row['context_id']}".lower()
        return all(w in hay for w in self.words)


async def live_watches(tasks: set[tuple[str, str]] | None = None) -> dict[str, dict[str, Any]]:
    """What this process's watch registry knows now (source, state, last error), by watch id; {} without one.
    `tasks`: only the watches of these (agent, task id)."""
    try:
        rt = loop_runtime()
        registry = rt.registry if rt is not None else None
        return {row["watchId"]: row for row in registry.snapshot(tasks)} if registry is not None else {}
    except Exception as e:
        log.warning("reading the watch registry failed: %s", type(e).__name__)
        return {}


def _row(
    ws: Workspace,
    r: WatchRecord,
    now: datetime,
    states: dict[tuple[str, str], str],
    live: dict[str, Any],
    lines: dict[tuple[str, str], Any],
) -> dict[str, Any]:
    state = live.get("state") or states.get((r.agent, r.task_id)) or (r.state or "working")
    news = news_of(live, r.extra, now)  # when the agent last answered; "no news since" once that is news
    return {
        "watch_id": r.watch_id,
        "workspace": str(ws.root),
        "target": r.target,
        "agent": r.agent,
        "task_id": r.task_id,
        "context_id": r.context_id,
        "source": live.get("source") or r.source,
        "push_refused": str(live.get("pushRefused") or ""),  # the registry's words, already scrubbed and bounded
        "error": news.error,
        "heard_at": news.heard_at,
        "quiet": news.quiet and r.undelivered is None,
        "age": age(r.started_at, now),
        "started_at": r.started_at,
        # a kept record is over: it shows how it ended (lost, completed, ...) until its notice or result is out
        "state": (r.state if r.state in history.TERMINAL else "delivering") if r.undelivered is not None else state,
        "undelivered": r.undelivered is not None,
        "cancel_requested": bool(r.extra.get(CANCEL_REQUESTED)) and r.undelivered is None,
        "message": r.message,
        "dom_id": history.dom_id(r.agent, r.task_id),
        "progress": task_index.progress_view(lines.get((r.agent, r.task_id)), state),
        "agent_url": links.agent_url(r.agent),
        "task_url": links.task_url(r.agent, r.task_id, r.target),
    }


PAGE_SIZE = WATCH_PAGE_SIZE


def page_number(text: str | None) -> int:
    """The page a request or a tab asks for: a whole number from 1; anything else is the first page."""
    try:
        return max(1, int(text or 1))
    except ValueError:
        return 1


def table(
    q: str = "",
    live: dict[str, dict[str, Any]] | None = None,
    only: set[tuple[str, str]] | None = None,
    page: int | None = 1,
    spaces: list[Workspace] | None = None,
) -> dict[str, Any]:
    """Everything the table shows: the rows of page `page` (None: all) matching `q`, newest first, the number
    matching and in all, and files that cannot be read. `only`: just the rows of these (agent, task id), for a
    live update of a few rows (`total` then counts those only). Without a `state:` or `source:` filter (what a
    watch's registry and history say, not its record) the page is chosen from the records, so only its rows
    read their state: a page of 10,000 watches costs about what one of 10 does. `spaces`: the workspaces, when
    the caller has them already (`scope.all_workspaces()`)."""
    now = datetime.now(UTC)
    found: list[tuple[Workspace, list[WatchRecord]]] = []
    broken: list[str] = []
    for ws in scope.all_workspaces() if spaces is None else spaces:
        pf = pending_cache.read_pending(ws)
        if pf.parse_error:
            broken.append(pf.parse_error)
        mine = pending_cache.newest_first(pf)
        found.append((ws, mine if only is None else [r for r in mine if (r.agent, r.task_id) in only]))
    total = sum(len(mine) for _, mine in found)
    query = Query.parse(q)
    by_record = only is None and page is not None and not ({"state", "source"} & query.filters.keys())
    if by_record:  # filter, sort and cut on what the records hold; rows only for the page
        matched, records = _page_of_records(found, query, page or 1)
    else:
        records = [(ws, r) for ws, mine in found for r in mine]
    rows = _rows(records, now, live)
    if not by_record:
        rows = [r for r in rows if query.matches(r)]
        rows.sort(key=lambda r: r["started_at"], reverse=True)
        matched, rows = len(rows), (_cut(rows, page) if page is not None and only is None else rows)
    pages = max(1, -(-matched // PAGE_SIZE))
    current = min(page or 1, pages)
    return {
        "rows": rows,
        "total": total,
        "matched": matched,
        "page": current,
        "pages": pages,
        "first": (current - 1) * PAGE_SIZE + 1 if rows else 0,
        "last": (current - 1) * PAGE_SIZE + len(rows),
        "q": q,
        "broken": broken,
        "action_url": links.watch_action_url(),
    }


def _page_of_records(
    found: list[tuple[Workspace, list[WatchRecord]]], query: Query, page: int
) -> tuple[int, list[tuple[Workspace, WatchRecord]]]:
    """How many records match, and those of the page, newest first. Each workspace's matches are sorted and the
    lists merged only as far as the page: no object is made per record (10,000 small tuples a view woke the
    garbage collector, which then walked every object of the process: 10 ms of a 12 ms page)."""
    matched, lists = 0, []
    for ws, mine in found:  # each newest first already (pending_cache.newest_first)
        if query.filters or query.words:
            mine = query.matching_records(mine)
        matched += len(mine)
        lists.append(zip(repeat(ws), mine))
    start = min(page - 1, max(0, (matched - 1) // PAGE_SIZE)) * PAGE_SIZE
    merged = heapq.merge(*lists, key=lambda wr: wr[1].started_at, reverse=True)
    return matched, list(islice(merged, start, start + PAGE_SIZE))


def _cut(items: list[Any], page: int) -> list[Any]:
    """The items of page `page` (the last page when past it)."""
    last = max(0, (len(items) - 1) // PAGE_SIZE)
    start = min(page - 1, last) * PAGE_SIZE
    return items[start : start + PAGE_SIZE]


def _rows(
    records: list[tuple[Workspace, WatchRecord]], now: datetime, live: dict[str, dict[str, Any]] | None
) -> list[dict[str, Any]]:
    kept = task_index.rows_of((r.agent, r.task_id) for _, r in records)  # states and progress: one query
    states = {k: row.state for k, row in kept.items() if row.state}
    lines = {k: row for k, row in kept.items() if row.progress}
    return [_row(ws, r, now, states, (live or {}).get(r.watch_id) or {}, lines) for ws, r in records]


def answer_vals(answer: dict[str, Any]) -> str:
    """The `hx-vals` with which the answer panel tells the tab's socket which task it shows (`WatchesLive.told`):
    the tab then keeps it current. Empty for an answer about no task."""
    agent, task_id = answer.get("agent"), answer.get("taskId")
    if not (isinstance(agent, str) and agent and isinstance(task_id, str) and task_id):
        return ""
    return json.dumps({"answerAgent": agent, "answerTask": task_id})


def _find(watch_id: str) -> dict[str, Any] | None:
    """The row of one watch, read alone (a row's action built all 10,000 rows to find one: 1.9 s)."""
    for ws in scope.all_workspaces():
        found = next((r for r in pending_cache.read_pending(ws).records if r.watch_id == watch_id), None)
        if found is not None:
            return _rows([(ws, found)], datetime.now(UTC), None)[0]
    return None


async def page(request: HttpRequest) -> HttpResponse:
    q, page = request.GET.get("q", ""), page_number(request.GET.get("page"))
    rows = await sync_to_async(table)(q, await live_watches(), page=page)
    ctx = {"nav": "watches", "title": "Watches", **rows, "ws_url": await _ws_url(q, rows["page"])}
    return await sync_to_async(render)(request, "web/watches.html", ctx)


async def _ws_url(q: str, page: int = 1) -> str:
    params = {"q": q, **({"page": str(page)} if page > 1 else {})}
    return await sync_to_async(live.ws_url)("watches", **params)


async def action(request: HttpRequest) -> HttpResponse:
    """POST re-check / cancel / stop watching / send again for one watch; the tool's answer is shown above the
    table."""
    if request.method != "POST":
        return await page(request)
    what = request.POST.get("action", "")
    watch_id = request.POST.get("watch", "")
    row = await sync_to_async(_find)(watch_id)
    answer: dict[str, Any]
    if row is None:
        answer = {"error": "this watch is no longer in pending.json (it has finished, or was canceled)"}
    elif what == "status":
        answer = await scope.run_tool("status", {"agent": row["agent"], "taskId": row["task_id"]}, row["target"])
    elif what in ("cancel", "unwatch"):
        answer = await scope.run_tool(what, {"agent": row["agent"], "taskId": row["task_id"]}, row["target"])
    elif what == "again" and row["message"]:
        answer = await scope.run_tool("send", {"agent": row["agent"], "message": row["message"]}, row["target"])
    elif what == "again":
        answer = {"error": "the original message of this task is not known, so it cannot be sent again"}
    else:
        answer = {"error": f"unknown action {what!r}"}
    labels = {"status": "Re-check", "cancel": "Cancel", "unwatch": "Stop watching", "again": "Send again"}
    ctx: dict[str, Any] = {
        "answer": answer,
        "answer_label": labels.get(what, what),
        "answer_row": row,
        "answer_vals": answer_vals({"agent": row["agent"], **answer}) if row else "",
        "answer_target": "#watch-answer",  # an answer given in the panel comes back as the panel
        "target": {"id": row["target"]} if row else None,
    }
    if request.headers.get("HX-Request"):
        return await sync_to_async(render)(request, "web/watches.html#watch-answer", ctx)
    q = request.POST.get("q", "")
    full = await sync_to_async(table)(q, await live_watches())
    ctx.update(nav="watches", title="Watches", ws_url=await _ws_url(q), **full)
    return await sync_to_async(render)(request, "web/watches.html", ctx)
