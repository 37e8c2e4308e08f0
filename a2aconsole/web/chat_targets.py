"""Managing chat targets: the form the console pages and `manage.py targets` share.

A target's delivery settings live in `backend_settings`: Telegram's `chat_id` (and optionally
`token_env`, the name of the environment variable holding the bot token: the token itself is never
stored), or the webhook's `url` and `secret`. The secret is generated here, shown once, and never
put back into a page; nor is the URL's user info or query, which may hold a key of the host's.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from django import forms
from django.conf import settings

from a2aconsole.core.chat import CONSOLE_TARGET
from a2aconsole.core.files import is_http_url, mask_url
from a2aconsole.web.delivery.webhook import new_secret
from a2aconsole.web.models import ChatTarget, target_id_validator

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,99}$")
CHAT_ID = re.compile(r"^(-?\d{1,20}|@[A-Za-z][A-Za-z0-9_]{3,63})$")
CONSOLE_WORKSPACE_HELP = (
    "The console's own workspace comes from A2ACONSOLE_WORKSPACE, applied at every start: to move it, set the "
    "variable and restart."
)


class TargetForm(forms.Form):
    """Add or edit a chat target. `instance` given: editing (the id is fixed)."""

    id = forms.CharField(
        label="Id", max_length=64, validators=[target_id_validator], help_text="Used in the API URL; cannot change"
    )
    name = forms.CharField(max_length=200)
    workspace = forms.CharField(max_length=1000, help_text="Absolute path of an existing workspace folder")
    backend = forms.ChoiceField(choices=ChatTarget.BACKENDS, help_text="Where results for this chat go")
    chat_id = forms.CharField(
        label="Telegram chat id", required=False, max_length=70, help_text="Telegram: a number, or @channelname"
    )
    token_env = forms.CharField(
        label="Bot token variable",
        required=False,
        max_length=100,
        help_text="Telegram: the environment variable holding the bot token (default TELEGRAM_BOT_TOKEN)",
    )
    url = forms.CharField(
        label="Webhook URL",
        required=False,
        max_length=2000,
        help_text="Webhook: where to POST. A saved URL is shown without user info or query (they may hold "
        "secrets); leave it as shown to keep them, or enter the full URL to change it.",
    )
    new_secret = forms.BooleanField(
        label="Make a new signing secret", required=False, help_text="Webhook: the old secret stops working"
    )
    enabled = forms.BooleanField(required=False, initial=True)

    def __init__(self, *args: Any, instance: ChatTarget | None = None, **kwargs: Any) -> None:
        self.instance = instance
        if instance is not None:
            s = instance.backend_settings or {}
            kwargs["initial"] = {
                "id": instance.id,
                "name": instance.name,
                "workspace": instance.workspace,
                "backend": instance.backend,
                "chat_id": s.get("chat_id", ""),
                "token_env": s.get("token_env", ""),
                "url": mask_url(s["url"]) if s.get("url") else "",
                "enabled": instance.enabled,
            }
        super().__init__(*args, **kwargs)
        if instance is not None:
            self.fields["id"].required = False
            self.fields["id"].disabled = True
            self.fields["id"].initial = instance.id
            if instance.id == CONSOLE_TARGET:  # the setting governs it at every start: not editable here
                ws = self.fields["workspace"]
                ws.disabled, ws.required, ws.initial = True, False, str(settings.WORKSPACE_DIR)
                ws.help_text = CONSOLE_WORKSPACE_HELP
        else:
            del self.fields["new_secret"]

    def clean_id(self) -> str:
        if self.instance is not None:
            return self.instance.id
        target_id = self.cleaned_data["id"].strip()
        if target_id == "add":
            raise forms.ValidationError("This id is reserved; pick another.")
        if ChatTarget.objects.filter(pk=target_id).exists():
            raise forms.ValidationError("A chat target with this id exists already.")
        return target_id

    def clean_workspace(self) -> str:
        if self.fields["workspace"].disabled:
            return str(settings.WORKSPACE_DIR)
        path = Path(self.cleaned_data["workspace"].strip())
        if not path.is_absolute():
            raise forms.ValidationError("Enter an absolute path, e.g. /srv/a2aconsole/workspace.")
        if not path.is_dir():
            raise forms.ValidationError("No such folder: create it first, or pick an existing workspace.")
        return str(path)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        backend = data.get("backend")
        chat_id = (data.get("chat_id") or "").strip()
        token_env = (data.get("token_env") or "").strip()
        url = (data.get("url") or "").strip()
        if backend == "telegram":
            if not CHAT_ID.match(chat_id):
                self.add_error("chat_id", "Enter the Telegram chat id: a number like -1001234567890, or @channelname.")
            if token_env and not ENV_NAME.match(token_env):
                self.add_error("token_env", "Enter an environment variable name like TELEGRAM_BOT_TOKEN.")
        if backend == "webhook" and not is_http_url(url):
            self.add_error("url", "Enter an absolute http:// or https:// URL for the webhook.")
        return data

    def save(self) -> tuple[ChatTarget, str | None]:
        """The saved target, and a new webhook secret to show once (None when none was made)."""
        d = self.cleaned_data
        target = self.instance or ChatTarget(id=d["id"])
        old = dict(target.backend_settings or {})
        chosen: dict[str, Any] = {}
        secret = None
        if d["backend"] == "telegram":
            chat_id = d["chat_id"].strip()
            chosen["chat_id"] = int(chat_id) if chat_id.lstrip("-").isdigit() else chat_id
            if d.get("token_env", "").strip():
                chosen["token_env"] = d["token_env"].strip()
        elif d["backend"] == "webhook":
            url = d["url"].strip()
            if old.get("url") and url == mask_url(old["url"]):  # the masked URL came back: keep the stored one
                url = old["url"]
            chosen["url"] = url
            chosen["secret"] = old.get("secret") or ""
            if not chosen["secret"] or d.get("new_secret"):
                chosen["secret"] = secret = new_secret()
        target.name = d["name"].strip()
        target.workspace = d["workspace"]
        target.backend = d["backend"]
        target.backend_settings = chosen
        target.enabled = bool(d.get("enabled"))
        target.save()
        return target, secret


def describe(target: ChatTarget) -> str:
    """Where a target's results go, for pages and the command: never a secret or a token."""
    s = target.backend_settings or {}
    if target.backend == "telegram":
        env = s.get("token_env") or "TELEGRAM_BOT_TOKEN"
        state = "set" if os.environ.get(str(env)) else "NOT SET"
        return f"Telegram chat {s.get('chat_id', '?')} (bot token from ${env}: {state})"
    if target.backend == "webhook":
        url = mask_url(s["url"]) if s.get("url") else "(no URL)"
        return f"Webhook {url} (signed; secret {'set' if s.get('secret') else 'missing'})"
    return "Console inbox"
