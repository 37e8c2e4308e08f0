"""How the tool hands tasks to watches: the protocol the registry implements, and a file-only stand-in.

The tool writes a watch record to `pending.json` first (the files are the truth) and then tells the
watch control; a process without a registry (the CLI) uses `PendingFileWatches`, and the worker finds
the record on its next scan or start.
"""

from __future__ import annotations

from typing import Protocol

from .pending import WatchRecord
from .workspace import Workspace


class WatchControl(Protocol):
    """What the tool needs from the watch registry (the registry implements it; PendingFileWatches is file-only)."""

    async def arm(self, workspace: Workspace, record: WatchRecord) -> None:
        """Start watching `record`, which is already in `pending.json`."""
        ...

    async def stop_watching(self, workspace: Workspace, target: str, agent: str, task_id: str) -> WatchRecord | None:
        """End the watch of (target, agent, task): out of the map AND `pending.json`; the removed record or None."""
        ...

    async def rearm(self, workspace: Workspace, record: WatchRecord) -> None:
        """Put a stopped watch back (same id, token and start): write it to `pending.json` and arm it."""
        ...


def same_watch(r: WatchRecord, target: str, agent: str, task_id: str) -> bool:
    """True when `r` is the watch of this chat on this task (a chat watches a task at most once)."""
    return r.target == target and r.agent == agent and r.task_id == task_id


class PendingFileWatches:
    """Watches as records in `pending.json` only, for processes without a registry (the CLI).

    A worker that scans the workspace picks the records up later.
    """

    async def arm(self, workspace: Workspace, record: WatchRecord) -> None:
        return None

    async def stop_watching(self, workspace: Workspace, target: str, agent: str, task_id: str) -> WatchRecord | None:
        async with workspace.pending_tx() as tx:
            found = [r for r in tx.records if same_watch(r, target, agent, task_id)]
            for r in found:
                tx.records.remove(r)
        return found[0] if found else None

    async def rearm(self, workspace: Workspace, record: WatchRecord) -> None:
        async with workspace.pending_tx() as tx:
            if tx.find(record.watch_id) is None:
                tx.records.append(record)
