"""The watch table's live page, beside `views/watches.py` (the page and its table) as it is a module's worth:
tables shared by tabs rendering the same search, rows re-rendered alone when nothing else can have changed, and
the answer panels a tab shows kept current."""

from __future__ import annotations

import threading
from typing import Any

from django.template.loader import render_to_string

from a2aconsole.core import pending
from a2aconsole.web import scope, task_index
from a2aconsole.web.live import Changes, LivePage, Tab, register
from a2aconsole.web.live.fragments import RENDERED, WATCH_ANSWER, delete, outcomes
from a2aconsole.web.live.frames import ROWS_PER_FRAGMENT, batches
from a2aconsole.web.views import watches

TABLES_KEPT = 8  # watch tables kept for tabs rendering the same search at the same moment
ANSWERS_KEPT = 4  # answer panels a watches tab keeps current: the one it shows, and a few it just replaced


def answers_shown(tab: Tab) -> set[tuple[str, str]]:
    """The tasks whose answer panel the tab says it shows (`ConsoleConsumer.receive`): on the watches page only a
    re-check, cancel or send again puts one there, so the other tasks' panels are neither read nor rendered."""
    return set(tab.memo.get("answers", ()))


def show_answer(tab: Tab, agent: str, task_id: str) -> None:
    kept: list[tuple[str, str]] = [t for t in tab.memo.get("answers", []) if t != (agent, task_id)]
    tab.memo["answers"] = [*kept, (agent, task_id)][-ANSWERS_KEPT:]


