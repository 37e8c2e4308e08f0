"""A chat target's inbox: results delivered to it (web backend), and results still waiting for delivery."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from a2aconsole.core.workspace import Workspace
from a2aconsole.web import asked
from a2aconsole.web.models import ChatTarget, InboxItem, TaskEvent
from a2aconsole.web.views import scope

SAID = ("result", "question", "message")  # the events that hold what an inbox item says


def home(request: HttpRequest) -> HttpResponse:
    return redirect("inbox", target=scope.console_target().id)


def items(target: ChatTarget) -> dict[str, Any]:
    ws = Workspace(target.workspace)
    pf = ws.read_pending()
    waiting = [r for r in pf.records if r.target == target.id and r.undelivered is not None]
    rows = list(InboxItem.objects.filter(target=target)[:100])
    return {
        "items": readable(rows),
        "waiting": [{"agent": r.agent, "task_id": r.task_id, "text": r.undelivered} for r in waiting],
        "broken": pf.parse_error,
    }


def readable(rows: list[InboxItem]) -> list[dict[str, Any]]:
    """Each item as people read it: the result's own text and files (its RESULT / QUESTION event: the one its
    watch recorded, else the task's latest), with the text the chat received kept for the raw block."""
    tasks = {(r.agent, r.task_id) for r in rows if r.task_id}
    events: dict[Any, TaskEvent] = {}
    if tasks:
        found = TaskEvent.objects.filter(kind__in=SAID, task_id__in={t for _, t in tasks}).order_by("id")
        for ev in found.only("agent", "task_id", "kind", "state", "text", "data", "target", "created_at"):
            watch = ev.data.get("watchId") if isinstance(ev.data, dict) else None
            events[(ev.agent, ev.task_id)] = ev
            if watch:
                events[watch] = ev
    said = asked.of_tasks(tasks)
    out = []
    for r in rows:
        ev = events.get(r.watch_id) if r.watch_id else None
        ev = ev or events.get((r.agent, r.task_id))
        out.append(
            {
                "item": r,
                "state": r.state or (ev.state if ev else ""),
                "text": ev.text if ev is not None else _body(r.text),
                "data": ev.data if ev is not None else {},
                "question": ev is not None and ev.kind == "question",
                "asked": said.get((r.agent, r.task_id), ""),
            }
        )
    return out


def _body(text: str) -> str:
    """The text without the spec's header line (`[A2A result from ...]`): what the agent said."""
    first, _, rest = text.partition("\n")
    return rest if first.startswith("[A2A ") and first.endswith("]") else text


def page(request: HttpRequest, target: str) -> HttpResponse:
    t = scope.target_or_404(target)
    ctx = {
        "nav": "inbox",
        "title": f"Inbox · {t.name}",
        "target": t,
        "targets": list(ChatTarget.objects.all()),
        "ws_url": f"/ws/console/inbox/?target={t.id}",
        **items(t),
    }
    return render(request, "web/inbox.html", ctx)
