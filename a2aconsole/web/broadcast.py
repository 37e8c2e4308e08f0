"""The event sink of the Django side: store each event as a TaskEvent row, then tell the open tabs.

Record first, notify second: the row is written before the channel-layer message, and the message only
says "something changed" (tabs re-render from the database). An event with a key (`Event.key`) is stored
at most once: emitted again, it is neither stored nor broadcast. A sink never raises into the registry or
the tool: a lost event loses a live update, not data.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.db import OperationalError, transaction

from a2aconsole.core.events import Event, groups_for
from a2aconsole.core.results import PREVIEW_CHARS, preview

log = logging.getLogger(__name__)

MESSAGE_TYPE = "a2a.event"
STORE_ATTEMPTS = 5
EVENT_TEXT_CHARS = 2 * PREVIEW_CHARS  # results keep a PREVIEW_CHARS preview already (`outcome_event`)


def _store(event: Event) -> bool:
    """Write the event's row and its task's row of the Tasks page, together; False when a keyed event is already
    in the history (emitted again after a crash, or by two workers), which then stays as it was."""
    from a2aconsole.web import task_index
    from a2aconsole.web.models import TaskEvent

    fields = {
        "workspace": event.workspace,
        "agent": event.agent,
        "task_id": event.task_id,
        "context_id": event.context_id,
        "target": event.target,
        "kind": event.kind,
        "state": event.state,
        "text": event.text,
        "data": event.data,
        "created_at": event.at,
    }
    with transaction.atomic():
        if event.key:
            row, created = TaskEvent.objects.get_or_create(key=event.key, defaults=fields)
        else:
            row, created = TaskEvent.objects.create(**fields), True
        if created:  # an event stored again is not counted again
            task_index.note(row)
    return created


async def notify(groups: list[str], payload: dict) -> None:
    """Send one `a2a.event` message to each group; failures are logged, never raised."""
    layer = get_channel_layer()
    if layer is None:
        return
    for group in groups:
        try:
            await layer.group_send(group, {"type": MESSAGE_TYPE, "event": payload})
        except Exception as e:
            log.warning("live update to %s failed: %s", group, type(e).__name__)


class ChannelsBroadcast:
    """EventSink: a TaskEvent row per event, then `a2a.event` to `core.events.groups_for(event)`."""

    async def emit(self, event: Event) -> None:
        if len(event.text) > EVENT_TEXT_CHARS:  # e.g. a delivered result's text: rows and messages stay small
            event = replace(event, text=preview(event.text, EVENT_TEXT_CHARS))
        for attempt in range(1, STORE_ATTEMPTS + 1):
            try:
                if not await database_sync_to_async(_store)(event):
                    return  # the history has it already, and the tabs were told then (or resync on reconnect)
                break
            except OperationalError as e:  # a busy SQLite ("database is locked"): wait a moment and try again
                if attempt == STORE_ATTEMPTS:
                    log.error("storing a %s event of task %s failed: %s", event.kind, event.task_id, e)
                else:
                    await asyncio.sleep(0.05 * attempt)
            except Exception:
                log.exception("storing a %s event of task %s failed", event.kind, event.task_id)
                break
        try:
            await notify(groups_for(event), event.to_json())
        except Exception:
            log.exception("broadcasting a %s event failed", event.kind)
