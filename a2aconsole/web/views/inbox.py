"""A chat target's inbox: results delivered to it (web backend), and results still waiting for delivery."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from a2aconsole.core.workspace import Workspace
from a2aconsole.web.models import ChatTarget, InboxItem
from a2aconsole.web.views import scope


def home(request: HttpRequest) -> HttpResponse:
    return redirect("inbox", target=scope.console_target().id)


def items(target: ChatTarget) -> dict[str, Any]:
    ws = Workspace(target.workspace)
    pf = ws.read_pending()
    waiting = [r for r in pf.records if r.target == target.id and r.undelivered is not None]
    return {
        "items": list(InboxItem.objects.filter(target=target)[:100]),
        "waiting": [{"agent": r.agent, "task_id": r.task_id, "text": r.undelivered} for r in waiting],
        "broken": pf.parse_error,
    }


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
