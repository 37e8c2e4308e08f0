"""Conversation with agents for one chat target: pick an agent, write, attach files, continue or answer.

The send goes through the tool (`send`), which waits up to WaitSeconds; what the agent does meanwhile and
after (status updates, the result a watch delivers) arrives over the tab's WebSocket as events.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from asgiref.sync import sync_to_async
from django.core.files.uploadedfile import UploadedFile
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from a2aconsole.core.files import atomic_write
from a2aconsole.core.results import safe_file_name
from a2aconsole.core.tool import CLIENT_OFF
from a2aconsole.core.workspace import Workspace
from a2aconsole.web import history
from a2aconsole.web.forms import SendForm
from a2aconsole.web.models import ChatTarget
from a2aconsole.web.views import scope

UPLOADS = "uploads"


def home(request: HttpRequest) -> HttpResponse:
    return redirect("conversation", target=scope.console_target().id)


def _agent_names(ws: Workspace) -> list[str]:
    return [e.name for e in ws.read_agents().entries]


def _page_ctx(request: HttpRequest, target: ChatTarget, form: SendForm, reply: dict[str, Any] | None) -> dict:
    events = history.chat_log(target.id)
    return {
        "nav": "conversation",
        "title": f"Conversation · {target.name}",
        "target": target,
        "targets": list(ChatTarget.objects.all()),
        "form": form,
        "reply": reply,
        "events": events,
        "open_ids": history.open_question_ids(events),
        "ws_url": f"/ws/console/chat/?target={target.id}",
    }


def page(request: HttpRequest, target: str) -> HttpResponse:
    t = scope.target_or_404(target)
    ws = Workspace(t.workspace)
    g = request.GET
    form = SendForm(
        agents=_agent_names(ws),
        initial={
            "agent": g.get("agent", ""),
            "message": g.get("message", ""),
            "context_id": g.get("context", ""),
            "task_id": g.get("task", ""),
        },
    )
    return render(request, "web/conversation.html", _page_ctx(request, t, form, None))


def save_upload(ws: Workspace, f: UploadedFile) -> str:
    """Store an upload under `<workspace>/uploads/<random>/<safe name>` and return the workspace path."""
    rel = Path(UPLOADS) / uuid.uuid4().hex[:12] / safe_file_name(f.name or "file", f.content_type or "")
    with ws.lock.hold():
        atomic_write(ws.root / rel, b"".join(f.chunks()))
    return rel.as_posix()


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
        d = form.cleaned_data
        files = [await sync_to_async(save_upload)(ws, f) for f in d.get("files") or []]
        args: dict[str, Any] = {"agent": d["agent"]}
        if d.get("message"):
            args["message"] = d["message"]
        if files:
            args["files"] = files
        if d.get("context_id"):
            args["contextId"] = d["context_id"].strip()
        if d.get("task_id"):
            args["taskId"] = d["task_id"].strip()
        reply = await scope.run_tool("send", args, t.id)
        reply = {**reply, "sentFiles": files}
        status = 200 if "error" not in reply else 422
    else:
        status = 400
    if request.headers.get("HX-Request"):
        # htmx swaps 2xx answers only; the panel itself says what went wrong
        ctx = {"reply": reply, "target": t, "form": form}
        return await sync_to_async(render)(request, "web/conversation.html#reply", ctx)
    ctx = await sync_to_async(_page_ctx)(request, t, form if reply is None else _fresh_form(names, reply), reply)
    return await sync_to_async(render)(request, "web/conversation.html", ctx, status=status)


def _fresh_form(names: list[str], reply: dict[str, Any]) -> SendForm:
    """After a send: same agent, same context (a conversation goes on), empty message."""
    return SendForm(agents=names, initial={"agent": reply.get("agent", ""), "context_id": reply.get("contextId", "")})


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
    return FileResponse(handle, as_attachment=True, filename=full.name)


def download_url(target: str, path: str) -> str:
    return reverse("download", args=[target, path])
