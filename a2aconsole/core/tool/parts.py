"""What the tool's actions in their own modules (`cancel`, `unwatch`, `adopt`) use of the tool: its watch control, its
connections, its clock and its way to answer with a task's outcome. A protocol, so they need not import it."""

from __future__ import annotations

from typing import Any, Protocol

from a2aconsole.core.clock import Clock
from a2aconsole.core.files import Workspace
from a2aconsole.core.pending import WatchRecord
from a2aconsole.core.remote import Connection, ConnectionPool, TaskSnapshot
from a2aconsole.core.watches import WatchControl


class ToolParts(Protocol):
    watches: WatchControl
    pool: ConnectionPool
    clock: Clock

    async def finish(self, task: TaskSnapshot, agent: str, workspace: Workspace, target: str) -> dict[str, Any]:
        """A task's outcome as an answer, its event emitted."""
        ...

    def watch_record(self, conn: Connection, task: TaskSnapshot, target: str) -> WatchRecord:
        """A new watch record of the chat for a running task, following it as a send's watch would."""
        ...
