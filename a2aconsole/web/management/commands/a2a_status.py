"""`manage.py a2a_status [--target ID]`: the spec's `/a2a` listing for a chat target's workspace."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from a2aconsole.core.chat import CONSOLE_TARGET
from a2aconsole.core.files import Workspace
from a2aconsole.core.tool import TARGET_HELP, status_report
from a2aconsole.web.models import ChatTarget


class Command(BaseCommand):
    help = "List the remote agents (URLs masked, keys hidden) and the active watches of a chat target's workspace."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--target", default=CONSOLE_TARGET, help=f"{TARGET_HELP} (default: {CONSOLE_TARGET})")

    def handle(self, *args: Any, **options: Any) -> None:
        target = ChatTarget.objects.filter(pk=options["target"]).first()
        if target is None:
            known = ", ".join(ChatTarget.objects.values_list("id", flat=True)) or "none"
            raise CommandError(f"unknown chat target {options['target']!r} (known: {known})")
        report = status_report(Workspace(target.workspace), enabled=settings.A2A_CLIENT.enabled)
        self.stdout.write(f"Chat target: {target.id} ({target.get_backend_display()})\n{report}")
