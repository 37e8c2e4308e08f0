"""The console's own live pages: dashboard, watches, chat, inbox, a task, and `/a2a`.

Each renders the named fragments of its template (django-template-partials) with `oob`. A change to one task
re-renders that task's parts (its watch row, its timeline's new events, its answer panel); lists bounded by
their query (chat log, inbox, dashboard) are rendered whole, at most once per coalescing interval.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from django.template.loader import render_to_string
from django.utils.html import format_html

from a2aconsole.core.events import target_group, task_group
from a2aconsole.web import history, task_index, task_watch
from a2aconsole.web.live import Changes, LivePage, Tab, register
from a2aconsole.web.live.frames import batches
from a2aconsole.web.models import TaskEvent

TABLES_KEPT = 8  # watch tables kept for tabs rendering the same search at the same moment
ROWS_PER_FRAGMENT = 100  # watch rows per appended batch: ~150 KB, one frame each
OUTCOME_KINDS = ("result", "question", "state", "sent")  # "sent": a message or an answer went to the task
REPLY = "#reply"  # the chat's answer panel: an answer given in it replaces it whole
WATCH_ANSWER, TASK_ANSWER = "#watch-answer", "#task-answer"  # the other pages' answer panels, the same way


def outcome_of(ev: TaskEvent) -> dict[str, Any]:
    """A task's answer panel (`_outcome.html`'s `r`) from its latest outcome event."""
    data = ev.data if isinstance(ev.data, dict) else {}
    r: dict[str, Any] = {
        **data,
        "agent": ev.agent,
        "taskId": ev.task_id,
        "contextId": ev.context_id,
        "state": ev.state or "unknown",
        "dom_id": history.dom_id(ev.agent, ev.task_id),
    }
    if ev.kind == "sent":  # the owner's answer (or message) reached the task; the agent has not said more yet
        r["state"] = "submitted"
    elif ev.kind == "question":
        r["question"] = ev.text
    elif ev.kind == "result":
        r["text"] = ev.text
    elif ev.text:
        r["note"] = ev.text  # progress: "working 3/8"
    return r


class Rendered:
    """Fragments rendered for one tab, reused by the others that need the very same one (ten tabs after a push
    render a row or an answer panel once). Keyed by everything the fragment shows; bounded, oldest out."""

    def __init__(self, size: int = 2000) -> None:
        self._lock = threading.Lock()
        self._kept: OrderedDict[Hashable, str] = OrderedDict()
        self._size = size

    def get(self, key: Hashable, make: Callable[[], str]) -> str:
        with self._lock:
            found = self._kept.get(key)
        if found is None:
            found = make()
            with self._lock:
                self._kept[key] = found
                if len(self._kept) > self._size:
                    self._kept.popitem(last=False)
        return found


RENDERED = Rendered()


def outcomes(tasks: set[tuple[str, str]], target: str = "", answer_target: str = REPLY) -> list[str]:
    """The answer panel of each changed task, badge and text from one render (dropped by tabs not showing it);
    a running task's says what the agent said last ("Working on it: working 3/8"). `answer_target`: the page's
    answer panel, which the reply to an answer given in it replaces whole: the chat's `#reply`, the watch
    table's `#watch-answer`, a task page's `#task-answer` (put in place of the form, a reply nested a second
    panel of the task, with its ids, in the first)."""
    out = []
    lines = task_index.progress_of(tasks)
    for key, ev in history.latest_events(tasks, kinds=OUTCOME_KINDS).items():
        if ev.kind == "state" and ev.state in history.TERMINAL:
            continue  # the result with its text follows (a finished panel is never replaced again)
        r = outcome_of(ev)
        p = task_index.progress_view(lines.get(key), r["state"])
        if p is not None:
            r["note"] = p["text"]
        ctx = {"r": r, "target": {"id": ev.target or target}, "answer_target": answer_target, "outcome_oob": 1}
        found = ("outcome", ev.id, ctx["target"]["id"], r.get("note"), answer_target)
        out.append(RENDERED.get(found, lambda c=ctx: _render("web/_outcome.html", c)))
    return out


def progress_lines(tasks: set[tuple[str, str]]) -> list[str]:
    """The conversation's progress line of each changed task (dropped by tabs not showing it)."""
    lines = task_index.progress_of(tasks)
    return [
        _render(
            "web/_progress.html",
            {
                "p": task_index.progress_view(lines.get(key)),
                "progress_id": f"progress-{history.dom_id(*key)}",
                "oob": 1,
            },
        )
        for key in sorted(tasks)
    ]


