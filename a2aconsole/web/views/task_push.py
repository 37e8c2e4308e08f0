"""A task's push configs at the agent (A2A ListTaskPushNotificationConfigs): what the agent holds, asked when the
owner asks (a section of the task page, or a page of its own without JavaScript), each with its id and URL
(scheme, host, port and path: never a query, token or credentials), the console's own current one marked (the
config of the task's push watch: its id is the watch's); each removable (DeleteTaskPushNotificationConfig),
asked first, as Cancel is."""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from a2aconsole.core.errors import A2AConsoleError
from a2aconsole.core.remote import PushConfigValue, RemoteError
from a2aconsole.web import agent_side, pending_cache, scope

MAX_CONFIG_ID = 200  # a config id as the removal form takes it


def _ours(side: agent_side.AgentSide, task_id: str) -> dict[str, str]:
    """The console's current push configs of the task: the config id (the watch's id) -> the chat it delivers to."""
    records = pending_cache.read_pending(side.workspace).records
    return {
        r.watch_id: r.target
        for r in records
        if r.agent == side.entry.name and r.task_id == task_id and r.source == "push" and r.undelivered is None
    }


def _row(c: PushConfigValue, ours: dict[str, str]) -> dict[str, Any]:
    return {"id": c.id, "url": c.url, "has_token": c.has_token, "auth_scheme": c.auth_scheme, "ours": ours.get(c.id)}


async def page(request: HttpRequest, agent: str, task_id: str) -> HttpResponse:
    """GET: the agent's push configs of the task; POST (action=delete, config=<id>): remove one, then list again."""
    target = request.POST.get("target") or request.GET.get("target") or (await sync_to_async(scope.console_target)()).id
    said: dict[str, str] = {}
    configs: list[dict[str, Any]] | None = None
    side = None
    try:
        side = await agent_side.connect(agent, target)
        if request.method == "POST":
            said = await _delete(side, task_id, request.POST.get("config", "")[:MAX_CONFIG_ID])
        listed = await side.conn.list_push_configs(task_id)
        ours = await sync_to_async(_ours)(side, task_id)
        configs = side.scrub([_row(c, ours) for c in listed])
    except agent_side.UnknownAgent:
        raise Http404("no such agent") from None
    except RemoteError as e:
        if side is not None:
            side.forget(e)
        said = {"error": str(e)}
    except A2AConsoleError as e:
        said = {"error": str(e)}
    ctx = {
        "nav": "tasks",
        "title": f"Push configs of task {task_id[:12]}",
        "agent": agent,
        "task_id": task_id,
        "target": {"id": target},
        "configs": configs,
        "said": side.scrub(said) if side is not None else said,
    }
    if request.headers.get("HX-Request"):
        return await sync_to_async(render)(request, "web/task_push.html#push-configs", ctx)
    return await sync_to_async(render)(request, "web/task_push.html", ctx)


async def _delete(side: agent_side.AgentSide, task_id: str, config_id: str) -> dict[str, str]:
    """Remove one config at the agent; what the page says of it (a failure raises RemoteError)."""
    if not config_id:
        return {"error": "say which push config to remove"}
    ours = await sync_to_async(_ours)(side, task_id)
    await side.conn.delete_push(task_id, config_id)
    if config_id in ours:
        return {
            "done": f"Removed push config {config_id} at {side.entry.name}: it was this console's own; its watch "
            "now learns of the task by its safety checks (GetTask) instead of pushes"
        }
    return {"done": f"Removed push config {config_id} at {side.entry.name}"}
