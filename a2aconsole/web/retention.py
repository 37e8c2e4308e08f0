"""The history's retention (`A2ACONSOLE_HISTORY_DAYS`): finished tasks nothing happened to for that many days are
deleted with their events, once a day, so the Tasks page's history stays the size the owner chose.

Bounded so it never competes with serving: `BATCH` tasks per transaction (a short write lock on SQLite), a pause
between batches, at most `BUDGET` seconds a day (what is left waits for the next day). A task still running, or
still in a watch record of `pending.json` (a result not yet delivered), is never pruned. 0 keeps everything.

The same daily run then refreshes SQLite's statistics of the task table (`refresh_statistics`), whatever the
retention.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta

from channels.db import database_sync_to_async
from django.db import connection, transaction

from a2aconsole.core.clock import Clock
from a2aconsole.web.models import TaskEvent, TaskRecord
from a2aconsole.web.task_index import TERMINAL

log = logging.getLogger(__name__)

BATCH = 100  # tasks deleted per transaction
PAUSE = 0.5  # seconds between batches: the other writers go in between
BUDGET = 600.0  # seconds of pruning a day at most
DAY = 86_400.0
FIRST = 600.0  # seconds after the worker starts: the restore goes first

Pair = tuple[str, str]


def prune_batch(cutoff: datetime, keep: set[Pair], batch: int = BATCH) -> int:
    """Delete up to `batch` of the oldest tasks finished and unchanged since before `cutoff` (not in `keep`),
    with their events, in one transaction. How many were deleted."""
    with transaction.atomic():
        old = TaskRecord.objects.filter(finished_at__lt=cutoff, updated_at__lt=cutoff, state__in=TERMINAL)
        rows = old.order_by("finished_at", "id").values_list("id", "agent", "task_id")[: batch + len(keep)]
        doomed = [(pk, agent, task_id) for pk, agent, task_id in rows if (agent, task_id) not in keep][:batch]
        by_agent: dict[str, list[str]] = {}
        for _, agent, task_id in doomed:
            by_agent.setdefault(agent, []).append(task_id)
        for agent, task_ids in by_agent.items():
            TaskEvent.objects.filter(agent=agent, task_id__in=task_ids).delete()
        TaskRecord.objects.filter(id__in=[pk for pk, _, _ in doomed]).delete()
    return len(doomed)


def refresh_statistics() -> None:
    """SQLite: the query planner's statistics of the task table (`ANALYZE`). Without them it takes any filter's
    index to match a few rows, so it reads all of a common filter's matches and sorts them (`agent:` sorted by
    chat: 370 ms at a million tasks) where reading the sort's index would stop at a page (0.2 ms), and scans a
    state's index for a rare word's ten tasks (190 ms). A few seconds at a million tasks, once a day; readers go
    on meanwhile (WAL), writers wait. PostgreSQL's autovacuum keeps its own."""
    if connection.vendor == "sqlite":
        with connection.cursor() as c:
            c.execute("ANALYZE web_taskrecord")


class Retention:
    """The daily prune, then the statistics. `watched`: the (agent, task id) of every watch record, read before
    each day's prune."""

    def __init__(
        self,
        days: int,
        clock: Clock,
        watched: Callable[[], Awaitable[set[Pair]]],
        *,
        batch: int = BATCH,
        pause: float = PAUSE,
        budget: float = BUDGET,
    ) -> None:
        self.days, self.clock, self.watched = days, clock, watched
        self.batch, self.pause, self.budget = batch, pause, budget

    async def prune(self) -> int:
        """One day's prune: batches until none is left or the budget is spent. How many tasks were deleted."""
        if self.days <= 0:
            return 0
        cutoff = self.clock.now() - timedelta(days=self.days)
        keep = await self.watched()
        start, total = self.clock.monotonic(), 0
        while True:
            n = await database_sync_to_async(prune_batch)(cutoff, keep, self.batch)
            total += n
            if n < self.batch:
                break
            await self.clock.sleep(self.pause)
            if self.clock.monotonic() - start >= self.budget:
                log.info("history retention: the day's %g s spent; the rest is pruned tomorrow", self.budget)
                break
        if total:
            log.info("history retention: deleted %d task(s) finished before %s, with their events", total, cutoff)
        return total

    async def run_forever(self) -> None:
        """Prune and refresh the statistics a while after the start, then once a day; a failure is logged and
        tried again the next day."""
        await self.clock.sleep(FIRST)
        while True:
            try:
                await self.prune()
                await database_sync_to_async(refresh_statistics)()
            except Exception:
                log.exception("history retention failed; trying again tomorrow")
            await self.clock.sleep(DAY)
