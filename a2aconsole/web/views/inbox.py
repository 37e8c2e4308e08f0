"""A chat's inbox: every result, answer and question its agents sent, read or not, and results still waiting for
delivery; the read marks and the menu's counts (`web/unread.py`)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST

from a2aconsole.core import pending
from a2aconsole.core.files import Workspace
from a2aconsole.web import asked, history, live, scope, unread
from a2aconsole.web.models import ChatTarget, InboxItem, TaskEvent
from a2aconsole.web.views.conversation import ChatLive


def home(request: HttpRequest) -> HttpResponse:
    """The console's own chat's inbox (`?show=` kept: the menu's Questions lands on its questions)."""
    url = reverse("inbox", args=[scope.console_target().id])
    show = request.GET.get("show", "")
    return redirect(f"{url}?{urlencode({'show': show})}" if show in VIEWS and show else url)


@require_POST
def seen(request: HttpRequest) -> JsonResponse:
    """A visible tab showed these items (`ids`, comma-separated): they are read. The counts after."""
    unread.seen(request.POST.get("ids", "").split(","))
    return JsonResponse(unread.counts())


def counts(request: HttpRequest) -> JsonResponse:
    """The menu's counts, asked by an open tab after a live update."""
    return JsonResponse(unread.counts())


SHOWN = 100  # items a page shows, newest first
NEW_FOR = timedelta(minutes=10)  # an item read this recently is still marked new (the owner is reading it)
VIEWS = {"": "All", "unread": "Unread", "questions": "Questions"}


def items(target: ChatTarget, show: str = "") -> dict[str, Any]:
    """The chat's inbox: every result, answer and question its agents sent (`show`: only the unread ones, or
    only the questions waiting for an answer), each with the text the chat received when it was delivered;
    and results whose delivery failed (kept and tried again)."""
    ws = Workspace(target.workspace)
    pf = pending.read(ws)
    waiting = [r for r in pf.records if r.target == target.id and r.undelivered is not None]
    show = show if show in VIEWS else ""
    said = TaskEvent.objects.filter(target=target.id, kind__in=unread.SAID)
    if show == "questions":
        events = history.open_questions(target.id, limit=SHOWN)
    elif show == "unread":
        events = list(said.filter(read_at__isnull=True).order_by("-id")[:SHOWN])
    else:
        events = list(said.order_by("-id")[:SHOWN])
    delivered = list(InboxItem.objects.filter(target=target)[:SHOWN]) if show == "" else []
    shown = readable(events, delivered)
    on_screen = {(x["agent"], x["task_id"]) for x in shown}
    waiting = [r for r in waiting if (r.agent, r.task_id) not in on_screen]  # shown above: read here already
    return {
        "items": shown,
        "show": show,
        "views": [{"key": k, "label": v, "url": f"?show={k}" if k else "?"} for k, v in VIEWS.items()],
        "waiting": [{"agent": r.agent, "task_id": r.task_id, "text": r.undelivered} for r in waiting],
        "broken": pf.parse_error,
    }


def readable(events: list[TaskEvent], delivered: list[InboxItem]) -> list[dict[str, Any]]:
    """Each item as people read it: what the agent said, its files, what was asked, with the text the chat
    received (`delivered`, the spec's `[A2A result ...]` message) kept for the raw block. A delivered item
    whose event is not kept still shows, read from its text without the header."""
    by_watch = {(d.watch_id, d.state): d for d in delivered if d.watch_id}  # a watch delivers a question, then
    by_task = {(d.agent, d.task_id, d.state): d for d in reversed(delivered) if d.task_id}  # the result
    open_ids = {q.id for q in history.open_questions(limit=unread.MAX_QUESTIONS)}
    asked_for = asked.of_events(events)
    out: list[dict[str, Any]] = []
    used: set[int] = set()
    fresh = timezone.now() - NEW_FOR  # read this recently: still marked new, so a live update keeps the mark
    for ev in events:
        data = ev.data if isinstance(ev.data, dict) else {}
        d = (
            by_watch.get((str(data.get("watchId") or ""), ev.state)) or by_task.get((ev.agent, ev.task_id, ev.state))
            if ev.kind != "message"
            else None
        )
        if d is not None:
            used.add(d.id)
        out.append(_item(ev.created_at, ev.agent, ev.task_id, ev.context_id, ev.state, ev.text, data, d) | {
            "id": ev.id, "question": ev.kind == "question", "open": ev.id in open_ids,
            "unread": ev.read_at is None, "asked": asked_for.get(ev.id, ""),
            "new": ev.read_at is None or ev.read_at > fresh,
        })  # fmt: skip
    tasks = asked.of_tasks((d.agent, d.task_id) for d in delivered if d.id not in used)
    for d in delivered:
        if d.id not in used:
            item = _item(d.created_at, d.agent, d.task_id, d.context_id, d.state, _body(d.text), {}, d)
            out.append(item | {"asked": tasks.get((d.agent, d.task_id), "")})
    out.sort(key=lambda x: x["at"], reverse=True)
    return out


def _item(at: Any, agent: str, task_id: str, context_id: str, state: str, text: str, data: dict[str, Any],
          delivered: InboxItem | None) -> dict[str, Any]:  # fmt: skip
    return {
        "at": at, "agent": agent, "task_id": task_id, "context_id": context_id, "state": state, "text": text,
        "data": data, "received": delivered.text if delivered is not None else "", "id": None,
        "question": False, "open": False, "unread": False, "new": False,
    }  # fmt: skip


def _body(text: str) -> str:
    """The text without the spec's header line (`[A2A result from ...]`): what the agent said."""
    first, _, rest = text.partition("\n")
    return rest if first.startswith("[A2A ") and first.endswith("]") else text


def page(request: HttpRequest, target: str) -> HttpResponse:
    t = scope.target_or_404(target)
    show = request.GET.get("show", "")
    ctx = {
        "nav": "questions" if show == "questions" else "inbox",
        "title": f"{'Questions' if show == 'questions' else 'Inbox'} · {t.name}",
        "target": t,
        "targets": list(ChatTarget.objects.all()),
        "ws_url": f"/ws/console/inbox/?{urlencode({'target': t.id, 'show': show} if show else {'target': t.id})}",
        **items(t, show),
    }
    return render(request, "web/inbox.html", ctx)


@live.register("inbox")
class InboxLive(ChatLive):
    """A chat's inbox: its list again on every change but progress (it shows no running task)."""

    def full(self, tab: live.Tab) -> list[str]:
        t = ChatTarget.objects.filter(id=tab.params["target"]).first()
        if t is None:
            return []
        ctx = {**items(t, tab.params.get("show", "")), "target": t, "oob": True}
        return [render_to_string("web/inbox.html#inbox-list", ctx)]

    def changed(self, tab: live.Tab, changes: live.Changes) -> list[str]:
        return [] if live.only_progress(changes) else self.full(tab)

    def progress_mark(self, params: dict[str, str]) -> Any:
        return None  # the inbox shows results only
