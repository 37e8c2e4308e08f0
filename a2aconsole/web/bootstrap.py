"""What a serving process makes sure exists before it answers: the schema, the workspace folder, the default chat.

Web processes of a scale-out start together against one database; `start_lock` serialises their start-up work
(migrations, the default chat, the owner) so they never race to create the same tables or rows.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from django.conf import settings
from django.db import connections

from a2aconsole.core.files import lock_for
from a2aconsole.web.models import ChatTarget

CONSOLE_TARGET_ID = "console"
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
    """The default chat target `console` (web inbox over settings.WORKSPACE_DIR). An existing row is kept as is."""
    target, _ = ChatTarget.objects.get_or_create(
        id=CONSOLE_TARGET_ID,
        defaults={"name": "Console", "workspace": str(settings.WORKSPACE_DIR), "backend": "web"},
    )
    return target
