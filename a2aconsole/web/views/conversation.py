"""Conversation with agents for one chat target: pick an agent, write, attach files, continue or answer.

A send returns at once: the message goes out in the background (`web.sends`) and shows in the thread as it goes;
what the agent does then (the task, its status, the result a watch delivers) arrives over the tab's WebSocket.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from asgiref.sync import sync_to_async
from django.core.files.uploadedfile import UploadedFile
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.html import format_html

from a2aconsole.core.events import target_group
from a2aconsole.core.files import Workspace, atomic_write
from a2aconsole.core.results import safe_file_name
from a2aconsole.core.tool import CLIENT_OFF
from a2aconsole.web import data_forms, history, live, scope, sends, task_index, threads
from a2aconsole.web.forms import SendForm
from a2aconsole.web.live.fragments import REPLY, outcomes, progress_lines
from a2aconsole.web.models import ChatTarget, OutgoingMessage, TaskEvent
from a2aconsole.web.views.watches import answer_vals

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
        "outgoing": [sends.shown(o) for o in sends.pending_of(target, context_id)] if before is None else [],
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


@live.register("chat")
class ChatLive(live.LivePage):
    """A chat: its log and threads again on a change, the running tasks' lines in place while they work."""

    outgoing_lines = False  # the chat log shows them, rendered with it

    def groups(self, params: dict[str, str]) -> list[str] | None:
        return [target_group(params["target"])] if params.get("target") else None

    def version(self, params: dict[str, str]) -> int:
        rows = TaskEvent.objects.filter(target=params["target"]).order_by("-id").values_list("id", flat=True)
        return rows.first() or 0

    def progress_mark(self, params: dict[str, str]) -> Any:
        return task_index.progress_at(target=params["target"])

    def full(self, tab: live.Tab) -> list[str]:
        return [live_fragment(tab.params)]  # the thread (or all) as the tab shows it, and the threads

    def changed(self, tab: live.Tab, changes: live.Changes) -> list[str]:
        if live.only_progress(changes):  # the running tasks' lines, updated in place
            return progress_lines(changes.tasks) + outcomes(changes.tasks, tab.params["target"], REPLY)
        return self.full(tab) + outcomes(changes.tasks, tab.params["target"], REPLY)


def _before(value: str | None) -> int | None:
    try:
        return int(value) if value else None
    except ValueError:
        return None


def _page_ctx(request: HttpRequest, target: ChatTarget, form: SendForm, context_id: str = "") -> dict:
    before = _before(request.GET.get("before"))
    query = urlencode({k: v for k, v in (("target", target.id), ("context", context_id), ("before", before)) if v})
    return {
        "nav": "conversation",
        "title": f"Conversation · {target.name}",
        "target": target,
        "targets": list(ChatTarget.objects.all()),
        "form": form,
        "ws_url": f"/ws/console/chat/?{query}",
        **log_context(target.id, context_id, before),
    }


def page(request: HttpRequest, target: str) -> HttpResponse:
    t = scope.target_or_404(target)
    ws = Workspace(t.workspace)
    g = request.GET
    context_id = g.get("context", "").strip()
    edited = _edited(g.get("edit"), t.id)
    if edited is not None:  # Edit on a message that was not sent: the composer holds it again
        initial = {
            "agent": edited.agent,
            "message": edited.text,
            "context_id": edited.context_id,
            "task_id": edited.task_id,
        }
    else:
        initial = {
            "agent": g.get("agent", "") or (_thread_agent(t.id, context_id) if context_id else ""),
            "message": g.get("message", ""),
            "context_id": context_id,
            "task_id": g.get("task", ""),
        }
    form = SendForm(agents=_agent_names(ws), initial=initial)
    ctx = _page_ctx(request, t, form, context_id)
    ctx["edited"] = edited
    return render(request, "web/conversation.html", ctx)


def older(request: HttpRequest, target: str) -> HttpResponse:
    """GET: the page of messages before `before`, put above those the tab shows (the chat's "Earlier messages")."""
    t = scope.target_or_404(target)
    before = _before(request.GET.get("before"))
    if before is None:
        raise Http404("which messages?")
    ctx = log_context(t.id, request.GET.get("context", "").strip(), before)
    return render(request, "web/conversation.html#older-page", {**ctx, "target": t})


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


