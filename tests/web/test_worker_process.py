"""Scale-out: `manage.py runworker a2a-watches` in its own process, woken over Redis, delivers a result."""

from __future__ import annotations

import os

from channels_redis.core import RedisChannelLayer

from a2aconsole.core import pending
from tests.support.watching import eventually
from tests.support.worker_env import REDIS_URL, console_watch, inbox_texts, migrate, start_worker, worker_env


async def test_runworker_follows_a_watch_it_was_woken_for(make_agent, workspace, remote, tmp_path) -> None:
    agent = make_agent(push=False)
    task, rec = await console_watch(remote, workspace, agent, "hold rw")

    data = tmp_path / "data"
    env = worker_env(data, workspace)
    migrate(env)
    worker = start_worker(env)
    layer = RedisChannelLayer(hosts=[REDIS_URL])
    try:
        # a web process wrote the record and wakes the worker (at most once: it also rescans by itself)
        await layer.send("a2a-watches", {"type": "watch.arm", "workspace": str(workspace.root)})
        await eventually(lambda: "SubscribeToTask" in agent.methods, timeout=30, what="the worker to subscribe")
        agent.release("rw")
        await eventually(lambda: pending.read(workspace).records == [], timeout=30, what="delivery")
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
    task, _ = await console_watch(remote, workspace, agent, "hold pg")

    name = f"a2aconsole_worker_{os.getpid()}"
    db_url = _postgres_db(name)
    env = worker_env(tmp_path / "data", workspace, database_url=db_url)
    worker = None
    try:
        migrate(env)
        worker = start_worker(env)
        await eventually(lambda: "SubscribeToTask" in agent.methods, timeout=30, what="the worker to restore")
        agent.release("pg")
        await eventually(lambda: pending.read(workspace).records == [], timeout=30, what="delivery")
        texts = _postgres_inbox(db_url)
        assert len(texts) == 1 and "released pg" in texts[0] and task.id in texts[0]
    finally:
        if worker is not None:
            worker.kill()
            worker.wait(timeout=10)
        _drop_postgres_db(name)
