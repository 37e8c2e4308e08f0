"""Conversation with agents for one chat target: pick an agent, write, attach files, continue or answer.

The send goes through the tool (`send`), which waits up to WaitSeconds; what the agent does meanwhile and
after (status updates, the result a watch delivers) arrives over the tab's WebSocket as events.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from asgiref.sync import sync_to_async
from django.core.files.uploadedfile import UploadedFile
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string

from a2aconsole.core.files import atomic_write
from a2aconsole.core.results import safe_file_name
from a2aconsole.core.tool import CLIENT_OFF
from a2aconsole.core.workspace import Workspace
from a2aconsole.web import history, threads
from a2aconsole.web.forms import SendForm
from a2aconsole.web.models import ChatTarget, TaskEvent
from a2aconsole.web.views import scope

UPLOADS = "uploads"


def home(request: HttpRequest) -> HttpResponse:
    return redirect("conversation", target=scope.console_target().id)


def _agent_names(ws: Workspace) -> list[str]:
    return [e.name for e in ws.read_agents().entries]


def log_context(target: str, context_id: str = "", before: int | None = None) -> dict[str, Any]:
    """The conversation's live part (the `chat-log` fragment): a page of messages with status lines folded
    in, the chat's conversations, and where earlier messages start."""
    found = threads.threads(target)
    page = threads.page(target, context_id, before)
    items = page.items
    if not context_id:
        items = threads.mark_threads(items, {t.context_id: t.title for t in found})
    return {
        "items": items,
        "events": page.events,
        "open_ids": history.open_question_ids(page.events),
        "older": page.older,
        "threads": found,
        "context": context_id,
        "thread": next((t for t in found if t.context_id == context_id), None),
        "before": before,
    }


def before_of(params: dict[str, str]) -> int | None:
    """A tab's `before` (the page of older messages it shows), None for the latest."""
    return _before(params.get("before"))


def live_fragment(params: dict[str, str], ctx: dict[str, Any] | None = None) -> str:
    """The conversation's fragments again for an open tab (the consumer's render hook)."""
    ctx = ctx or log_context(params["target"], params.get("context", ""), before_of(params))
    ctx = {**ctx, "target": {"id": params["target"]}, "oob": True}
    return "".join(render_to_string(f"web/conversation.html#{name}", ctx) for name in ("chat-log", "threads"))


def _before(value: str | None) -> int | None:
    try:
        return int(value) if value else None
    except ValueError:
        return None


def _page_ctx(
    request: HttpRequest, target: ChatTarget, form: SendForm, reply: dict[str, Any] | None, context_id: str = ""
) -> dict:
    before = _before(request.GET.get("before"))
    live = urlencode({k: v for k, v in (("target", target.id), ("context", context_id), ("before", before)) if v})
    return {
        "nav": "conversation",
        "title": f"Conversation · {target.name}",
        "target": target,
        "targets": list(ChatTarget.objects.all()),
        "form": form,
        "reply": reply,
        "ws_url": f"/ws/console/chat/?{live}",
        **log_context(target.id, context_id, before),
    }


def page(request: HttpRequest, target: str) -> HttpResponse:
    t = scope.target_or_404(target)
    ws = Workspace(t.workspace)
    g = request.GET
    context_id = g.get("context", "").strip()
    form = SendForm(
        agents=_agent_names(ws),
        initial={
            "agent": g.get("agent", "") or (_thread_agent(t.id, context_id) if context_id else ""),
            "message": g.get("message", ""),
            "context_id": context_id,
            "task_id": g.get("task", ""),
        },
    )
    return render(request, "web/conversation.html", _page_ctx(request, t, form, None, context_id))


def _thread_agent(target: str, context_id: str) -> str:
    """Who a conversation is with (its latest event's agent), so replying in it needs no pick."""
    ev = TaskEvent.objects.filter(target=target, context_id=context_id).order_by("-id").only("agent").first()
    return ev.agent if ev else ""


def save_upload(ws: Workspace, f: UploadedFile) -> str:
    """Store an upload under `<workspace>/uploads/<random>/<safe name>` and return the workspace path."""
    rel = Path(UPLOADS) / uuid.uuid4().hex[:12] / safe_file_name(f.name or "file", f.content_type or "")
    with ws.lock.hold():
        atomic_write(ws.root / rel, b"".join(f.chunks()))
    return rel.as_posix()


