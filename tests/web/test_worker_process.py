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
