"""A task page's live page, beside `views/tasks.py` (the page): new events appended to the timeline, the badge,
controls and answer panel re-rendered, an answered question's form taken away."""

from __future__ import annotations

from typing import Any

from django.template.loader import render_to_string

from a2aconsole.core.events import task_group
from a2aconsole.web import history, task_index, task_watch
from a2aconsole.web.live import Changes, LivePage, Tab, register
from a2aconsole.web.live.fragments import TASK_ANSWER, delete, outcomes
from a2aconsole.web.models import TaskEvent
from a2aconsole.web.views import watches


@register("task")
class TaskLive(LivePage):
    """One task: new events are appended to its timeline (never the whole timeline again), its badge, controls
    and answer panel re-rendered, and an answered question's form taken away."""

    def groups(self, params: dict[str, str]) -> list[str] | None:
        if params.get("agent") and params.get("task"):
            return [task_group(params["agent"], params["task"])]
        return None

    async def prepare(self, tab: Tab) -> None:
        """The watch registry's row of the task: when its agent last answered, as the watch table has it."""
        tab.prepared["live"] = await watches.live_watches({(tab.params["agent"], tab.params["task"])})

    def _events(self, params: dict[str, str]) -> Any:
        return TaskEvent.objects.filter(agent=params["agent"], task_id=params["task"])

    def version(self, params: dict[str, str]) -> int:
        return self._events(params).order_by("-id").values_list("id", flat=True).first() or 0

    def progress_mark(self, params: dict[str, str]) -> Any:
        return task_index.progress_at(agent=params["agent"], task_id=params["task"])

    def _ctx(self, tab: Tab, events: list[TaskEvent], states: list[str], context_id: str) -> dict[str, Any]:
        p = tab.params
        finished = bool(states) and states[-1] in history.TERMINAL
        task = (p["agent"], p["task"])
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
            "news": task_watch.news_of_tasks({task}, tab.prepared.get("live")).get(task),
            "away": bool(history.finished_away({task})),
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
            out += [delete(f"answer-form-{i}") for i in sorted(tab.memo.get("open", set()) - opened)]
            tab.memo["open"] = opened
        out.append(render_to_string("web/task.html#timeline-more", ctx))
        out.append('<p id="timeline-empty" class="empty" hx-swap-oob="true" hidden></p>')
        out += [render_to_string(f"web/task.html#{n}", ctx) for n in ("task-state", "task-controls")]
        task = {(tab.params["agent"], tab.params["task"])}
        return out + outcomes(task, tab.params.get("target", ""), answer_target=TASK_ANSWER)
