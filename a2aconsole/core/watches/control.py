"""How the tool hands tasks to watches: the protocol the registry implements, and a file-only stand-in.

The tool writes a watch record to `pending.json` first (the files are the truth) and then tells the
watch control; a process without a registry (the CLI) uses `PendingFileWatches`, and the worker finds
the record on its next scan or start.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Protocol

from a2aconsole.core import pending
from a2aconsole.core.files import Workspace
from a2aconsole.core.pending import PendingTx, WatchRecord, watch_key


class WatchControl(Protocol):
    """What the tool needs from the watch registry (the registry implements it; PendingFileWatches is file-only)."""

    async def arm(self, workspace: Workspace, record: WatchRecord) -> None:
        """Start watching `record`, which is already in `pending.json`."""
        ...

    async def stop_watching(
        self, workspace: Workspace, target: str, agent: str, task_id: str, reason: str = "stopped", *, by: str = ""
    ) -> WatchRecord | None:
        """End the watch of (target, agent, task): out of the map AND `pending.json` (`take_watches` says what
        goes); the removed record or None. `reason`: how it ended, for its `watch.ended` event; `by`: who ended
        it, when someone did (`STOPPED_BY`)."""
        ...

    def holding(
        self, workspace: Workspace, target: str, agent: str, task_id: str
    ) -> contextlib.AbstractAsyncContextManager[None]:
        """While inside, the watch of (target, agent, task) does not finish with a task outcome it finds: a cancel
        in flight decides first (`cancel.py`)."""
        ...

    async def rearm(self, workspace: Workspace, record: WatchRecord) -> None:
        """Put a stopped watch back (same id, token and start): write it to `pending.json` and arm it."""
        ...


# who stopped a watch, as its `watch.ended` event's `by` says: the owner in the console, an agent host through the
# JSON API, or someone at the shell (`manage.py a2a unwatch`)
STOPPED_BY = ("owner", "api", "shell")


def same_watch(r: WatchRecord, target: str, agent: str, task_id: str) -> bool:
    """True when `r` is the watch of this chat on this task (a chat watches a task at most once)."""
    return watch_key(r) == (target, agent, task_id)


def take_watches(tx: PendingTx, target: str, agent: str, task_id: str) -> list[WatchRecord]:
    """What stopping the watch of (target, agent, task) takes out of `pending.json`'s records, in file order.

    Every active watch of that chat on that task goes, duplicates included (a CLI may have written a second
    one before a worker saw the first). A kept result of that task (`undelivered`) stays: it is already
    the outcome, and a cancel or status must not lose it; it is delivered as usual.
    """
    return tx.take(lambda r: r.undelivered is None and same_watch(r, target, agent, task_id))


class PendingFileWatches:
    """Watches as records in `pending.json` only, for processes without a registry (the CLI).

    A worker that scans the workspace picks the records up later.
    """

    async def arm(self, workspace: Workspace, record: WatchRecord) -> None:
        return None

    async def stop_watching(
        self, workspace: Workspace, target: str, agent: str, task_id: str, reason: str = "stopped", *, by: str = ""
    ) -> WatchRecord | None:
        """`take_watches` under the workspace lock; the first record taken, or None."""
        async with pending.transaction(workspace) as tx:
            taken = take_watches(tx, target, agent, task_id)
        return taken[0] if taken else None

    async def rearm(self, workspace: Workspace, record: WatchRecord) -> None:
        async with pending.transaction(workspace) as tx:
            if tx.find(record.watch_id) is None:
                tx.add(record)

    @contextlib.asynccontextmanager
    async def holding(self, workspace: Workspace, target: str, agent: str, task_id: str) -> AsyncIterator[None]:
        """Nothing to hold: no watch runs in this process."""
        yield
