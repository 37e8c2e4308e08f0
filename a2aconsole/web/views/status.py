"""`/a2a`: the spec's status view. Agents with masked URLs, watches with agent, task, source and age; live."""

from __future__ import annotations

from datetime import UTC, datetime

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from a2aconsole.core.status import age
from a2aconsole.web import live, pending_cache
from a2aconsole.web.views import scope

STATUS_WATCHES = 50  # the newest watches of each workspace shown here; the watch table pages through them all


def spaces() -> list[dict]:
    """Every workspace's agents (URLs masked) and newest watches (all of them: the watch table): the live part."""
    now = datetime.now(UTC)
    spaces = []
    for ws in scope.all_workspaces():
        af = ws.read_agents()
        pf = pending_cache.read_pending(ws)
        spaces.append(
            {
                "root": str(ws.root),
                "agents": [{"name": e.name, "masked_url": e.masked_url, "has_key": bool(e.key)} for e in af.entries],
                "agents_error": af.parse_error,
                "problems": af.problems,
                "watches": [
                    {
                        "agent": r.agent,
                        "task_id": r.task_id,
                        "source": r.source,
                        "age": age(r.started_at, now),
                        "started_at": r.started_at,
                        "target": r.target,
                        "undelivered": r.undelivered is not None,
                    }
                    for r in pending_cache.newest_first(pf)[:STATUS_WATCHES]
                ],
                "watch_count": len(pf.records),
                "pending_error": pf.parse_error,
            }
        )
    return spaces


def page(request: HttpRequest) -> HttpResponse:
    client = settings.A2A_CLIENT
    ctx = {
        "nav": "status",
        "title": "A2A status",
        "spaces": spaces(),
        "client": client,
        "ws_url": live.ws_url("status"),
    }
    return render(request, "web/status.html", ctx)
