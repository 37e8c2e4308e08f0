"""`/a2a`: the spec's status view. Agents with masked URLs, watches with agent, task, source and age; live."""

from __future__ import annotations

from datetime import UTC, datetime

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string

from a2aconsole.core.tool import age
from a2aconsole.web import live, pending_cache, scope
from a2aconsole.web.live.frames import ROWS_PER_FRAGMENT, batches

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


@live.register("status")
class StatusLive(live.ProgressBlind):
    """`/a2a`: the workspaces' agents and watches, the watch rows appended in batches."""

    def full(self, tab: live.Tab) -> list[str]:
        found = spaces()
        out = [render_to_string("web/status.html#status-spaces", {"spaces": found, "oob": True, "rows_later": True})]
        for i, s in enumerate(found, start=1):
            for part in batches(s["watches"], ROWS_PER_FRAGMENT):
                ctx = {"watches": part, "rows_oob": f"beforeend:#status-watches-{i}"}
                out.append(render_to_string("web/status.html#status-watches", ctx))
        return out
