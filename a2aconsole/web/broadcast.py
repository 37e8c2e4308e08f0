"""The event sink of the Django side: store each event as a TaskEvent row, then tell the open tabs.

Record first, notify second: the row is written before the channel-layer message, and the message only
says "something changed" (tabs re-render from the database). A sink never raises into the registry or
the tool: a lost event loses a live update, not data. An event with a key (`Event.key`) is stored at most
once: emitted again, it is neither stored nor broadcast. Each message carries the stored row's id and a sequence
number per group and sending process, so a tab notices a message the layer dropped and renders in full.
A re-check of a finished task reports the same outcome again: it is not stored (nor shown) a second time.
A status message told while a task works (a `progress` event of kind `status`) is kept on the task's row only
(`task_index.note_progress`), not as an event: the tabs render it from there, and a reload shows it.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import OrderedDict
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
REPEATABLE = ("result", "question", "state")  # the outcome a status call reports, the same each time it is asked
ORIGIN = uuid.uuid4().hex[:12]  # this process, as a sender of sequence numbers
SEQ_GROUPS = 10_000  # per-group counters kept (oldest forgotten: a tab then sees a gap and renders in full)
_seqs: OrderedDict[str, int] = OrderedDict()


def _repeats(event: Event) -> bool:
    """The task's latest outcome event says exactly this already (a re-check of a finished or unchanged task)."""
    from a2aconsole.web.models import TaskEvent

    if event.kind not in REPEATABLE or not event.task_id:
        return False
    last = (
        TaskEvent.objects.filter(agent=event.agent, task_id=event.task_id, kind__in=(*REPEATABLE, "sent"))
        .order_by("-created_at", "-id")
        .values("kind", "state", "text", "data")
        .first()
    )
    if last is None:
        return False
    return (last["kind"], last["state"], last["text"], _outcome_data(last["data"])) == (
        event.kind,
        event.state,
        event.text,
        _outcome_data(event.data),
    )


def _outcome_data(data: object) -> object:
    """What an outcome says, without which watch reported it (a watch's result and a re-check's are the same)."""
    return {k: v for k, v in data.items() if k != "watchId"} if isinstance(data, dict) else data


def _store(event: Event) -> int | None:
    """Write the event's row and its task's row of the Tasks page, together; the row's id. None when nothing is
    stored: a keyed event already in the history (emitted again after a crash, or by two workers), or one that
    repeats the task's last outcome (a re-check)."""
    from a2aconsole.web import task_index
    from a2aconsole.web.models import TaskEvent

    if _repeats(event):
        return None
    status_only = event.kind == "progress" and isinstance(event.data, dict) and event.data.get("kind") == "status"
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
    if status_only:  # the latest line on the task's row; 0: told to the tabs without an event id
        return 0 if task_index.note_progress(TaskEvent(**fields)) else None
    with transaction.atomic():
        if event.key:
            row, created = TaskEvent.objects.get_or_create(key=event.key, defaults=fields)
        else:
            row, created = TaskEvent.objects.create(**fields), True
        if not created:
            return None
        task_index.note(row)
    return row.id


async def notify(groups: list[str], payload: dict) -> None:
    """Send one `a2a.event` message to each group; failures are logged, never raised."""
    layer = get_channel_layer()
    if layer is None:
        return
    for group in groups:
        seq = _seqs.pop(group, 0) + 1
        _seqs[group] = seq
        if len(_seqs) > SEQ_GROUPS:
            _seqs.popitem(last=False)
        message = {"type": MESSAGE_TYPE, "event": payload, "group": group, "origin": ORIGIN, "seq": seq}
        try:
            await layer.group_send(group, message)
        except Exception as e:
            log.warning("live update to %s failed: %s", group, type(e).__name__)


class ChannelsBroadcast:
    """EventSink: a TaskEvent row per event, then `a2a.event` to `core.events.groups_for(event)`."""

    async def emit(self, event: Event) -> None:
        if len(event.text) > EVENT_TEXT_CHARS:  # e.g. a delivered result's text: rows and messages stay small
            event = replace(event, text=preview(event.text, EVENT_TEXT_CHARS))
        stored: int | None = 0
        for attempt in range(1, STORE_ATTEMPTS + 1):
            try:
                stored = await database_sync_to_async(_store)(event)
                break
            except OperationalError as e:  # a busy SQLite ("database is locked"): wait a moment and try again
                if attempt == STORE_ATTEMPTS:
                    log.error("storing a %s event of task %s failed: %s", event.kind, event.task_id, e)
                else:
                    await asyncio.sleep(0.05 * attempt)
            except Exception:
                log.exception("storing a %s event of task %s failed", event.kind, event.task_id)
                break
        if stored is None:
            return
        payload = event.to_json()
        if stored:
            payload["eventId"] = stored
        try:
            await notify(groups_for(event), payload)
        except Exception:
            log.exception("broadcasting a %s event failed", event.kind)
