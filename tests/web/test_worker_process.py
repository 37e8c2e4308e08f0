"""Scale-out: `manage.py runworker a2a-watches` in its own process, woken over Redis, delivers a result."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from channels_redis.core import RedisChannelLayer

from a2aconsole.core.client import Remote, new_http_client
from a2aconsole.core.clock import SystemClock
from tests.support.watching import add_record, eventually, start_task

ROOT = Path(__file__).resolve().parents[2]
REDIS_URL = "redis://127.0.0.1:6379/7"  # a database of its own: other tests' channels never see these messages


@pytest.fixture
async def remote() -> AsyncIterator[Remote]:
    http = new_http_client()
    yield Remote(http, call_timeout=10.0, card_timeout=5.0)
    await http.aclose()


def inbox_texts(db: Path) -> list[str]:
    if not db.exists():
        return []
    with sqlite3.connect(db) as c:
        try:
            return [row[0] for row in c.execute("select text from web_inboxitem where target_id = 'console'")]
        except sqlite3.OperationalError:
            return []


async def test_runworker_follows_a_watch_it_was_woken_for(make_agent, workspace, remote, tmp_path) -> None:
    agent = make_agent(push=False)
    workspace.save_agents([{"name": "bot", "url": agent.url}], None)
    task = await start_task(remote, workspace, "bot", "hold rw")
    rec = await add_record(workspace, task, "bot", SystemClock(), target="console", source="subscribe")

    data = tmp_path / "data"
    env = {
        **os.environ,
        "A2ACONSOLE_DATA": str(data),
        "A2ACONSOLE_WORKSPACE": str(workspace.root),  # the console's own workspace: a known one
        "REDIS_URL": REDIS_URL,
        "DJANGO_SETTINGS_MODULE": "a2aconsole.settings",
    }
    env.pop("DATABASE_URL", None)
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "-v0"], cwd=ROOT, env=env, check=True, timeout=120)  # noqa: ASYNC221
    worker = subprocess.Popen([*manage, "runworker", "a2a-watches"], cwd=ROOT, env=env)  # noqa: ASYNC220
    layer = RedisChannelLayer(hosts=[REDIS_URL])
    try:
        # a web process wrote the record and wakes the worker (at most once: it also rescans by itself)
        await layer.send("a2a-watches", {"type": "watch.arm", "workspace": str(workspace.root)})
        await eventually(lambda: "SubscribeToTask" in agent.methods, timeout=30, what="the worker to subscribe")
        agent.release("rw")
        await eventually(lambda: workspace.read_pending().records == [], timeout=30, what="delivery")
        texts = inbox_texts(data / "db.sqlite3")
        assert len(texts) == 1 and "released rw" in texts[0] and task.id in texts[0]
        assert rec.watch_id
    finally:
        worker.kill()
        worker.wait(timeout=10)
        await layer.flush()
        await layer.close_pools()


def _postgres_db(name: str) -> str:
    """A fresh PostgreSQL database on the machine's server (trust auth), for a scale-out process to use."""
    import psycopg

    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as c:
        c.execute(f'DROP DATABASE IF EXISTS "{name}"')
        c.execute(f'CREATE DATABASE "{name}"')
    return f"postgres://postgres@127.0.0.1:5432/{name}"


def _drop_postgres_db(name: str) -> None:
    import psycopg

    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as c:
        c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _postgres_inbox(url: str) -> list[str]:
    import psycopg

    with psycopg.connect(url.replace("postgres://", "postgresql://")) as c:
        return [r[0] for r in c.execute("select text from web_inboxitem where target_id = 'console'")]


async def test_runworker_on_postgres_restores_watches_at_start_without_a_message(
    make_agent, workspace, remote, tmp_path
) -> None:
    """The scale-out worker on PostgreSQL + Redis restores pending.json as it starts: no wake-up needed."""
    agent = make_agent(push=False)
    workspace.save_agents([{"name": "bot", "url": agent.url}], None)
    task = await start_task(remote, workspace, "bot", "hold pg")
    await add_record(workspace, task, "bot", SystemClock(), target="console", source="subscribe")

    name = f"a2aconsole_worker_{os.getpid()}"
    db_url = _postgres_db(name)
    env = {
        **os.environ,
        "A2ACONSOLE_DATA": str(tmp_path / "data"),
        "A2ACONSOLE_WORKSPACE": str(workspace.root),
        "REDIS_URL": REDIS_URL,
        "DATABASE_URL": db_url,
        "DJANGO_SETTINGS_MODULE": "a2aconsole.settings",
    }
    manage = [sys.executable, "manage.py"]
    worker = None
    try:
        subprocess.run([*manage, "migrate", "-v0"], cwd=ROOT, env=env, check=True, timeout=120)  # noqa: ASYNC221
        worker = subprocess.Popen([*manage, "runworker", "a2a-watches"], cwd=ROOT, env=env)  # noqa: ASYNC220
        await eventually(lambda: "SubscribeToTask" in agent.methods, timeout=30, what="the worker to restore")
        agent.release("pg")
        await eventually(lambda: workspace.read_pending().records == [], timeout=30, what="delivery")
        texts = _postgres_inbox(db_url)
        assert len(texts) == 1 and "released pg" in texts[0] and task.id in texts[0]
    finally:
        if worker is not None:
            worker.kill()
            worker.wait(timeout=10)
        _drop_postgres_db(name)
