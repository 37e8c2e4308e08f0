"""The event history keeps a keyed event once: a watch's result, end and delivery, emitted again after a crash
(or by a second worker), neither add a row nor tell the open tabs twice. Events without a key all stay."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from channels.layers import get_channel_layer

from a2aconsole.core.events import RESULT, WATCH_UPDATE, Event, task_group, watch_event_key
from a2aconsole.web.broadcast import ChannelsBroadcast
from a2aconsole.web.models import TaskEvent

pytestmark = pytest.mark.django_db(transaction=True)

AT = datetime(2026, 12, 3, 7, 0, tzinfo=UTC)


def event(kind: str, text: str, key: str = "") -> Event:
    return Event(kind, "/ws", "bot", "task-1", AT, target="console", state="completed", text=text, key=key)


async def test_a_keyed_event_is_stored_and_broadcast_once() -> None:
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(task_group("bot", "task-1"), channel)
    sink = ChannelsBroadcast()
    key = watch_event_key("/ws", "w1", RESULT)

    await sink.emit(event(RESULT, "the result", key))
    await sink.emit(event(RESULT, "the result, emitted again", key))
    # unkeyed events are all kept (a watch's updates; repeated outcomes of a re-check are another rule)
    await sink.emit(event(WATCH_UPDATE, "a plain event"))
    await sink.emit(event(WATCH_UPDATE, "a plain event"))

    rows = [(e.kind, e.text, e.key) async for e in TaskEvent.objects.order_by("id")]
    assert rows == [
        (RESULT, "the result", key),
        (WATCH_UPDATE, "a plain event", ""),
        (WATCH_UPDATE, "a plain event", ""),
    ]
    # FIFO: the second message the task's group got is the first plain event, not the result again
    got: list[dict] = []
    while len(got) < 2:  # a message holds one `event`, or the `events` stored together
        message = await layer.receive(channel)
        got += message.get("events") or [message["event"]]
    assert [(m["kind"], m["text"]) for m in got[:2]] == [(RESULT, "the result"), (WATCH_UPDATE, "a plain event")]


async def test_the_same_watch_in_another_workspace_has_its_own_key() -> None:
    assert watch_event_key("/a", "w1", RESULT) != watch_event_key("/b", "w1", RESULT)
    assert watch_event_key("/a", "w1", RESULT) != watch_event_key("/a", "w1", "watch.ended")
    assert watch_event_key("/a", "w1", RESULT) == watch_event_key("/a", "w1", RESULT)
    assert len(watch_event_key("/a" * 500, "w" * 500, "watch.ended")) <= TaskEvent._meta.get_field("key").max_length