async def send(request: HttpRequest, target: str) -> HttpResponse:
    """POST: the message goes out in the background (`web.sends`) and the page gets, at once, what shows it: the
    chat log with the message in it (the conversation), an answer panel saying it is on its way (a watch row, a
    task page), or that line alone (the dashboard's question box). A form that is not valid comes back with what
    was typed and why."""
    if request.method != "POST":
        return redirect("conversation", target=target)
    t = await sync_to_async(scope.target_or_404)(target)
    if request.POST.get("form_answer"):
        return await _form_answer(request, t)
    ws = Workspace(t.workspace)
    names = await sync_to_async(_agent_names)(ws)
    form = SendForm(request.POST, request.FILES, agents=names)
    valid = await sync_to_async(form.is_valid)()
    edited = await sync_to_async(_edited)(request.POST.get("edit"), t.id) if valid else None
    if valid and not scope.tool().settings.enabled:
        form.add_error(None, CLIENT_OFF)  # off: the uploads are not even saved
        valid = False
    if not valid:
        return await _not_sent(request, t, form)
    files = [await sync_to_async(save_upload)(ws, f) for f in form.cleaned_data.get("files") or []]
    if edited is not None:  # the files of the message being edited that the owner kept
        kept = set(request.POST.getlist("keep_files"))
        files = [f for f in edited.files if f in kept] + files
    parts = sends.Parts.from_args(form.tool_args(files))
    row = await sync_to_async(sends.create)(t.id, parts)
    if edited is not None:
        gone = await sync_to_async(sends.discard)(edited.id, t.id)
        if gone is not None:
            await sends.announce(gone)
    await sends.start(row)
    return await _sent(request, t, row)


def _asked_form(target: str, agent: str, task_id: str) -> data_forms.DataForm | None:
    """The form the task's latest question in this chat asks to fill in (None: none the console offers)."""
    if not agent or not task_id:
        return None
    asked = TaskEvent.objects.filter(target=target, agent=agent, task_id=task_id, kind="question").order_by("-id")
    ev = asked.only("data").first()
    return data_forms.form_of(ev.data) if ev is not None else None


async def _form_answer(request: HttpRequest, t: ChatTarget) -> HttpResponse:
    """POST of an agent's form (`web/_data_form.html`): the values checked against the form the task asked, then
    sent as a data part answering it; a wrong value sends the form back with what was typed and why."""
    post = request.POST
    agent, task_id, context_id = post.get("agent", ""), post.get("task_id", ""), post.get("context_id", "")
    asked = await sync_to_async(_asked_form)(t.id, agent, task_id)
    if asked is None:
        return _refused(request, "this task asks no form the console can show; answer it in words")
    if not scope.tool().settings.enabled:
        return _refused(request, CLIENT_OFF)
    values, checked = data_forms.answer(asked, post)
    if checked.errors:
        key = re.sub(r"[^A-Za-z0-9_-]", "", post.get("form_key", ""))[:80] or "answer"
        ctx = {"df": checked, "agent": agent, "task_id": task_id, "context_id": context_id, "post_target": t.id}
        ctx["form_key"] = key
        if request.headers.get("HX-Request"):  # swapped in place of the form (htmx swaps 2xx answers only)
            return await sync_to_async(render)(request, "web/_data_form.html", ctx)
        page = {**ctx, "target": t, "title": f"Answer {agent}", "nav": "conversation"}
        return await sync_to_async(render)(request, "web/data_answer.html", page, status=400)
    row = await sync_to_async(sends.create)(t.id, sends.Parts(agent, "", (), context_id, task_id, values))
    await sends.start(row)
    return await _sent(request, t, row)


def _refused(request: HttpRequest, reason: str) -> HttpResponse:
    said = format_html('<p class="notice error" role="alert">Not sent: {}</p>', reason)
    return HttpResponse(said, status=200 if request.headers.get("HX-Request") else 400)


def _edited(value: str | None, target: str) -> OutgoingMessage | None:
    """The failed message an edited send takes the place of (`?edit=`), if it is this chat's."""
    try:
        return OutgoingMessage.objects.filter(id=int(value or ""), target_id=target).first()
    except ValueError:
        return None


