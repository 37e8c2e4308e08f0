"""Tasks at the agent: the tasks an agent holds (A2A 1.0 ListTasks), paged by the agent's own page token and
filtered by context and state, each row saying whether the console knows the task (its history has it, or a
watch follows it). A task the console does not know is watched (the console's `watch`, `core/tool/adopt.py`) or
its result fetched (`status`), both through the task page's actions. An agent without ListTasks says why."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from asgiref.sync import sync_to_async
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from a2aconsole.core.errors import A2AConsoleError
from a2aconsole.core.pending import WatchRecord
from a2aconsole.core.remote import MAX_PAGE_TOKEN, TASK_STATES, RemoteError, TaskPage, TaskSnapshot
from a2aconsole.core.results import is_settled, message_text
from a2aconsole.web import agent_side, links, pending_cache, scope
from a2aconsole.web.models import TaskRecord

PAGE_SIZE = 20  # tasks a page asks of the agent
MAX_CONTEXT = 200  # a context id as the form takes it (the task index keeps 200)
SAID_CHARS = 160  # a status message, as a row shows it


def _known(agent: str, ids: list[str], watched: list[WatchRecord]) -> set[str]:
    """Which of these task ids the console knows: in its task index, or followed by a watch."""
    known = set(TaskRecord.objects.filter(agent=agent, task_id__in=ids).values_list("task_id", flat=True))
    return known | {r.task_id for r in watched if r.agent == agent}


def _row(agent: str, t: TaskSnapshot, known: set[str], target: str) -> dict[str, Any]:
    said = " ".join(message_text(t.status.message).split())
    at = t.status.at
    return {
        "task_id": t.id,
        "context_id": t.context_id,
        "state": t.state,
        "settled": is_settled(t.state),
        "at": at,
        "said": said if len(said) <= SAID_CHARS else said[: SAID_CHARS - 1] + "…",
        "known": t.id in known,
        "task_url": links.task_url(agent, t.id, target),
        "act_url": reverse("task-act", args=[agent, t.id]),
    }


def _url(context_id: str, state: str, token: str = "") -> str:
    params = {k: v for k, v in (("context", context_id), ("state", state), ("page", token)) if v}
    return "?" + urlencode(params) if params else "?"


async def page(request: HttpRequest, name: str) -> HttpResponse:
    target = (await sync_to_async(scope.console_target)()).id
    context_id = request.GET.get("context", "").strip()[:MAX_CONTEXT]
    state = request.GET.get("state", "").strip()
    token = request.GET.get("page", "")[:MAX_PAGE_TOKEN]
    errors: list[str] = []
    if state and state not in TASK_STATES:
        errors.append(f"there is no task state {state!r}: choose one of the list")
        state = ""
    listed: TaskPage | None = None
    side = None
    try:
        side = await agent_side.connect(name, target)
        listed = await side.conn.list_tasks(context_id or None, state or None, PAGE_SIZE, token)
    except RemoteError as e:
        if side is not None:
            side.forget(e)
        errors.append(str(e))
    except agent_side.UnknownAgent:
        raise Http404("no such agent") from None
    except A2AConsoleError as e:
        errors.append(str(e))
    rows: list[dict[str, Any]] = []
    if listed is not None and side is not None:
        ids = [t.id for t in listed.tasks]
        watched = (await sync_to_async(pending_cache.read_pending)(side.workspace)).records
        known = await sync_to_async(_known)(name, ids, watched)
        rows = side.scrub([_row(name, t, known, target) for t in listed.tasks])
    ctx = {
        "nav": "agents",
        "title": f"Tasks at {name}",
        "agent": name,
        "target": target,
        "rows": rows,
        "listed": listed is not None,
        "total": listed.total if listed is not None else None,
        "errors": side.scrub(errors) if side is not None else errors,
        "context_id": context_id,
        "state": state,
        "states": TASK_STATES,
        "paged": bool(token),
        "next_url": _url(context_id, state, listed.next_page_token) if listed and listed.next_page_token else "",
        "first_url": _url(context_id, state),
    }
    return await sync_to_async(render)(request, "web/agents/tasks.html", ctx)
