"""Where results go: the spec's `IA2AResultDelivery`, as a protocol the Django side implements."""

from __future__ import annotations

from typing import Protocol

from a2aconsole.core.files import Workspace
from a2aconsole.core.pending import WatchRecord


class ResultDelivery(Protocol):
    """Delivers a finished watch's text to the chat target that asked for it.

    `deliver` returns False when the target cannot take it now (no live session, host down); the text
    then stays `undelivered` in `pending.json` and is flushed when the target is next reachable. A watch's
    record lives in its workspace's `pending.json`, so a delivery never has to find a target's workspace.
    """

    async def deliver(self, target: str, text: str, record: WatchRecord | None = None) -> bool:
        """`record` is the finished watch (watchId, agent, taskId, contextId, state), if any."""
        ...


class StaticDelivery:
    """A delivery over a fixed target -> workspace map that records texts in memory (CLI, tests)."""

    def __init__(self, workspaces: dict[str, Workspace], *, available: bool = True) -> None:
        self.workspaces = dict(workspaces)
        self.available = available
        self.delivered: list[tuple[str, str]] = []

    async def deliver(self, target: str, text: str, record: WatchRecord | None = None) -> bool:
        if not self.available or target not in self.workspaces:
            return False
        self.delivered.append((target, text))
        return True
