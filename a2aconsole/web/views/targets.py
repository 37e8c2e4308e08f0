"""Chat targets in the console: list, add, edit, enable/disable, and their API tokens.

A new API token or webhook secret is rendered once, in the answer to the POST that made it, and
never again: tokens are stored hashed, and a secret's page shows only "set".
"""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from a2aconsole.core.chat import CONSOLE_TARGET
from a2aconsole.web import audit
from a2aconsole.web.chat_targets import TargetForm, describe
from a2aconsole.web.models import ApiToken, ChatTarget

NAV = "targets"


class ShownOnce:
    """A token or secret for the shown-once page: the template prints it (`str`), every `repr` hides it.

    Django's template engine logs a failed variable lookup at DEBUG with the whole context in the
    message (the context's repr), so a bare string here would reach the log of any DEBUG run.
    """

    def __init__(self, value: str) -> None:
        self._value = value

    def __str__(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "'(shown once; hidden here)'"

    def __bool__(self) -> bool:
        return bool(self._value)


def target_list(request: HttpRequest) -> HttpResponse:
    targets = list(ChatTarget.objects.prefetch_related("api_tokens"))
    rows = [
        {
            "t": t,
            "delivery": describe(t),
            "tokens": sum(1 for k in t.api_tokens.all() if k.active),
            "from_setting": t.id == CONSOLE_TARGET,  # its workspace is A2ACONSOLE_WORKSPACE
        }
        for t in targets
    ]
    return render(request, "web/targets/list.html", {"nav": NAV, "title": "Chat targets", "rows": rows})


def _shown_once(
    request: HttpRequest, target: ChatTarget, *, token: str | None = None, secret: str | None = None
) -> HttpResponse:
    ctx = {
        "nav": NAV,
        "title": "Copy it now",
        "target": target,
        "token": ShownOnce(token) if token else None,
        "secret": ShownOnce(secret) if secret else None,
    }
    resp = render(request, "web/targets/once.html", ctx)
    resp["Cache-Control"] = "no-store"
    return resp


def target_add(request: HttpRequest) -> HttpResponse:
    form = TargetForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        target, secret = form.save()
        messages.success(request, f"Added chat target {target.id}.")
        if secret:
            return _shown_once(request, target, secret=secret)
        return redirect("target", target.id)
    return render(request, "web/targets/form.html", {"nav": NAV, "title": "Add a chat target", "form": form})


def target_edit(request: HttpRequest, target_id: str) -> HttpResponse:
    target = get_object_or_404(ChatTarget, pk=target_id)
    form = TargetForm(request.POST or None, instance=target)
    if request.method == "POST" and form.is_valid():
        target, secret = form.save()
        messages.success(request, f"Saved chat target {target.id}.")
        if secret:
            return _shown_once(request, target, secret=secret)
        return redirect("target", target.id)
    tokens = list(target.api_tokens.all())
    ctx = {
        "nav": NAV,
        "title": target.name,
        "form": form,
        "target": target,
        "tokens": tokens,
        "delivery": describe(target),
    }
    return render(request, "web/targets/form.html", ctx)


@require_POST
def target_enabled(request: HttpRequest, target_id: str) -> HttpResponse:
    target = get_object_or_404(ChatTarget, pk=target_id)
    target.enabled = request.POST.get("enabled") == "1"
    target.save(update_fields=["enabled"])
    messages.success(request, f"Chat target {target.id} {'enabled' if target.enabled else 'disabled'}.")
    return redirect("target", target.id)


@require_POST
def token_create(request: HttpRequest, target_id: str) -> HttpResponse:
    target = get_object_or_404(ChatTarget, pk=target_id)
    row, token = ApiToken.issue(target, request.POST.get("name", "").strip()[:200])
    audit.record(request, "token-created", _token_label(row), target=target.id, detail=f"token #{row.pk}")
    return _shown_once(request, target, token=token)


@require_POST
def token_revoke(request: HttpRequest, target_id: str, token_id: int) -> HttpResponse:
    token = ApiToken.objects.filter(pk=token_id, target_id=target_id).first()
    if token is None:
        raise Http404("no such token")
    if token.active:
        token.revoke()
        audit.record(request, "token-revoked", _token_label(token), target=target_id, detail=f"token #{token.pk}")
    messages.success(request, f"Revoked token {token.prefix}….")
    return redirect("target", target_id)


def _token_label(token: ApiToken) -> str:
    """How the audit log names a token: its label (never the token, nor its prefix)."""
    return token.name or "(no label)"
