"""The dashboard: what needs the owner first (open questions, undelivered results, broken files), then the
client, agents, watches and the latest results. Agent reachability is fetched apart, so the page is fast."""

from __future__ import annotations

from collections import Counter
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string

from a2aconsole.core.watches import PushRefusal
from a2aconsole.web import asked, history, live, pending_cache, scope
from a2aconsole.web.models import TaskEvent
from a2aconsole.web.process.runtime import loop_runtime

RESULTS = ("result", "message")  # what "Latest results" lists: a task's result, or an answer without a task


def state(refused: list[PushRefusal] | None = None) -> dict[str, Any]:
    """The dashboard's live parts (re-rendered on every event); `refused`: the agents that refused push."""
    broken: list[dict[str, Any]] = []
    sources: Counter[str] = Counter()
    undelivered: list[dict[str, Any]] = []
    agents = 0
    for ws in scope.all_workspaces():
        af = ws.read_agents()
        agents += len(af.entries)
        if af.parse_error:
            broken.append({"text": af.parse_error, "agents": True})
        broken.extend({"text": p, "agents": True} for p in af.problems)
        pf = pending_cache.read_pending(ws)  # parsed once per version of the file, not per view
        if pf.parse_error:
            broken.append({"text": pf.parse_error, "agents": False})
        for r in pf.records:
            if r.undelivered is not None:
                undelivered.append({"agent": r.agent, "task_id": r.task_id, "target": r.target, "text": r.undelivered})
            else:
                sources[r.source] += 1
    return {
        "questions": history.open_questions(limit=10),
        "undelivered": undelivered,
        "broken": broken,
        "sources": sorted(sources.items()),
        "watch_count": sum(sources.values()),
        "agent_count": agents,
        "results": latest_results(),
        "refused": refused or [],
    }


def latest_results(count: int = 6) -> list[TaskEvent]:
    """The newest results, each with what was asked for it (`asked`)."""
    results = list(TaskEvent.objects.filter(kind__in=RESULTS).order_by("-created_at", "-id")[:count])
    said = asked.of_events(results)
    for ev in results:
        ev.asked = said.get(ev.id, "")  # type: ignore[attr-defined]
    return results


def push_refusals() -> list[PushRefusal]:
    """The agents that refused a push config, once each, as this process's watch registry keeps them (needs the
    running loop; none without a registry)."""

    rt = loop_runtime()
    return rt.registry.push_refusals.all() if rt is not None and rt.registry is not None else []


def _page_context(refused: list[PushRefusal]) -> dict[str, Any]:
    return {
        "nav": "dashboard",
        "title": "Dashboard",
        "client": settings.A2A_CLIENT,
        "target": scope.console_target(),
        "ws_url": live.ws_url("dashboard"),
        **state(refused),
    }


async def push_problem() -> str:
    """Why the console's own push base does not reach it (`push_check.py`), "" when it does or push is off."""

    rt = loop_runtime()  # the serving process asked at its start (`start_worker`)
    check = rt.push_check if rt is not None else None
    answer = await check.result() if check is not None else None
    return answer.problem if answer is not None else ""


async def page(request: HttpRequest) -> HttpResponse:
    ctx = await sync_to_async(_page_context)(push_refusals())
    ctx["push_problem"] = await push_problem()
    return await sync_to_async(render)(request, "web/dashboard.html", ctx)


@live.register("dashboard")
class DashboardLive(live.ProgressBlind):
    """What needs the owner, the watch summary and the latest results, again on every change."""

    async def prepare(self, tab: live.Tab) -> None:
        tab.prepared["refused"] = push_refusals()

    def full(self, tab: live.Tab) -> list[str]:
        ctx = {**state(tab.prepared.get("refused")), "target": scope.console_target(), "oob": True}
        return [
            render_to_string(f"web/dashboard.html#{name}", ctx)
            for name in ("attention", "watch-summary", "latest-results")
        ]


async def agents(request: HttpRequest) -> HttpResponse:
    """The agents with reachability and skill count (the tool's `agents`: every card fetched now)."""
    target = await sync_to_async(scope.console_target)()
    result = await scope.run_tool("agents", {}, target.id)
    ctx = {"result": result, "agents": result.get("agents") or [], "standalone": not request.headers.get("HX-Request")}
    if ctx["standalone"]:
        ctx.update(nav="dashboard", title="Agents reachability")
        return await sync_to_async(render)(request, "web/agents/reachability.html", ctx)
    return await sync_to_async(render)(request, "web/dashboard.html#agent-status", ctx)
