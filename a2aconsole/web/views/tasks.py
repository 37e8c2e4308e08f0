"""One remote task: the timeline of its events, its last outcome, and re-check / cancel / stop watching / answer."""

from __future__ import annotations

import json
import logging
from typing import Any

from asgiref.sync import sync_to_async
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from a2aconsole.core.results import json_preview
from a2aconsole.core.tool import WATCH
from a2aconsole.web import history, live, scope, task_index, task_watch
from a2aconsole.web.chats import aresolve
from a2aconsole.web.models import TaskEvent
from a2aconsole.web.views import conversation, watches

log = logging.getLogger(__name__)


def _target_of(request: HttpRequest, events: list[TaskEvent]) -> str:
    t = request.GET.get("target") or request.POST.get("target") or ""
    if t:
        return t
    for ev in reversed(events):
        if ev.target:
            return ev.target
    return scope.console_target().id


def context(
    request: HttpRequest,
    agent: str,
    task_id: str,
    outcome: dict[str, Any] | None = None,
    raw_task: dict[str, Any] | None = None,
    live_rows: dict[str, dict[str, Any]] | None = None,
) -> dict:
    """The page's context; `live_rows`: the watch registry's rows of the task (`watches.live_watches`), by which its
    watch says when the agent last answered (without them, as its record last kept it)."""
    events = history.timeline(agent, task_id)
    target = _target_of(request, events)
    states = [ev.state for ev in events if ev.state]
    state = states[-1] if states else "unknown"
    finished = bool(states) and states[-1] in history.TERMINAL
    last = events[-1] if events else None
    raw = raw_task or (outcome if outcome is not None else (_event_json(last) if last else None))
    if raw and not raw_task:  # an agent's task may be megabytes: the page shows a preview (a raw task is one)
        raw = json_preview(raw)
    return {
        "nav": "tasks",
        "title": f"Task {task_id[:12]}",
        "agent": agent,
        "task_id": task_id,
        "target": {"id": target},
        "events": events,
        "open_ids": history.open_question_ids(events),
        "state": state,
        "finished": finished,
        "resendable": history.resendable(agent, task_id, finished),
        "watched": task_watch.watch_of(agent, task_id, target) is not None,
        "news": task_watch.news_of_tasks({(agent, task_id)}, live_rows).get((agent, task_id)),
        "away": bool(history.finished_away({(agent, task_id)})),
        "progress": task_index.task_progress(agent, task_id, state),
        "full_dates": True,
        "answer_target": "#task-answer",  # an answer (in the panel or the timeline) comes back as the panel
        "context_id": next((ev.context_id for ev in reversed(events) if ev.context_id), ""),
        "raw": json.dumps(raw, indent=2, ensure_ascii=False, default=str) if raw else "",
        "raw_is_task": bool(raw_task),
        "ws_url": live.ws_url("task", agent=agent, task=task_id, target=target),
    }


def _event_json(ev: TaskEvent) -> dict[str, Any]:
    return {
        "kind": ev.kind,
        "agent": ev.agent,
        "taskId": ev.task_id,
        "contextId": ev.context_id,
        "state": ev.state,
        "text": ev.text,
        "data": ev.data,
        "at": ev.created_at.isoformat(),
    }


async def fetch_raw_task(agent: str, task_id: str, target: str) -> dict[str, Any] | None:
    """The task as the agent returns it now (GetTask through the tool's client), as JSON, with the entry's key
    and the workspace's push tokens masked should the agent ever echo them; None when it cannot be read (the
    tool's answer says why)."""
    try:
        tool = scope.tool()
        chat = await aresolve(target)
        ws = chat.workspace if chat is not None else None
        entry = (await sync_to_async(ws.read_agents)()).get(agent) if ws is not None else None
        if entry is None:
            return None
        conn = await tool.remote.connect(entry)
        task = await conn.get_task_json(task_id)
    except Exception as e:  # the re-check above reported the problem in the owner's words
        log.info("raw task of %s could not be read: %s", agent, type(e).__name__)
        return None
    if entry.key:
        text = json.dumps(task, ensure_ascii=False)
        task = json.loads(text.replace(entry.key, "(key hidden)")) if entry.key in text else task
    # and every other secret of the workspace the agent may know (its push token) or echo, as the tool's answers;
    # in the preview the page shows, not in all of a task that may be megabytes (a secret the preview cuts
    # into is masked whole)
    return json_preview(task, cut=tool.scrubbers.for_workspace(ws).cut)


async def page(request: HttpRequest, agent: str, task_id: str) -> HttpResponse:
    live_rows = await watches.live_watches({(agent, task_id)})
    ctx = await sync_to_async(context)(request, agent, task_id, live_rows=live_rows)
    return await sync_to_async(render)(request, "web/task.html", ctx)


async def act(request: HttpRequest, agent: str, task_id: str) -> HttpResponse:
    """POST re-check (`status`, a result fetched from Tasks at the agent too), cancel, stop watching (`unwatch`) or
    watch (a task the console did not send, from Tasks at the agent) through the tool; the answer is shown on the
    task page."""
    if request.method != "POST":
        return await page(request, agent, task_id)
    what = request.POST.get("action", "")
    target = request.POST.get("target") or (await sync_to_async(scope.console_target)()).id
    raw = None
    if what in ("status", "cancel", "unwatch", WATCH):
        answer = await scope.run_tool(what, {"agent": agent, "taskId": task_id}, target)
        if "error" not in answer and what != "unwatch":
            raw = await fetch_raw_task(agent, task_id, target)
    else:
        answer = {"error": f"unknown action {what!r}"}
    if request.headers.get("HX-Request") and request.headers.get("HX-Target") == "chat-log":  # a chat's task card
        return await conversation.chat_log(request, await sync_to_async(scope.target_or_404)(target))
    live_rows = await watches.live_watches({(agent, task_id)})
    ctx = await sync_to_async(context)(request, agent, task_id, answer, raw, live_rows)
    labels = {"status": "Re-check", "cancel": "Cancel", "unwatch": "Stop watching", WATCH: "Watch"}
    ctx.update(answer=answer, answer_label=labels.get(what, what))
    if request.headers.get("HX-Request"):
        return await sync_to_async(render)(request, "web/task.html#task-answer", ctx)
    return await sync_to_async(render)(request, "web/task.html", ctx)
