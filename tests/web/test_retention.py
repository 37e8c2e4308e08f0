"""The history's retention (`web.retention`): finished tasks unchanged for `A2ACONSOLE_HISTORY_DAYS` are deleted with
their events, in bounded batches with a pause between them and a daily budget, on a fake clock; running and watched
tasks, and those with recent news, are kept."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from asgiref.sync import sync_to_async
from django.db import connection

from a2aconsole.web import retention
from a2aconsole.web.models import TaskEvent, TaskRecord
from a2aconsole.web.retention import Retention
from tests.support.clock import FakeClock

NOW = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)
OLD = NOW - timedelta(days=40)
pytestmark = pytest.mark.django_db(transaction=True)


def task(task_id: str, at: datetime, state: str = "completed", updated: datetime | None = None) -> None:
    """A task and its three events, as the index folds them."""
    done = state in retention.TERMINAL
    TaskRecord.objects.create(
        agent="bot", task_id=task_id, state=state, started_at=at, updated_at=updated or at + timedelta(minutes=1),
        finished_at=at + timedelta(minutes=1) if done else None, run_seconds=60 if done else None, events=3,
    )  # fmt: skip
    TaskEvent.objects.bulk_create(
        TaskEvent(workspace="/w", agent="bot", task_id=task_id, kind=kind, state=s, created_at=at)
        for kind, s in (("sent", ""), ("state", "working"), ("result", state if done else ""))
    )


def history(old: int) -> None:
    for i in range(old):
        task(f"old{i:03d}", OLD + timedelta(minutes=i))
    task("running", OLD, state="working")
    task("watched", OLD)
    task("recent", NOW - timedelta(days=2))
    task("news", OLD, updated=NOW - timedelta(days=1))  # finished long ago, something happened since


def left() -> set[str]:
    return set(TaskRecord.objects.values_list("task_id", flat=True))


async def watched() -> set[tuple[str, str]]:
    return {("bot", "watched")}


async def test_prunes_old_finished_tasks_in_batches_and_keeps_the_rest() -> None:
    await sync_to_async(history)(250)
    clock = FakeClock(NOW)
    pruning = asyncio.ensure_future(Retention(30, clock, watched, batch=100, pause=1.0).prune())
    counts = []
    for _ in range(2):  # a pause after each full batch: a batch per transaction, the others write meanwhile
        await clock.wait_for_sleepers(1)
        counts.append(await TaskRecord.objects.acount())
        await clock.advance(1.0)
    assert await pruning == 250 and clock.sleeps == [1.0, 1.0]
    assert counts == [154, 54]  # 100 a batch (of 254: 250 old and the four kept)
    kept = {"running", "watched", "recent", "news"}
    assert await sync_to_async(left)() == kept
    events = TaskEvent.objects.values_list("task_id", flat=True).distinct()
    assert {t async for t in events} == kept  # the events of the pruned tasks went with them


async def test_a_day_prunes_for_its_budget_then_waits_for_the_next() -> None:
    await sync_to_async(history)(250)
    clock = FakeClock(NOW)
    r = Retention(30, clock, watched, batch=100, pause=1.0, budget=1.5)
    pruning = asyncio.ensure_future(r.prune())
    for _ in range(2):
        await clock.wait_for_sleepers(1)
        await clock.advance(1.0)
    assert await pruning == 200 and await TaskRecord.objects.acount() == 54  # the rest: tomorrow
    assert await r.prune() == 50


async def test_runs_a_while_after_the_start_then_daily() -> None:
    await sync_to_async(history)(3)
    clock = FakeClock(NOW)
    job = asyncio.ensure_future(Retention(30, clock, watched).run_forever())
    try:
        await clock.wait_for_sleepers(1)
        assert clock.sleeps == [retention.FIRST] and await TaskRecord.objects.acount() == 7  # the restore first
        await clock.advance(retention.FIRST)
        await clock.wait_for_sleepers(1)
        assert clock.sleeps == [retention.FIRST, retention.DAY] and await TaskRecord.objects.acount() == 4
    finally:
        job.cancel()


async def test_zero_days_keeps_everything() -> None:
    await sync_to_async(history)(3)
    assert await Retention(0, FakeClock(NOW), watched).prune() == 0 and await TaskRecord.objects.acount() == 7


def planner_statistics(drop: bool = False) -> int:
    """SQLite's statistics rows (`ANALYZE`) for the task table's indexes (`drop`: none, to begin with)."""
    with connection.cursor() as c:
        if drop:
            c.execute("DROP TABLE IF EXISTS sqlite_stat1")
        c.execute("SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_stat1'")
        if not c.fetchone()[0]:
            return 0
        c.execute("SELECT count(*) FROM sqlite_stat1 WHERE tbl = 'web_taskrecord'")
        return int(c.fetchone()[0])


@pytest.mark.parametrize("days", [30, 0])
async def test_the_daily_run_refreshes_the_planner_statistics_whatever_the_retention(days: int) -> None:
    """The planner's statistics of the task table, refreshed each day (with retention or without): without them
    SQLite reads all of a filter's matches and sorts them where the sort's index would stop at a page."""
    await sync_to_async(history)(3)
    assert await sync_to_async(planner_statistics)(drop=True) == 0
    clock = FakeClock(NOW)
    job = asyncio.ensure_future(Retention(days, clock, watched).run_forever())
    try:
        await clock.wait_for_sleepers(1)
        await clock.advance(retention.FIRST)
        await clock.wait_for_sleepers(1)
        assert await sync_to_async(planner_statistics)() > 0  # a row per index of the task table
        assert await TaskRecord.objects.acount() == (4 if days else 7)
    finally:
        job.cancel()