@register("watches")
class WatchesLive(LivePage):
    """The watch table row by row: a change re-renders the rows of its task; rows come and go one by one."""

    async def prepare(self, tab: Tab) -> None:
        """The registry's view of the watches: of the changed tasks only, when rows are all a render may need
        (a table of 500 watches, ten tabs, four renders a second each, was mostly copying the registry). A render
        that needs more does without the rest's last errors (states come from the history too)."""
        c = tab.changes
        few = c is not None and not c.full and bool(c.tasks) and bool(tab.memo.get("shown"))
        tab.prepared["live"] = await watches.live_watches(set(c.tasks) if few and c is not None else None)

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tables: dict[tuple[Any, ...], dict[str, Any]] = {}

    def told(self, tab: Tab, data: dict[str, Any]) -> Changes | None:
        """The search box sends `{"q": ...}`: the table again for it. An answer panel sends its task when it
        appears (and when the socket opens again): the tab keeps that panel current, rendered once now in case the
        task changed while the panel was on its way."""
        agent, task_id = data.get("answerAgent"), data.get("answerTask")
        if isinstance(agent, str) and isinstance(task_id, str) and agent and task_id:
            show_answer(tab, agent, task_id)
            changes = Changes()
            changes.add({"kind": "answer", "agent": agent, "task_id": task_id})
            return changes
        q = data.get("q")
        if isinstance(q, str):
            tab.params["q"] = q
            return Changes(full=True)
        return None

    def _table(self, tab: Tab) -> dict[str, Any]:
        """The table for this tab's search, shared by every tab that renders it before anything changes (ten
        tabs after one push read pending.json and the states once, not ten times)."""
        q, live = tab.params.get("q", ""), tab.prepared.get("live")
        page = watches.page_number(tab.params.get("page"))
        files = self._files()
        live_key = tuple(sorted((k, tuple(sorted(map(str, v.items())))) for k, v in (live or {}).items()))
        key = (q, page, self.version({}), task_index.changed_at(), files, hash(live_key))
        with self._lock:
            found = self._tables.get(key)
        if found is None:
            found = {**watches.table(q, live, page=page), "files": files}
            with self._lock:
                if len(self._tables) >= TABLES_KEPT:
                    self._tables.pop(next(iter(self._tables)))
                self._tables[key] = found
        return found

    @staticmethod
    def _files(spaces: list[Any] | None = None) -> tuple[tuple[str, tuple[object, ...]], ...]:
        """Each workspace's pending.json (and its journal) as the file system knows it: the watches are as before
        while it is."""
        return tuple((str(ws.root), pending.stamp(ws)) for ws in spaces or scope.all_workspaces())

    def _remember(self, tab: Tab, ctx: dict[str, Any]) -> None:
        tab.memo["shown"] = [r["watch_id"] for r in ctx["rows"]]
        tab.memo["shown_tasks"] = {(r["agent"], r["task_id"]) for r in ctx["rows"]}
        tab.memo["broken"] = ctx["broken"]
        tab.memo["files"] = ctx.get("files")

    def start(self, tab: Tab) -> None:
        self._remember(tab, self._table(tab))

    def full(self, tab: Tab) -> list[str]:
        ctx = self._table(tab)
        self._remember(tab, ctx)
        out = [render_to_string("web/watches.html#watch-table", {**ctx, "oob": True, "rows_later": True})]
        for part in batches(ctx["rows"], ROWS_PER_FRAGMENT):
            out.append(
                render_to_string(
                    "web/watches.html#watch-rows", {**ctx, "rows": part, "rows_oob": "beforeend:#watch-rows"}
                )
            )
        return out

    def changed(self, tab: Tab, changes: Changes) -> list[str]:
        shown = outcomes(changes.tasks & answers_shown(tab), answer_target=WATCH_ANSWER)
        return shown + self._rows_changed(tab, changes)

    def progress_mark(self, params: dict[str, str]) -> Any:
        return task_index.progress_at()

    def _rows_changed(self, tab: Tab, changes: Changes) -> list[str]:
        quick = self._only_rows(tab, changes)
        if quick is not None:
            return quick
        ctx = self._table(tab)
        before: list[str] = tab.memo.get("shown", [])
        now = [r["watch_id"] for r in ctx["rows"]]
        if not before or not now or ctx["broken"] != tab.memo.get("broken"):
            return self.full(tab)  # the table appears, empties, or a file broke: small, or needed whole
        self._remember(tab, ctx)
        old = set(before)
        out = [delete(f"watch-{w}") for w in old - set(now)]  # frames group fragments by kind: rows go last
        out.append(render_to_string("web/watches.html#watch-count", {**ctx, "count_oob": True}))
        added = [r for r in ctx["rows"] if r["watch_id"] not in old]
        if added:
            out.append(
                render_to_string(
                    "web/watches.html#watch-rows", {**ctx, "rows": added, "rows_oob": "afterbegin:#watch-rows"}
                )
            )
        return out + self._rows(ctx, [r for r in ctx["rows"] if r["watch_id"] in old], changes)

    def _only_rows(self, tab: Tab, changes: Changes) -> list[str] | None:
        """Only the rows of the changed tasks, read and rendered alone, when nothing else can have changed: every
        pending.json is as the tab's table was built from (no watch came or went) and the search does not filter
        on what a change changes (state, source). None: the whole table is needed. At 50 pushes a second on 500
        watches this is the difference between ten tabs reading every watch's state 4 times a second, and not."""
        q = tab.params.get("q", "")
        query = watches.Query.parse(q)
        shown = tab.memo.get("shown")
        if not shown or "state" in query.filters or "source" in query.filters or not changes.tasks:
            return None
        spaces = scope.all_workspaces()
        if tab.memo.get("files") is None or self._files(spaces) != tab.memo["files"]:
            return None
        mine = changes.tasks & tab.memo.get("shown_tasks", set())
        if not mine:  # ten tabs on ten pages: most changes are on another tab's page
            return []
        ctx = watches.table(q, tab.prepared.get("live"), only=mine, spaces=spaces)
        return self._rows(ctx, [r for r in ctx["rows"] if r["watch_id"] in set(shown)], changes)

    @staticmethod
    def _rows(ctx: dict[str, Any], rows: list[dict[str, Any]], changes: Changes) -> list[str]:
        out = []
        for r in rows:
            if (r["agent"], r["task_id"]) in changes.tasks:
                key = ("row", ctx["q"], tuple(sorted((k, str(v)) for k, v in r.items())))
                row_ctx = {**ctx, "r": r, "row_oob": True}
                out.append(RENDERED.get(key, lambda c=row_ctx: render_to_string("web/watches.html#watch-row", c)))
        return out
