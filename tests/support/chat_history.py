"""A long chat history for a running console, written as the console's event sink stores it: for the browser tests
that need more than a page of messages (the chat's "Earlier messages"), without sending each one through the page.

`python -m tests.support.chat_history` with the console's environment (`ConsoleServer.env`: its data folder and
workspace) reads a JSON list of exchanges on stdin, `{"agent", "target", "text", "answer"}` each, and stores each
as the three events an answered send leaves in the history (`sent`, `state` completed, `result`), each exchange
a task of its own in a context of its own, through `broadcast._store_all` (the rows and the Tasks page's rows). No
tab is told: a test reloads its page, which then reads them like any others.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from typing import Any

from tests.support.console_server import ConsoleServer
from tests.support.served_process import ROOT


def echoes(agent: str, texts: list[str], target: str = "console") -> list[dict[str, str]]:
    """The exchanges of an echo agent (tests/support/agents.py) that was sent `texts`, in that order."""
    return [{"agent": agent, "target": target, "text": t, "answer": f"echo: {t}"} for t in texts]


def write(server: ConsoleServer, exchanges: list[dict[str, str]]) -> None:
    """Store `exchanges` in the history of the running `server`, after what it holds; returns once committed."""
    subprocess.run(
        [sys.executable, "-m", "tests.support.chat_history"],
        cwd=ROOT,
        env=server.env,
        input=json.dumps(exchanges),
        text=True,
        check=True,
        capture_output=True,
        timeout=60,
    )


def _events(workspace: str, exchange: dict[str, str]) -> list[Any]:
    from django.utils import timezone

    from a2aconsole.core.events import Event

    where = {
        "workspace": workspace,
        "agent": exchange["agent"],
        "task_id": str(uuid.uuid4()),
        "context_id": str(uuid.uuid4()),
        "target": exchange["target"],
    }
    return [
        Event(kind="sent", at=timezone.now(), text=exchange["text"], **where),
        Event(kind="state", at=timezone.now(), state="completed", **where),
        Event(
            kind="result",
            at=timezone.now(),
            state="completed",
            text=exchange["answer"],
            data={"files": [], "links": [], "skipped": []},
            **where,
        ),
    ]


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "a2aconsole.settings")
    import django

    django.setup()
    from django.conf import settings

    from a2aconsole.web import broadcast

    exchanges = json.load(sys.stdin)
    events = [e for x in exchanges for e in _events(str(settings.WORKSPACE_DIR), x)]
    stored = broadcast._store_all(events)
    failed = [r for r in stored if not isinstance(r, int)]
    if failed:
        raise SystemExit(f"not stored: {failed}")


if __name__ == "__main__":
    main()