# The answer panels of other pages (an answer form's `hx-target`), and the partial each is rendered from.
ANSWER_PANELS = {"watch-answer": "web/watches.html#watch-answer", "task-answer": "web/task.html#task-answer"}


def answer_panel(reply: dict[str, Any], panel: str) -> dict[str, Any]:
    """What a page's answer panel shows for the reply to an answer given in it, or in its page's timeline."""
    from a2aconsole.web.views.watches import answer_vals

    return {
        "answer": reply,
        "answer_label": "Your answer",
        "answer_target": f"#{panel}",
        "answer_vals": answer_vals(reply),
        "keep_raw": True,  # a task page's raw JSON stays as it is
    }


async def send(request: HttpRequest, target: str) -> HttpResponse:
    """POST: send the message through the tool; the reply (or the form's errors) is rendered."""
    if request.method != "POST":
        return redirect("conversation", target=target)
    t = await sync_to_async(scope.target_or_404)(target)
    ws = Workspace(t.workspace)
    names = await sync_to_async(_agent_names)(ws)
    form = SendForm(request.POST, request.FILES, agents=names)
    reply: dict[str, Any] | None = None
    status = 200
    valid = await sync_to_async(form.is_valid)()
    if valid and not scope.tool().settings.enabled:
        reply, status = {"error": CLIENT_OFF}, 422  # off: the uploads are not even saved
    elif valid:
        files = [await sync_to_async(save_upload)(ws, f) for f in form.cleaned_data.get("files") or []]
        reply = await scope.run_tool("send", form.tool_args(files), t.id)
        reply = {**reply, "sentFiles": files}
        status = 200 if "error" not in reply else 422
    else:
        status = 400
    panel = request.headers.get("HX-Target", "")
    if request.headers.get("HX-Request") and panel in ANSWER_PANELS and reply is not None:
        # an answer given on the watch table or a task page: its reply is that page's answer panel, whole (put in
        # place of the form, it nested a second panel of the task, and its ids, in the first)
        ctx = {**answer_panel(reply, panel), "target": t}
        return await sync_to_async(render)(request, ANSWER_PANELS[panel], ctx)
    if request.headers.get("HX-Request"):
        # htmx swaps 2xx answers only; the panel itself says what went wrong
        ctx = {"reply": reply, "target": t, "form": form}
        return await sync_to_async(render)(request, "web/conversation.html#reply", ctx)
    context_id = str((reply or {}).get("contextId") or form.data.get("context_id", "")).strip()
    fresh = form if reply is None else _fresh_form(names, reply)
    ctx = await sync_to_async(_page_ctx)(request, t, fresh, reply, context_id)
    return await sync_to_async(render)(request, "web/conversation.html", ctx, status=status)


def _fresh_form(names: list[str], reply: dict[str, Any]) -> SendForm:
    """After a send: same agent, same context (a conversation goes on), empty message."""
    return SendForm(agents=names, initial={"agent": reply.get("agent", ""), "context_id": reply.get("contextId", "")})


DOWNLOAD_POLICY = "sandbox; default-src 'none'"


def download(request: HttpRequest, target: str, path: str) -> HttpResponse:
    """A file an agent returned, from the target's workspace inbox only (no other path is served)."""
    t = scope.target_or_404(target)
    ws = Workspace(t.workspace)
    inbox = ws.inbox_dir.resolve()
    try:
        full = (ws.root / path).resolve(strict=True)
    except (OSError, RuntimeError, ValueError):  # ValueError: a NUL byte in the path
        raise Http404("no such file") from None
    if not full.is_relative_to(inbox) or not full.is_file():
        raise Http404("no such file")
    try:
        handle = full.open("rb")
    except OSError:
        raise Http404("no such file") from None
    # Never the file's own type: served as text/javascript or text/css, a file an agent planted could be loaded
    # by a console page as its script or style. The name (and so the type) is in Content-Disposition only, and
    # the download's own policy lets nothing in it run, even opened directly (nosniff: SecurityMiddleware).
    response = FileResponse(handle, as_attachment=True, filename=full.name, content_type="application/octet-stream")
    response["Content-Security-Policy"] = DOWNLOAD_POLICY
    return response
