"""The scale-out worker's test setup: its process environment, its commands, a watch for it, what it delivered."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import IO

from a2aconsole.core.clock import SystemClock
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.pending.records import WatchRecord
from a2aconsole.core.remote.client import Remote
from a2aconsole.core.remote.http import new_http_client
from a2aconsole.core.remote.values import TaskSnapshot
from tests.support.agents import TestAgent
from tests.support.watching import add_record, start_task

ROOT = Path(__file__).resolve().parents[2]
REDIS_URL = "redis://127.0.0.1:6379/7"  # a database of its own: other tests' channels never see these messages
MANAGE = [sys.executable, "manage.py"]


@contextlib.asynccontextmanager
async def open_remote() -> AsyncIterator[Remote]:
    """The test's own A2A client, to start tasks the worker then follows."""
    http = new_http_client()
    yield Remote(http, call_timeout=10.0, card_timeout=5.0)
    await http.aclose()


async def console_watch(remote: Remote, ws: Workspace, agent: TestAgent, text: str) -> tuple[TaskSnapshot, WatchRecord]:
    """agents.json names `agent` as bot; a task started with `text` is watched (subscribe) for the console chat."""
    ws.save_agents([{"name": "bot", "url": agent.url}], None)
    task = await start_task(remote, ws, "bot", text)
    return task, await add_record(ws, task, "bot", SystemClock(), target="console", source="subscribe")


def worker_env(data: Path, ws: Workspace, database_url: str | None = None) -> dict[str, str]:
    """A worker process's environment: its data folder, the console's workspace, Redis, and SQLite unless told."""
    env = {
        **os.environ,
        "A2ACONSOLE_DATA": str(data),
        "A2ACONSOLE_WORKSPACE": str(ws.root),  # the console's own workspace: a known one
        "REDIS_URL": REDIS_URL,
        "DJANGO_SETTINGS_MODULE": "a2aconsole.settings",
    }
    if database_url is None:
        env.pop("DATABASE_URL", None)
    else:
        env["DATABASE_URL"] = database_url
    return env


def migrate(env: dict[str, str]) -> None:
    subprocess.run([*MANAGE, "migrate", "-v0"], cwd=ROOT, env=env, check=True, timeout=120)


def start_worker(env: dict[str, str], stderr: IO[str] | None = None) -> subprocess.Popen[bytes]:
    """`manage.py runworker a2a-watches`, the scale-out worker, as its own process."""
    return subprocess.Popen([*MANAGE, "runworker", "a2a-watches"], cwd=ROOT, env=env, stderr=stderr)


def inbox_texts(db: Path) -> list[str]:
    """The console chat's inbox in a worker's SQLite database ([] until it exists and is migrated)."""
    if not db.exists():
        return []
    with sqlite3.connect(db) as c:
        try:
            return [row[0] for row in c.execute("select text from web_inboxitem where target_id = 'console'")]
        except sqlite3.OperationalError:
            return []
