"""`manage.py targets list|add|edit|disable|enable|token|revoke`: chat targets and their API tokens.

New API tokens and webhook secrets are printed once; only their hashes (tokens) or the target's own
settings (secrets) keep them, and no later listing shows them again.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from a2aconsole.core.chat import CONSOLE_TARGET
from a2aconsole.web.chat_targets import CONSOLE_WORKSPACE_HELP, TargetForm, describe
from a2aconsole.web.models import ApiToken, ChatTarget


def _fields(parser: Any, *, adding: bool) -> None:
    parser.add_argument("--name", required=adding)
    parser.add_argument("--workspace", required=adding, help="absolute path of the workspace folder")
    parser.add_argument("--backend", choices=[b for b, _ in ChatTarget.BACKENDS], default="web" if adding else None)
    parser.add_argument("--chat-id", help="telegram: chat id")
    parser.add_argument("--token-env", help="telegram: env variable holding the bot token")
    parser.add_argument("--url", help="webhook: the host's URL")


class Command(BaseCommand):
    help = "Manage chat targets (where results go) and their API tokens."

    def add_arguments(self, parser: Any) -> None:
        sub = parser.add_subparsers(dest="command", required=True)
        sub.add_parser("list", help="list targets and their tokens")
        add = sub.add_parser("add", help="add a target")
        add.add_argument("id")
        _fields(add, adding=True)
        edit = sub.add_parser("edit", help="change a target")
        edit.add_argument("id")
        _fields(edit, adding=False)
        edit.add_argument("--new-secret", action="store_true", help="webhook: make a new signing secret")
        for name in ("disable", "enable"):
            sub.add_parser(name, help=f"{name} a target").add_argument("id")
        token = sub.add_parser("token", help="make an API token for a target (printed once)")
        token.add_argument("id")
        token.add_argument("--name", default="", help="what the token is for")
        revoke = sub.add_parser("revoke", help="revoke an API token by its prefix")
        revoke.add_argument("id")
        revoke.add_argument("prefix", help="the token's prefix as `targets list` shows it (or the whole token)")

    def handle(self, *args: Any, **options: Any) -> None:
        getattr(self, "cmd_" + options["command"])(options)

    def _target(self, target_id: str) -> ChatTarget:
        target = ChatTarget.objects.filter(pk=target_id).first()
        if target is None:
            known = ", ".join(ChatTarget.objects.values_list("id", flat=True)) or "none"
            raise CommandError(f"unknown chat target {target_id!r} (known: {known})")
        return target

    def cmd_list(self, options: dict[str, Any]) -> None:
        targets = list(ChatTarget.objects.prefetch_related("api_tokens"))
        if not targets:
            self.stdout.write("No chat targets.")
        for t in targets:
            state = "enabled" if t.enabled else "DISABLED"
            self.stdout.write(f"{t.id}  {t.name}  [{t.backend}, {state}]  hops {t.inbound_hops}")
            self.stdout.write(f"  workspace: {t.workspace}\n  delivery: {describe(t)}")
            for tok in t.api_tokens.all():
                status = f"revoked {tok.revoked_at:%Y-%m-%d %H:%M}" if tok.revoked_at else "active"
                used = f"last used {tok.last_used_at:%Y-%m-%d %H:%M}" if tok.last_used_at else "never used"
                self.stdout.write(f"  token {tok.prefix}…  {tok.name or '-'}  {status}, {used}")

    def _save(self, form: TargetForm, verb: str) -> None:
        if not form.is_valid():
            problems = "; ".join(
                f"{'--' + k.replace('_', '-') if k != '__all__' else ''} {m}".strip()
                for k, msgs in form.errors.items()
                for m in msgs
            )
            raise CommandError(problems)
        target, secret = form.save()
        self.stdout.write(f"{verb} chat target {target.id}: {describe(target)}")
        if secret:
            self.stdout.write(
                f"Webhook signing secret (shown once; give it to the host, it is not shown again):\n{secret}"
            )

    def cmd_add(self, options: dict[str, Any]) -> None:
        data = {k: options.get(k) or "" for k in ("id", "name", "workspace", "backend", "chat_id", "token_env", "url")}
        data["enabled"] = "on"
        self._save(TargetForm(data=data), "Added")

    def cmd_edit(self, options: dict[str, Any]) -> None:
        target = self._target(options["id"])
        if target.id == CONSOLE_TARGET and options.get("workspace") is not None:
            raise CommandError(f"--workspace: {CONSOLE_WORKSPACE_HELP}")
        current = TargetForm(instance=target).initial
        data = {k: v for k, v in current.items() if v not in (None, False)}
        for k in ("name", "workspace", "backend", "chat_id", "token_env", "url"):
            if options.get(k) is not None:
                data[k] = options[k]
        data["enabled"] = "on" if target.enabled else ""
        data["new_secret"] = "on" if options.get("new_secret") else ""
        self._save(TargetForm(data=data, instance=target), "Changed")

    def cmd_disable(self, options: dict[str, Any]) -> None:
        self._set_enabled(options["id"], False)

    def cmd_enable(self, options: dict[str, Any]) -> None:
        self._set_enabled(options["id"], True)

    def _set_enabled(self, target_id: str, enabled: bool) -> None:
        target = self._target(target_id)
        target.enabled = enabled
        target.save(update_fields=["enabled"])
        self.stdout.write(f"Chat target {target.id} {'enabled' if enabled else 'disabled'}.")

    def cmd_token(self, options: dict[str, Any]) -> None:
        target = self._target(options["id"])
        row, token = ApiToken.issue(target, options["name"])
        self.stdout.write(f"API token {row.prefix}… for chat target {target.id} (shown once; store it now):\n{token}")

    def cmd_revoke(self, options: dict[str, Any]) -> None:
        target = self._target(options["id"])
        prefix = options["prefix"].rstrip("…").strip()
        matches = [t for t in target.api_tokens.filter(revoked_at__isnull=True) if prefix.startswith(t.prefix)]
        if len(prefix) < 8 or not matches:
            raise CommandError(f"no active token of {target.id} starts with {prefix[:12]!r} (see `targets list`)")
        for t in matches:
            t.revoke()
        self.stdout.write(f"Revoked {len(matches)} token(s) of {target.id}.")
