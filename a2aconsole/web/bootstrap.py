"""What a serving process makes sure exists before it answers: the schema, the workspace folder, the default chat.

Web processes of a scale-out start together against one database; `start_lock` serialises their start-up work
(migrations, the default chat, the owner) so they never race to create the same tables or rows.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path

from django.conf import settings
from django.db import connections

from a2aconsole.core.chat import CONSOLE_TARGET
from a2aconsole.core.files import lock_for
from a2aconsole.web.models import ChatTarget

log = logging.getLogger(__name__)

START_LOCK_KEY = 0x6132_6163_6F6E  # "a2acon": the PostgreSQL advisory lock of start-up work


@contextlib.contextmanager
def start_lock() -> Iterator[None]:
    """Held around start-up work: one process at a time per database.

    PostgreSQL: a session advisory lock on a connection of its own (released by the server if the process dies).
    SQLite: the database lives in the data folder, so a file lock beside it serves every process that uses it.
    """
    if connections["default"].vendor != "postgresql":
        with lock_for(Path(settings.DATA_DIR) / ".start.lock").hold():
            yield
        return
    conn = connections.create_connection("default")
    try:
        with conn.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s)", [START_LOCK_KEY])
        try:
            yield
        finally:
            with conn.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [START_LOCK_KEY])
    finally:
        conn.close()


def ensure_workspace_dir() -> Path:
    path = Path(settings.WORKSPACE_DIR)
    path.mkdir(parents=True, exist_ok=True)
    return path


def ensure_console_target() -> ChatTarget:
    """The default chat target `console`, a web inbox over settings.WORKSPACE_DIR.

    The setting (`A2ACONSOLE_WORKSPACE`) is the one source of truth of its workspace: a row left by an earlier
    start with another folder is brought in line (its name and the rest are the owner's, and stay)."""
    workspace = str(settings.WORKSPACE_DIR)
    target, created = ChatTarget.objects.get_or_create(
        id=CONSOLE_TARGET, defaults={"name": "Console", "workspace": workspace, "backend": "web"}
    )
    if not created and target.workspace != workspace:
        log.info("chat target %s: workspace %s -> %s (A2ACONSOLE_WORKSPACE)", target.id, target.workspace, workspace)
        target.workspace = workspace
        target.save(update_fields=["workspace"])
    return target
