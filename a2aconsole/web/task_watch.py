"""Whether a chat watches a task now, as its task page asks (the Stop watching button), read from `pending.json`
through the pages' cache: the files are the truth."""

from __future__ import annotations

from a2aconsole.core.pending import WatchRecord
from a2aconsole.core.watch_control import same_watch
from a2aconsole.web import pending_cache


def watch_of(agent: str, task_id: str, target: str) -> WatchRecord | None:
    """The chat's active watch of the task (a kept result is no watch: it is being delivered), or None."""
    from a2aconsole.web.views import scope  # the live pages import this module, and no view

    for ws in scope.all_workspaces():
        for r in pending_cache.read_pending(ws).records:
            if r.undelivered is None and same_watch(r, target, agent, task_id):
                return r
    return None