async def _sent(request: HttpRequest, t: ChatTarget, row: OutgoingMessage, label: str = "Your answer") -> HttpResponse:
    """What the page that sent `row` shows now (see `send`); `label`: an answer panel's heading."""
    if not request.headers.get("HX-Request"):
        query = f"?{urlencode({'context': row.context_id})}" if row.context_id else ""
        return redirect(reverse("conversation", args=[t.id]) + query)
    panel = request.headers.get("HX-Target", "")
    if panel in ANSWER_PANELS:
        ctx = {
            "target": t,
            "outgoing": sends.shown(row),
            "answer_label": label,
            "answer_vals": answer_vals({"agent": row.agent, "taskId": row.task_id}),  # the panel follows the task
        }
        return await sync_to_async(render)(request, ANSWER_PANELS[panel], ctx)
    if panel == "chat-log":
        return await chat_log(request, t)
    ctx = {"o": sends.shown(row), "target": t, "tag": "div"}
    return await sync_to_async(render)(request, "web/_outgoing.html", ctx)


async def chat_log(request: HttpRequest, t: ChatTarget) -> HttpResponse:
    """The chat log as the sending tab shows it (its conversation, or all of them)."""
    context_id = request.POST.get("view_context", "").strip()
    ctx = await sync_to_async(log_context)(t.id, context_id)
    return await sync_to_async(render)(request, "web/conversation.html#chat-log", {**ctx, "target": t})


async def _not_sent(request: HttpRequest, t: ChatTarget, form: SendForm) -> HttpResponse:
    """The form again with what was typed and why it was not sent (htmx swaps 2xx answers only)."""
    if request.headers.get("HX-Request") and request.headers.get("HX-Target") == "chat-log":
        ctx = {"form": form, "target": t, "oob": True}
        response = await sync_to_async(render)(request, "web/conversation.html#composer", ctx)
        response["HX-Reswap"] = "none"  # the log stays; the composer comes back out of band, with the errors
        return response
    if request.headers.get("HX-Request"):
        return HttpResponse(format_html('<p class="notice error" role="alert">Not sent: {}</p>', _errors(form)))
    ctx = await sync_to_async(_page_ctx)(request, t, form, form.data.get("context_id", "").strip())
    return await sync_to_async(render)(request, "web/conversation.html", ctx, status=400)


def _errors(form: SendForm) -> str:
    said = [
        f"{form.fields[f].label if f in form.fields else ''}: {e}".lstrip(": ")
        for f, es in form.errors.items()
        for e in es
    ]
    return " ".join(said)


async def retry(request: HttpRequest, target: str, outgoing: int) -> HttpResponse:
    """POST: a message that was not sent, sent again with the same parts."""
    t = await sync_to_async(scope.target_or_404)(target)
    if request.method != "POST":
        return redirect("conversation", target=t.id)
    row = await sync_to_async(sends.again)(outgoing, t.id)
    if row is None:
        raise Http404("no such message to send again")
    await sends.start(row)
    return await _sent(request, t, row)


async def discard(request: HttpRequest, target: str, outgoing: int) -> HttpResponse:
    """POST: a message that was not sent, thrown away."""
    t = await sync_to_async(scope.target_or_404)(target)
    if request.method != "POST":
        return redirect("conversation", target=t.id)
    row = await sync_to_async(sends.discard)(outgoing, t.id)
    if row is not None:
        await sends.announce(row)
    if request.headers.get("HX-Request") and request.headers.get("HX-Target") == "chat-log":
        return await chat_log(request, t)
    if request.headers.get("HX-Request"):  # a panel's line
        return HttpResponse(format_html('<p class="small muted" id="outgoing-{}">Discarded.</p>', outgoing))
    return redirect("conversation", target=t.id)


async def resend(request: HttpRequest, target: str) -> HttpResponse:
    """POST: a new task with the parts of the message that started a finished one (`agent`, `task`), in the same
    conversation when `same_context` says so."""
    t = await sync_to_async(scope.target_or_404)(target)
    if request.method != "POST":
        return redirect("conversation", target=t.id)
    agent, task_id = request.POST.get("agent", ""), request.POST.get("task", "")
    first = await sync_to_async(sends.first_sent)(agent, task_id)
    if first is None:
        raise Http404("no message of that task to send again")
    parts = sends.Parts.of_event(first, same_context=request.POST.get("same_context") == "1")
    row = await sync_to_async(sends.create)(t.id, parts)
    await sends.start(row)
    return await _sent(request, t, row, label="Re-send")


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
