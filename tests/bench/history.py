"""Benchmark (a script, not collected by pytest): the Tasks page over a history of a million tasks.

    .venv/bin/python -m tests.bench.history [--tasks 1000000] [--runs 20] [--postgres] [--explain] [--keep]

Generates the history as the console keeps it: task rows (`TaskRecord`, folded as `task_index.fold` does, their
`search_words` too) and six events a task (sent, watch armed, working, progress, result, delivered; a running task
has progress instead of an end), over two years, twenty agents, ten chats, the states' usual spread, texts whose
words are rare (a reference ten tasks share), middling (one of 200 project names: 0.5% of tasks) and common.
Loaded fast (the indexes and the SQLite FTS triggers dropped, rows written with executemany on SQLite, COPY on
PostgreSQL, then the indexes made and the FTS index filled, as the migrations make them), into a fresh SQLite
database in a temporary folder, or with `--postgres` a throwaway database on 127.0.0.1:5432 (trust; dropped after).
With `--keep` the history is kept (SQLite: in `KEPT`, named by the number of tasks; PostgreSQL: not dropped) and
a later `--keep` run of the same size reuses it, the migrations since applied to it: generating a million tasks
takes minutes. On SQLite the planner's statistics are then refreshed as the daily upkeep does
(`retention.refresh_statistics`).

Then times each Tasks page query as the server renders it (the Django test client: middleware, view, queries,
template): the first page, each filter, each sort, free text with rare / middling / common / short words and
quoted phrases, a later page and the last page. Prints p50 and p99 per query (target: each under 200 ms) and the
load average; `--explain` prints each query's plan and flags a full scan of the task table.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
BENCH_DB = "a2aconsole_bench_history"
KEPT = Path(tempfile.gettempdir()) / "a2a-bench-history"  # `--keep`: the SQLite histories, by size
AGENTS = [
    f"agent-{n}" for n in ("travel", "poet", "research", "coder", "helper", "sales", "legal", "ops", "hr", "data")
]
AGENTS += [f"{a}-2" for a in AGENTS]
CHATS = ["console", "team", "ops-room", "sales", "alice", "bob", "night", "legal", "build", "support"]
# the states' usual spread: most tasks complete
STATES = ["completed"] * 80 + ["failed"] * 6 + ["canceled"] * 4 + ["rejected"] * 2 + ["lost"] * 2
STATES += ["working"] * 3 + ["input-required"] * 2 + ["submitted"]
TERMINAL = {"completed", "failed", "canceled", "rejected", "lost"}
SOURCES = ("push", "poll", "subscribe")
SYLLABLES = ("ka", "lo", "mi", "ra", "zu", "ve", "do", "ni", "ta", "qe", "bo", "si", "fu", "xa")
PROJECTS = [a + b + c + "x" for a in SYLLABLES for b in SYLLABLES for c in SYLLABLES[:2]][:200]  # 0.5% each
CADENCES = ("weekly", "daily", "monthly", "quarterly", "yearly", "hourly", "nightly")
TOPICS = ("sales", "travel", "budget", "hiring", "release", "incident", "market", "contract", "audit", "support")
T0 = datetime(2025, 1, 1, tzinfo=UTC)
SPAN = 2 * 365 * 86400  # two years of history


def queries(tasks: int) -> dict[str, str]:
    mid = PROJECTS[17]
    return {
        "first page": "/tasks/",
        "filter state:failed": "/tasks/?q=state%3Afailed",
        "filter state:working": "/tasks/?q=state%3Aworking",
        "filter agent:": f"/tasks/?q=agent%3A{AGENTS[3]}",
        "filter chat:": "/tasks/?q=chat%3Aops-room",
        "filter source:push": "/tasks/?q=source%3Apush",
        "filter after: (a month)": "/tasks/?q=after%3A2026-12-01",
        "filter on: + state:": "/tasks/?q=on%3A2026-06-01+state%3Acompleted",
        "sort started": "/tasks/?sort=started",
        "sort -updated": "/tasks/?sort=-updated",
        "sort -duration": "/tasks/?sort=-duration",
        "sort duration": "/tasks/?sort=duration",
        "sort agent": "/tasks/?sort=agent",
        "sort -state": "/tasks/?sort=-state",
        "sort chat": "/tasks/?sort=chat",
        "state:failed sort agent": "/tasks/?q=state%3Afailed&sort=agent",
        "state:completed sort -duration": "/tasks/?q=state%3Acompleted&sort=-duration",
        "agent: sort -duration": f"/tasks/?q=agent%3A{AGENTS[3]}&sort=-duration",
        "state:working sort duration": "/tasks/?q=state%3Aworking&sort=duration",
        "chat: sort -duration": "/tasks/?q=chat%3Aops-room&sort=-duration",
        "source: sort -duration": "/tasks/?q=source%3Apush&sort=-duration",
        "agent: sort -updated": f"/tasks/?q=agent%3A{AGENTS[3]}&sort=-updated",
        "chat: sort state": "/tasks/?q=chat%3Aops-room&sort=state",
        "source: sort agent": "/tasks/?q=source%3Apoll&sort=agent",
        "chat: sort -updated": "/tasks/?q=chat%3Aops-room&sort=-updated",
        "agent: sort chat": f"/tasks/?q=agent%3A{AGENTS[3]}&sort=chat",
        "chat: sort agent": "/tasks/?q=chat%3Aops-room&sort=agent",
        "text rare (10 tasks)": "/tasks/?q=ref04242",
        f"text middling ({tasks // 200:,} tasks)": f"/tasks/?q={mid}",
        "text common (60%)": "/tasks/?q=report",
        "text none": "/tasks/?q=zzyzx",
        "text short (2 chars)": "/tasks/?q=qz",
        "text rare + state:": "/tasks/?q=state%3Acompleted+ref04242",
        "text middling + agent:": f"/tasks/?q=agent%3A{AGENTS[3]}+{mid}",
        "phrase, common words": "/tasks/?q=%22weekly+report%22",
        "phrase, common words, absent": "/tasks/?q=%22report+weekly%22",
        "phrase with a middling word": f"/tasks/?q=%22{mid}+weekly%22",
        "last page": "/tasks/?last=1",
        "last page, sort agent": "/tasks/?sort=agent&last=1",
    }


def words(*texts: str) -> str:
    from a2aconsole.web.task_index import search_words

    names = ("task_id", "context_id", "sent_text", "last_text", "result_text")
    return search_words(SimpleNamespace(**dict(zip(names, texts, strict=True))))


def generate(lo: int, count: int, n: int, vendor: str) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The rows of tasks lo..lo+count of a history of `n` and their events, in the database's column order
    (`TASK_COLUMNS`, `EVENT_COLUMNS`): a chunk at a time, so memory stays bounded."""

    def when(dt: datetime | None) -> Any:  # SQLite keeps times as Django writes them: UTC text
        if dt is None or vendor == "postgresql":
            return dt
        return str(dt.replace(tzinfo=None))

    tasks, events = [], []
    for i in range(lo, lo + count):
        agent, chat = AGENTS[i * 7 % len(AGENTS)], CHATS[i * 3 % len(CHATS)]
        state = STATES[i * 37 % len(STATES)]
        done = state in TERMINAL
        started = T0 + timedelta(seconds=i * SPAN // n + i % 13)
        took = 5 + (i * 7919) % 3600
        finished = started + timedelta(seconds=took) if done else None
        task_id, ctx = f"{i:08x}-5c1e-4d2b-9f3a-{i * 7919 % 16**12:012x}", f"ctx-{i // 3:08x}"
        cadence, topic = CADENCES[i % len(CADENCES)], TOPICS[i * 11 % len(TOPICS)]
        project = PROJECTS[i * 13 % len(PROJECTS)]
        sent = f"{cadence} {topic} summary for {project}, ref{i % 100_000:05d}"
        report = "report " if i % 5 < 3 else ""
        result = (
            f"Here is the {cadence} {report}on {topic} for {project}: numbers are up, costs steady, two open "
            f"questions for the owner. Sources attached; next review in a week. ok"
        )
        progress = f"working on step {i % 8 + 1} of 8"
        source = SOURCES[i % 3]
        last = result if done else progress
        updated = finished or started + timedelta(seconds=30)
        tasks.append(
            (i + 1, agent, task_id, "/srv/workspace", chat, ctx, state, source, sent, last,
             result if done else "", progress, when(started + timedelta(seconds=20)), when(started),
             when(updated), when(finished), float(took) if done else None, 6,
             words(task_id, ctx, sent, last, result if done else ""))
        )  # fmt: skip
        base = (agent, task_id, ctx, chat)
        data = f'{{"source": "{source}", "watchId": "w{i}"}}'
        steps = [
            ("sent", "", sent, "{}", started),
            ("watch.armed", "", "", data, started + timedelta(seconds=1)),
            ("state", "working", "", "{}", started + timedelta(seconds=2)),
            ("progress", "", progress, "{}", started + timedelta(seconds=20)),
        ]
        if done:
            steps += [("result", state, result, "{}", finished), ("delivered", state, "", data, finished)]
        else:
            steps += [("progress", "", progress, "{}", updated), ("progress", "", progress, "{}", updated)]
        for kind, st, text, d, at in steps:
            read = when(at) if kind == "result" else None
            events.append(("/srv/workspace", *base, kind, st, text, d, when(at), "", read))
    return tasks, events


TASK_COLUMNS = [
    "id",
    "agent",
    "task_id",
    "workspace",
    "target",
    "context_id",
    "state",
    "source",
    "sent_text",
    "last_text",
    "result_text",
    "progress",
    "progress_at",
    "started_at",
    "updated_at",
    "finished_at",
    "run_seconds",
    "events",
    "search_words",
]
EVENT_COLUMNS = [
    "workspace",
    "agent",
    "task_id",
    "context_id",
    "target",
    "kind",
    "state",
    "text",
    "data",
    "created_at",
    "key",
    "read_at",
]
TABLES = ("web_taskrecord", "web_taskevent")


def load(n: int) -> float:
    """Fill the task table and the event history with `n` tasks; the seconds it took."""
    from django.db import connection

    from a2aconsole.web import task_fts

    start = time.perf_counter()
    vendor = connection.vendor
    with connection.cursor() as c:
        if vendor == "sqlite":
            c.execute("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
                      " AND tbl_name IN ('web_taskrecord', 'web_taskevent')")  # fmt: skip
            indexes = c.fetchall()
            for sql in task_fts.DROP:
                c.execute(sql)
        else:
            c.execute(
                "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = ANY(%s) AND indexname NOT IN "
                "(SELECT conname FROM pg_constraint)",
                [list(TABLES)],
            )
            indexes = c.fetchall()
        for name, _ in indexes:
            c.execute(f'DROP INDEX "{name}"')
    chunk = 50_000
    raw = connection.connection
    for lo in range(0, n, chunk):
        tasks, events = generate(lo, min(chunk, n - lo), n, vendor)
        if vendor == "sqlite":
            marks = ",".join("?" * len(TASK_COLUMNS))
            raw.executemany(f"INSERT INTO web_taskrecord ({','.join(TASK_COLUMNS)}) VALUES ({marks})", tasks)
            marks = ",".join("?" * len(EVENT_COLUMNS))
            raw.executemany(f"INSERT INTO web_taskevent ({','.join(EVENT_COLUMNS)}) VALUES ({marks})", events)
            raw.commit()
        else:
            with raw.cursor() as cur:
                with cur.copy(f"COPY web_taskrecord ({','.join(TASK_COLUMNS)}) FROM STDIN") as cp:
                    for row in tasks:
                        cp.write_row(row)
                with cur.copy(f"COPY web_taskevent ({','.join(EVENT_COLUMNS)}) FROM STDIN") as cp:
                    for row in events:
                        cp.write_row(row)
            raw.commit()
        print(f"  {lo + len(tasks):>9,} tasks loaded ({time.perf_counter() - start:.0f} s)", flush=True)
    with connection.cursor() as c:
        for _, sql in indexes:
            c.execute(sql)
        if vendor == "sqlite":
            for sql in task_fts.CREATE:
                c.execute(sql)
            c.execute(task_fts.FILL)
        else:
            c.execute("SELECT setval(pg_get_serial_sequence('web_taskrecord', 'id'), %s)", [n])
            for table in TABLES:  # as autovacuum would after such a load (the visibility map: index-only scans)
                c.execute(f"VACUUM ANALYZE {table}")
    return time.perf_counter() - start


def measure(client: Any, url: str, runs: int) -> tuple[float, float, int]:
    for _ in range(2):  # warm the template and the database's caches
        client.get(url)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        r = client.get(url)
        times.append((time.perf_counter() - start) * 1000)
        assert r.status_code == 200, (url, r.status_code)
    times.sort()
    found = re.search(r"(\d[\d,–]*) of ([\d,+]+) task", r.content.decode())
    return statistics.median(times), times[min(len(times) - 1, round(len(times) * 0.99) - 1)], found


def explain(client: Any, url: str) -> list[str]:
    """The plans of the task-table queries one request makes; a line marked FULL SCAN reads the whole table."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        client.get(url)
    lines = []
    for q in captured.captured_queries:
        sql = q["sql"]
        if '"web_taskrecord"' not in sql or not sql.startswith("SELECT"):
            continue
        with connection.cursor() as c:
            c.execute(("EXPLAIN QUERY PLAN " if connection.vendor == "sqlite" else "EXPLAIN ") + sql)
            plan = [" ".join(str(x) for x in row[-1:]) for row in c.fetchall()]
        full = any(re.match(r"SCAN web_taskrecord$", p.strip()) or "Seq Scan on web_taskrecord" in p for p in plan)
        line = ("FULL SCAN " if full else "") + " | ".join(p.strip() for p in plan)[:400]
        lines += [] if line in lines else [line]
    return lines


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--postgres", action="store_true")
    ap.add_argument("--explain", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the history, reuse one kept of this size")
    args = ap.parse_args()

    if args.keep and not args.postgres:
        data = KEPT / str(args.tasks)
        data.mkdir(parents=True, exist_ok=True)
        os.environ["A2ACONSOLE_DATA"] = str(data)
    else:
        os.environ["A2ACONSOLE_DATA"] = tempfile.mkdtemp(prefix="a2a-bench-history-")
    os.environ["A2ACONSOLE_WORKSPACE"] = tempfile.mkdtemp(prefix="a2a-bench-ws-")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "a2aconsole.settings")
    if args.postgres:
        import psycopg

        with psycopg.connect(ADMIN, autocommit=True) as c:
            kept = args.keep and c.execute("SELECT 1 FROM pg_database WHERE datname = %s", [BENCH_DB]).fetchone()
            if not kept:
                c.execute(f'DROP DATABASE IF EXISTS "{BENCH_DB}" WITH (FORCE)')
                c.execute(f'CREATE DATABASE "{BENCH_DB}"')
        os.environ["DATABASE_URL"] = f"postgres://postgres@127.0.0.1:5432/{BENCH_DB}"
    else:
        os.environ.pop("DATABASE_URL", None)
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client

    try:
        settings.ALLOWED_HOSTS = ["*"]
        start = time.perf_counter()
        call_command("migrate", verbosity=0)
        print(f"migrated in {time.perf_counter() - start:.1f} s", flush=True)
        user, _ = get_user_model().objects.get_or_create(username="owner")
        client = Client()
        client.force_login(user)
        from a2aconsole.web.models import TaskRecord

        if args.keep and TaskRecord.objects.count() == args.tasks:
            print(f"{connection.vendor}: reusing the kept history of {args.tasks:,} tasks", flush=True)
        else:
            with connection.cursor() as c:  # a kept history of another size, or a load cut short
                for table in TABLES:
                    c.execute(f"DELETE FROM {table}")
            print(f"{connection.vendor}: loading {args.tasks:,} tasks, {args.tasks * 6:,} events", flush=True)
            took = load(args.tasks)
            print(f"loaded in {took:.0f} s; load average {os.getloadavg()[0]:.2f}", flush=True)
        if connection.vendor == "sqlite":  # as the daily upkeep has (PostgreSQL: ANALYZE in `load`, autovacuum)
            from a2aconsole.web.retention import refresh_statistics

            start = time.perf_counter()
            refresh_statistics()
            print(f"statistics refreshed in {time.perf_counter() - start:.1f} s", flush=True)
        urls = queries(args.tasks)
        first = client.get("/tasks/").content.decode()
        [after] = re.findall(r'<a href="(\?after=[^"]+)" rel="next">', first)
        urls["next page"] = "/tasks/" + after
        over = []
        for name, url in urls.items():
            p50, p99, found = measure(client, url, args.runs)
            shown = f"{found.group(1)} of {found.group(2)}" if found else "none"
            mark = "" if p99 < 200 else "  OVER 200 ms"
            over += [name] if mark else []
            print(f"{name:<34} p50 {p50:7.1f} ms  p99 {p99:7.1f} ms  {shown:<22}{mark}", flush=True)
            if args.explain:
                for line in explain(client, url):
                    print(f"    {line}")
        print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; over target: {over or 'none'}")
    finally:
        if args.postgres and not args.keep:
            connection.close()
            import psycopg

            with psycopg.connect(ADMIN, autocommit=True) as c:
                c.execute(f'DROP DATABASE IF EXISTS "{BENCH_DB}" WITH (FORCE)')


if __name__ == "__main__":
    main()
