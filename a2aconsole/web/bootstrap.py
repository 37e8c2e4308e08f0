"""What a serving process makes sure exists before it answers: the workspace folder and the default chat."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

from a2aconsole.web.models import ChatTarget

CONSOLE_TARGET_ID = "console"


def ensure_workspace_dir() -> Path:
    path = Path(settings.WORKSPACE_DIR)
    path.mkdir(parents=True, exist_ok=True)
    return path


def ensure_console_target() -> ChatTarget:
    """The default chat target `console` (web inbox over settings.WORKSPACE_DIR). An existing row is kept as is."""
    target, _ = ChatTarget.objects.get_or_create(
        id=CONSOLE_TARGET_ID,
        defaults={"name": "Console", "workspace": str(settings.WORKSPACE_DIR), "backend": "web"},
    )
    return target
