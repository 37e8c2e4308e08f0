"""Where a finished watch's text goes: the chat target's backend (`web`, `telegram`, `webhook`).

`TargetDelivery` is the core's `ResultDelivery` over the ChatTarget table. Each backend has
`async deliver(target, text, record) -> bool`; False (or an exception) keeps the result in
`pending.json`, and the registry retries it with backoff and on the target's next session start. A watch's
record sits in its workspace's `pending.json`, so delivering never looks a workspace up; only the target's
row is read, with an async call.
The `web` backend is built in here; `telegram` and `webhook` have their own modules.
"""

from __future__ import annotations

import logging
from typing import Protocol

import httpx
from channels.db import database_sync_to_async

from a2aconsole.core.chat import CONSOLE_TARGET
from a2aconsole.core.events import target_group
from a2aconsole.core.pending import WatchRecord
from a2aconsole.core.results import PREVIEW_CHARS, preview
from a2aconsole.web.bootstrap import ensure_console_target
from a2aconsole.web.broadcast import notify
from a2aconsole.web.delivery.telegram import TelegramBackend
from a2aconsole.web.delivery.webhook import WebhookBackend
from a2aconsole.web.metrics import DeliveryCount
from a2aconsole.web.models import ChatTarget, InboxItem

log = logging.getLogger(__name__)

INBOX_TEXT_CHARS = 2 * PREVIEW_CHARS  # an inbox row keeps the result's header and a preview of its text


class Backend(Protocol):
    async def deliver(self, target: ChatTarget, text: str, record: WatchRecord | None) -> bool: ...


class InboxBackend:
    """The console's own inbox: the text is stored (once per watch) and shown live in the chat's open tabs.

    A chat with no open tab still counts as delivered: the inbox keeps the text until it is read.
    """

    async def deliver(self, target: ChatTarget, text: str, record: WatchRecord | None) -> bool:
        item = await database_sync_to_async(self._store)(target, text, record)
        await notify(
            [target_group(target.id)],
            {
                "kind": "inbox",
                "target": target.id,
                "item": item.pk,
                "agent": item.agent,
                "task_id": item.task_id,
                "state": item.state,
            },
        )
        return True

    @staticmethod
    def _store(target: ChatTarget, text: str, record: WatchRecord | None) -> InboxItem:
        """Keep the item, with a preview of the text: the whole of a long result is in its files (the text
        names them) and on the task page, and a row never grows with what an agent sent."""
        fields = {"text": preview(text, INBOX_TEXT_CHARS)}
        if record is not None:
            fields.update(
                agent=record.agent,
                task_id=record.task_id,
                context_id=record.context_id,
                state=record.state,
            )
        if record is not None and record.watch_id:
            # delivery is at least once: a second delivery of the same watch finds the first item
            item, _ = InboxItem.objects.get_or_create(target=target, watch_id=record.watch_id, defaults=fields)
            return item
        return InboxItem.objects.create(target=target, **fields)


def _target_row(target_id: str) -> ChatTarget | None:
    row = ChatTarget.objects.filter(pk=target_id).first()
    if row is None and target_id == CONSOLE_TARGET:
        row = ensure_console_target()
    return row


class TargetDelivery:
    """The `ResultDelivery` of the console: routes each text by its target's backend."""

    def __init__(self, backends: dict[str, Backend] | None = None, http: httpx.AsyncClient | None = None) -> None:
        """`backends` by name (the console's three unless given); `http`: the runtime's client, for theirs."""
        if backends is None:
            backends = {"web": InboxBackend(), "telegram": TelegramBackend(http), "webhook": WebhookBackend(http)}
        self.backends = backends
        self.count = DeliveryCount()

    async def deliver(self, target: str, text: str, record: WatchRecord | None = None) -> bool:
        try:
            row = await database_sync_to_async(_target_row)(target)
        except Exception:
            log.exception("looking up chat target %s failed; the result stays kept", target)
            return False
        if row is None or not row.enabled:
            log.warning("result for chat target %s kept: the target is unknown or disabled", target)
            return False
        backend = self.backends.get(row.backend)
        if backend is None:
            log.warning("result for chat target %s kept: no %r delivery backend in this process", target, row.backend)
            return False
        try:
            ok = bool(await backend.deliver(row, text, record))
        except Exception:
            log.exception("the %s backend failed to deliver to chat target %s", row.backend, target)
            ok = False
        self.count(row.backend, ok, record.watch_id if record is not None else "")
        if ok and row.backend != "web" and record is not None:
            await self._copy_to_inbox(row, text, record)
        return ok

    @staticmethod
    async def _copy_to_inbox(row: ChatTarget, text: str, record: WatchRecord) -> None:
        """Results sent elsewhere are also listed in the console's inbox of that chat (as a copy)."""
        try:
            await database_sync_to_async(InboxBackend._store)(row, text, record)
        except Exception:
            log.exception("keeping a copy of a delivered result for %s failed", row.id)


__all__ = ["Backend", "InboxBackend", "TargetDelivery"]