def only_progress(changes: Changes) -> bool:
    """Nothing changed but what agents said while working: pages that do not show it render nothing (an agent
    may send hundreds of status messages)."""
    return not changes.full and changes.kinds <= {"progress"}


class ProgressBlind(LivePage):
    """A page that shows nothing of what agents say while working: a batch of progress alone renders nothing."""

    def changed(self, tab: Tab, changes: Changes) -> list[str]:
        return [] if only_progress(changes) else self.full(tab)


def _render(template: str, ctx: dict[str, Any]) -> str:
    return render_to_string(template, ctx)


def _delete(element_id: str) -> str:
    return format_html('<i id="{}" hx-swap-oob="delete"></i>', element_id)


@register("dashboard")
class DashboardLive(ProgressBlind):
    def full(self, tab: Tab) -> list[str]:
        from a2aconsole.web.views import dashboard, scope

        ctx = {**dashboard.state(), "target": scope.console_target(), "oob": True}
        return [
            render_to_string(f"web/dashboard.html#{name}", ctx)
            for name in ("attention", "watch-summary", "latest-results")
        ]


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
        from a2aconsole.web.views.watches import live_watches

        c = tab.changes
        few = c is not None and not c.full and bool(c.tasks) and bool(tab.memo.get("shown"))
        tab.prepared["live"] = await live_watches(set(c.tasks) if few and c is not None else None)

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
        from a2aconsole.web.views import watches

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
        from a2aconsole.web.views import scope

        return tuple((str(ws.root), ws.pending_stamp()) for ws in spaces or scope.all_workspaces())

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
        out = [_delete(f"watch-{w}") for w in old - set(now)]  # frames group fragments by kind: rows go last
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
        from a2aconsole.web.views import scope, watches

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
                out.append(RENDERED.get(key, lambda c=row_ctx: _render("web/watches.html#watch-row", c)))
        return out


@register("chat")
class ChatLive(LivePage):
    outgoing_lines = False  # the chat log shows them, rendered with it

    def groups(self, params: dict[str, str]) -> list[str] | None:
        return [target_group(params["target"])] if params.get("target") else None

    def version(self, params: dict[str, str]) -> int:
        rows = TaskEvent.objects.filter(target=params["target"]).order_by("-id").values_list("id", flat=True)
        return rows.first() or 0

    def progress_mark(self, params: dict[str, str]) -> Any:
        return task_index.progress_at(target=params["target"])

    def full(self, tab: Tab) -> list[str]:
        from a2aconsole.web.views import conversation

        return [conversation.live_fragment(tab.params)]  # the thread (or all) as the tab shows it, and the threads

    def changed(self, tab: Tab, changes: Changes) -> list[str]:
        if only_progress(changes):  # the running tasks' lines, updated in place
            return progress_lines(changes.tasks) + outcomes(changes.tasks, tab.params["target"], REPLY)
        return self.full(tab) + outcomes(changes.tasks, tab.params["target"], REPLY)


@register("inbox")
class InboxLive(ChatLive):
    def full(self, tab: Tab) -> list[str]:
        from a2aconsole.web.models import ChatTarget
        from a2aconsole.web.views import inbox

        t = ChatTarget.objects.filter(id=tab.params["target"]).first()
        if t is None:
            return []
        ctx = {**inbox.items(t, tab.params.get("show", "")), "target": t, "oob": True}
        return [render_to_string("web/inbox.html#inbox-list", ctx)]

    def changed(self, tab: Tab, changes: Changes) -> list[str]:
        return [] if only_progress(changes) else self.full(tab)

    def progress_mark(self, params: dict[str, str]) -> Any:
        return None  # the inbox shows results only


