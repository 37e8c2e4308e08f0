"""Benchmark (a script, not collected by pytest): the Tasks page and the watch table, with few and with many rows.

    .venv/bin/python -m tests.bench.tasks_page [--small 10] [--large 10000] [--runs 30]

Fills a fresh SQLite database (in a temporary data folder) with task index rows as the console keeps them
(a sent text, a last message and a 1,000-character result each, a spread of agents, states and dates), then times
the page as the server renders it (the Django test client: middleware, view, queries, template) for the
first page, a search, a sort by duration and a later page. Prints the best, median and p90 server time
and the page size for each, and the ratios large/small (on a shared machine the best of N is the steadier
figure). Targets: at most 2x, the page under 200 KB. With DATABASE_URL set (postgres://...), the same on that
database (its web_taskrecord rows are replaced). Then the same for the watch table (/watches/) with as many watches
in the console workspace's pending.json: its first page, a search and a later page.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from a2aconsole.core import pending

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

AGENTS = ("travel-bot", "poet", "researcher", "coder", "helper")
STATES = ("completed", "completed", "completed", "failed", "working", "input-required", "canceled")
QUERIES = {
    "first page": "/tasks/",
    "search": "/tasks/?q=state%3Acompleted+agent%3Apoet+lisbon",
    "sort by duration": "/tasks/?sort=-duration",
    "date + last page": "/tasks/?q=after%3A2026-06-01&last=1",
}


def fill(count: int) -> None:
    from a2aconsole.web.models import TaskRecord
    from a2aconsole.web.task_index import search_words

    TaskRecord.objects.all().delete()
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    rows = []
    for i in range(count):
        state = STATES[i % len(STATES)]
        # spread over the year whatever the count: with 10 tasks too, some start after June (the date search's
        # page shows rows, not "no task matches")
        started = t0 + timedelta(minutes=i * 365 * 24 * 60 // count + i % 7)
        done = state in ("completed", "failed", "canceled")
        rows.append(
            TaskRecord(
                agent=AGENTS[i % len(AGENTS)],
                task_id=f"{i:08x}-5c1e-4d2b-9f3a-{i * 7919:012x}",
                workspace="/srv/workspace",
                target="console" if i % 3 else "team",
                context_id=f"ctx-{i // 4:08x}",
                state=state,
                source=("push", "poll", "subscribe")[i % 3] if not done else "",
                sent_text=f"plan a trip to {'Lisbon' if i % 11 == 0 else 'Porto'} for request {i}",
                last_text=("working on step 3 of 8 " * 12)[:300],
                result_text=("Here is the itinerary for Lisbon, day by day. " * 30)[:1000] if done else "",
                started_at=started,
                updated_at=started + timedelta(minutes=5),
                finished_at=started + timedelta(minutes=5) if done else None,
                events=6,
            )
        )
    for r in rows:  # as `task_index.fold` keeps it
        r.search_words = search_words(r)
    TaskRecord.objects.bulk_create(rows, batch_size=2000)
    from django.db import connection

    if connection.vendor == "postgresql":  # as autovacuum would after such an insert: the planner's statistics
        with connection.cursor() as cur:
            cur.execute("ANALYZE web_taskrecord")


WATCH_QUERIES = {
    "watches first page": "/watches/",
    "watches search": "/watches/?q=agent%3Apoet",
    "watches page 2": "/watches/?page=2",
}


def fill_watches(count: int) -> None:
    import asyncio

    from django.conf import settings

    from a2aconsole.core.files.workspace import Workspace
    from a2aconsole.core.pending.records import WatchRecord

    ws = Workspace(settings.WORKSPACE_DIR)
    records = [
        WatchRecord(
            f"w{i}",
            "console",
            AGENTS[i % len(AGENTS)],
            f"{i:08x}-5c1e-4d2b-9f3a-{i * 7919:012x}",
            f"ctx-{i // 4:08x}",
            started_at=f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00+00:00",
        )
        for i in range(count)
    ]

    async def write() -> None:
        async with pending.transaction(ws) as tx:
            for r in tx.records:
                tx.remove(r.watch_id)
            tx.add(*records)

    asyncio.run(write())


def measure(client, url: str, runs: int) -> tuple[float, float, float, int]:
    for _ in range(3):  # warm the template and query caches
        client.get(url)
    times = []
    size = 0
    for _ in range(runs):
        start = time.perf_counter()
        r = client.get(url)
        times.append((time.perf_counter() - start) * 1000)
        assert r.status_code == 200, (url, r.status_code)
        size = len(r.content)
    times.sort()
    return times[0], statistics.median(times), times[int(len(times) * 0.9) - 1], size


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--small", type=int, default=10)
    ap.add_argument("--large", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()

    os.environ["A2ACONSOLE_DATA"] = tempfile.mkdtemp(prefix="a2a-bench-tasks-")
    os.environ["A2ACONSOLE_WORKSPACE"] = tempfile.mkdtemp(prefix="a2a-bench-ws-")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "a2aconsole.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client

    settings.ALLOWED_HOSTS = ["*"]
    call_command("migrate", verbosity=0)
    user = get_user_model().objects.create_user("owner", password="a long bench password")
    client = Client()
    client.force_login(user)

    results: dict[tuple[int, str], tuple[float, float, float, int]] = {}
    for what, filler, queries in (("tasks", fill, QUERIES), ("watches", fill_watches, WATCH_QUERIES)):
        for count in (args.small, args.large):
            filler(count)
            for name, url in queries.items():
                results[(count, name)] = measure(client, url, args.runs)
                best, med, p90, size = results[(count, name)]
                print(
                    f"{count:>6} {what:<7} {name:<18} best {best:5.1f} ms  median {med:6.1f} ms  "
                    f"p90 {p90:6.1f} ms  {size / 1024:6.1f} KB"
                )
    print()
    for name in [*QUERIES, *WATCH_QUERIES]:
        small, large = results[(args.small, name)], results[(args.large, name)]
        ratio, best = large[1] / small[1], large[0] / small[0]
        ok = "ok" if min(ratio, best) <= 2 and large[3] < 200 * 1024 else "OVER TARGET"
        print(
            f"{name:<18} {args.large} / {args.small} rows: {ratio:.2f}x median, {best:.2f}x best, "
            f"{large[3] / 1024:.1f} KB  {ok}"
        )


if __name__ == "__main__":
    main()
