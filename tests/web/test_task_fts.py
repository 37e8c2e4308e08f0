"""Free text through the database's own index (`task_fts`: SQLite FTS5 trigram, PostgreSQL pg_trgm): the same
tasks found on both, rare words through the index, common ones row by row, short words and common phrases
bounded to the newest tasks with a notice; the SQLite index kept in step by triggers and made again if missing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from django.db import connection

from a2aconsole.web import task_fts
from a2aconsole.web.models import TaskRecord
from tests.support import text_search
from tests.support.postgres import fresh_database

ROOT = Path(__file__).resolve().parents[2]


def expected() -> dict[str, list[object]]:
    return {q: [ids, bounded] for q, (ids, bounded) in text_search.CASES.items()}


@pytest.mark.django_db
def test_sqlite_finds_each_case(monkeypatch: pytest.MonkeyPatch) -> None:
    from a2aconsole.web import task_search
    from a2aconsole.web.views import tasklist

    monkeypatch.setattr(task_search, "MANY", task_search.MANY)  # results() makes them small: put them back after
    monkeypatch.setattr(tasklist, "SCAN", tasklist.SCAN)
    text_search.load()
    assert {q: list(v) for q, v in text_search.results().items()} == expected()


@pytest.mark.django_db
def test_sqlite_index_made_again_when_missing() -> None:
    text_search.load()
    with connection.cursor() as c:
        for sql in task_fts.DROP:
            c.execute(sql)
    assert task_fts.ensure() is True and task_fts.ensure() is False  # made once, then there
    assert task_fts.how_many("lisbon", 10) == 1 and task_fts.how_many("li", 10) is None
    TaskRecord.objects.filter(task_id="t-lis").update(search_words="now about porto")
    assert task_fts.how_many("lisbon", 10) == 0 and task_fts.how_many("porto", 10) == 1


@pytest.fixture
def postgres() -> Iterator[str]:
    with fresh_database(f"a2aconsole_fts_{os.getpid()}") as url:
        yield url


@pytest.mark.timeout(180)
def test_postgresql_finds_each_case(postgres: str, tmp_path: Path) -> None:
    env = {**os.environ, "DATABASE_URL": postgres, "A2ACONSOLE_DATA": str(tmp_path / "data")}
    env["DJANGO_SETTINGS_MODULE"] = "a2aconsole.settings"
    run = [sys.executable, "-m", "tests.support.text_search"]
    out = subprocess.run(run, cwd=ROOT, env=env, capture_output=True, text=True, timeout=150)
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["vendor"] == "postgres" and report["found"] == expected()
    with psycopg.connect(postgres.replace("postgres://", "postgresql://")) as c:
        assert c.execute("SELECT 1 FROM pg_indexes WHERE indexname = 'task_record_search_words'").fetchone()
