"""Scale-out: web processes started together on a fresh PostgreSQL database all come up, with one owner.

Before the start lock, two `serve`s raced in `migrate` (`relation ... already exists`, a duplicate `pg_type` row)
and in creating the owner (`auth_user_username_key`), and one of them crashed.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest

from tests.support.console_server import OWNER, ConsoleServer
from tests.support.postgres import fresh_database

PROCESSES = 3

pytestmark = [pytest.mark.timeout(180)]


@pytest.fixture
def fresh_postgres() -> Iterator[str]:
    with fresh_database(f"a2aconsole_start_{os.getpid()}") as url:
        yield url


def test_web_processes_started_together_all_serve_with_one_owner(fresh_postgres: str, tmp_path: Path) -> None:
    servers = [
        ConsoleServer(tmp_path / f"web{i}", DATABASE_URL=fresh_postgres, A2ACONSOLE_WATCH_WORKER="external")
        for i in range(PROCESSES)
    ]
    try:
        with ThreadPoolExecutor(PROCESSES) as pool:
            started = list(pool.map(lambda s: s.start(timeout=90), servers))  # raises if one exits before serving
        for s in started:
            out = "\n".join(s.lines)
            assert s.proc is not None and s.proc.poll() is None, out
            assert "Traceback" not in out and "IntegrityError" not in out, out
        with psycopg.connect(fresh_postgres.replace("postgres://", "postgresql://")) as c:
            owners = c.execute("select username from auth_user where is_superuser").fetchall()
            consoles = c.execute("select count(*) from web_chattarget where id = 'console'").fetchone()
        assert owners == [(OWNER,)]
        assert consoles == (1,)
    finally:
        for s in servers:
            s.stop()
