"""A ResultDelivery over chat-target backends without the database: what the web delivery does, in small.

Maps target ids to (unsaved) ChatTarget rows and hands each result to that target's backend, so the
watch registry's keep / retry / flush runs against a real Telegram or webhook backend.
"""

from __future__ import annotations

from typing import Any

from a2aconsole.core.pending.records import WatchRecord
from a2aconsole.web.models import ChatTarget


class BackendDelivery:
    def __init__(self, targets: dict[str, tuple[ChatTarget, Any]]) -> None:
        self.targets = targets

    async def deliver(self, target: str, text: str, record: WatchRecord | None = None) -> bool:
        if target not in self.targets:
            return False
        chat, backend = self.targets[target]
        return await backend.deliver(chat, text, record)


def kept(watch_id: str, target: str, text: str, **extra: Any) -> WatchRecord:
    """A finished watch whose result is kept in pending.json for delivery."""
    return WatchRecord(
        watch_id=watch_id,
        target=target,
        agent="travel-bot",
        task_id=f"task-{watch_id}",
        context_id="ctx-1",
        started_at="2026-12-02T09:00:00Z",
        undelivered=text,
        state=str(extra.pop("state", "completed")),
        extra=extra,
    )