@register("task")
class TaskLive(LivePage):
    """One task: new events are appended to its timeline (never the whole timeline again), its badge, controls
    and answer panel re-rendered, and an answered question's form taken away."""

    def groups(self, params: dict[str, str]) -> list[str] | None:
        if params.get("agent") and params.get("task"):
            return [task_group(params["agent"], params["task"])]
        return None

    def _events(self, params: dict[str, str]) -> Any:
        return TaskEvent.objects.filter(agent=params["agent"], task_id=params["task"])

    def version(self, params: dict[str, str]) -> int:
        return self._events(params).order_by("-id").values_list("id", flat=True).first() or 0

    def progress_mark(self, params: dict[str, str]) -> Any:
        return task_index.progress_at(agent=params["agent"], task_id=params["task"])

    def _ctx(self, tab: Tab, events: list[TaskEvent], states: list[str], context_id: str) -> dict[str, Any]:
        p = tab.params
        finished = bool(states) and states[-1] in history.TERMINAL
        return {
            "events": events,
            "open_ids": history.open_question_ids(events),
            "target": {"id": p.get("target", "")},
            "agent": p["agent"],
            "task_id": p["task"],
            "context_id": context_id,
            "state": states[-1] if states else "unknown",
            "finished": finished,
            "resendable": history.resendable(p["agent"], p["task"], finished),
            "watched": task_watch.watch_of(p["agent"], p["task"], p.get("target", "")) is not None,
            "progress": task_index.task_progress(p["agent"], p["task"], states[-1] if states else "unknown"),
            "full_dates": True,
            "answer_target": TASK_ANSWER,
            "oob": True,
        }

    def start(self, tab: Tab) -> None:
        events = history.timeline(tab.params["agent"], tab.params["task"])
        tab.memo["last"] = max((ev.id for ev in events), default=0)
        tab.memo["open"] = history.open_question_ids(events)

    def full(self, tab: Tab) -> list[str]:
        events = history.timeline(tab.params["agent"], tab.params["task"])
        self.start(tab)
        states = [ev.state for ev in events if ev.state]
        context_id = next((ev.context_id for ev in reversed(events) if ev.context_id), "")
        ctx = self._ctx(tab, events, states, context_id)
        return [render_to_string(f"web/task.html#{n}", ctx) for n in ("timeline", "task-state", "task-controls")]

    def _progress(self, tab: Tab) -> str:
        """The timeline's progress line, updated in place (a status message is no event to append)."""
        p = task_index.task_progress(tab.params["agent"], tab.params["task"])
        return render_to_string("web/task.html#task-progress", {"progress": p})

    def changed(self, tab: Tab, changes: Changes) -> list[str]:
        new = list(self._events(tab.params).filter(id__gt=tab.memo.get("last", 0)).order_by("created_at", "id"))
        if not new:
            return [self._progress(tab)] if "progress" in changes.kinds else []
        tab.memo["last"] = max(ev.id for ev in new)
        latest = self._events(tab.params).exclude(state="").order_by("-created_at", "-id").first()
        states = [latest.state] if latest else []
        ctx_row = self._events(tab.params).exclude(context_id="").order_by("-id").values_list("context_id", flat=True)
        ctx = self._ctx(tab, new, states, ctx_row.first() or "")
        out = [render_to_string("web/task.html#task-progress", {"progress": ctx["progress"]})]
        opened = history.open_question_ids(new)
        if any(ev.kind in history.SETTLING for ev in new):  # an earlier question is answered or moot now
            out += [_delete(f"answer-form-{i}") for i in sorted(tab.memo.get("open", set()) - opened)]
            tab.memo["open"] = opened
        out.append(render_to_string("web/task.html#timeline-more", ctx))
        out.append('<p id="timeline-empty" class="empty" hx-swap-oob="true" hidden></p>')
        out += [render_to_string(f"web/task.html#{n}", ctx) for n in ("task-state", "task-controls")]
        task = {(tab.params["agent"], tab.params["task"])}
        return out + outcomes(task, tab.params.get("target", ""), answer_target=TASK_ANSWER)


@register("status")
class StatusLive(ProgressBlind):
    """`/a2a`: the workspaces' agents and watches, the watch rows appended in batches."""

    def full(self, tab: Tab) -> list[str]:
        from a2aconsole.web.views import status

        spaces = status.spaces()
        out = [render_to_string("web/status.html#status-spaces", {"spaces": spaces, "oob": True, "rows_later": True})]
        for i, s in enumerate(spaces, start=1):
            for part in batches(s["watches"], ROWS_PER_FRAGMENT):
                ctx = {"watches": part, "rows_oob": f"beforeend:#status-watches-{i}"}
                out.append(render_to_string("web/status.html#status-watches", ctx))
        return out


@register("tasks")
class TasksLive(LivePage):
    """The Tasks page: its table again for the tab's search, sort and page (25 rows, a few KB)."""

    def full(self, tab: Tab) -> list[str]:
        from a2aconsole.web.views import tasklist

        return [tasklist.live_fragment(tab.params)]

    def progress_mark(self, params: dict[str, str]) -> Any:
        return task_index.progress_at()


@register("agents")
class AgentsLive(ProgressBlind):
    """The agents list, when agents.json changed (by hand, another tab, the CLI): the list as the file is now."""

    def full(self, tab: Tab) -> list[str]:
        from a2aconsole.web.views.agent_cards import list_state

        return [render_to_string("web/agents/list.html#agent-list", {**list_state(), "oob": True})]
