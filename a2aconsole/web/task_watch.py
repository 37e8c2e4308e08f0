"""Whether a chat watches a task now, and what its watch says of the agent, as the task page and the Tasks rows ask
(the Stop watching button, "last heard 21:04"), read from `pending.json` through the pages' cache: the files are
the truth; the watch registry's rows (`views.watches.live_watches`) add what this process's followers know now."""

from __future__ import annotations

from collections.abc import Collection, Iterator
from datetime import UTC, datetime
from typing import Any

from a2aconsole.core.pending import WatchRecord
from a2aconsole.core.watches import News, news_of, same_watch
from a2aconsole.web import pending_cache, scope


def _active_records() -> Iterator[WatchRecord]:
    """Every active watch's record of every workspace (a kept result is no watch: it is being delivered)."""

    for ws in scope.all_workspaces():
        for r in pending_cache.read_pending(ws).records:
            if r.undelivered is None:
                yield r


def watch_of(agent: str, task_id: str, target: str) -> WatchRecord | None:
    """The chat's active watch of the task, or None."""
    return next((r for r in _active_records() if same_watch(r, target, agent, task_id)), None)


def news_of_tasks(
    tasks: Collection[tuple[str, str]], live: dict[str, dict[str, Any]] | None = None
) -> dict[tuple[str, str], News]:
    """What the active watch of each of these (agent, task id) says of its agent (`heard.news_of`, as on the watch
    table: the registry's row in `live` by watch id, else the record); a task nobody watches is not in it."""
    wanted, now = set(tasks), datetime.now(UTC)
    found: dict[tuple[str, str], News] = {}
    if not wanted:
        return found
    for r in _active_records():
        key = (r.agent, r.task_id)
        if key in wanted and key not in found:
            found[key] = news_of((live or {}).get(r.watch_id) or {}, r.extra, now)
    return found
