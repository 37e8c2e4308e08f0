"""The console's own sends: the page never waits for an agent.

A message written in the browser becomes an `OutgoingMessage` row and goes out through the tool in a task of the
runtime; the request returns at once. The tool still waits up to WaitSeconds on the server (its contract for
API hosts is unchanged), but what the owner sees comes from the history: the row shows as "sending" until the
agent has the message, then the tool's `sent` event takes its place (`broadcast` removes the row in the same
transaction), and the task's card follows the task live. A send that fails before the agent took it keeps its
row, marked failed with the reason, for Retry and Edit.

The tool's events of one console send are tied to its row through `outgoing.OUTGOING`, set around the tool
call and seen by the event sink.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.template.loader import render_to_string
from django.utils import timezone

from a2aconsole.core.events import ALL_GROUP, target_group, task_group
from a2aconsole.web import broadcast, scope
from a2aconsole.web.history import dom_id
from a2aconsole.web.models import OutgoingMessage, TaskEvent
from a2aconsole.web.outgoing import KIND, OUTGOING
from a2aconsole.web.process.runtime import get_runtime

INTERRUPTED = "the console stopped before the agent answered; the message may not have reached it. Retry sends it again"


@dataclass(frozen=True)
class Parts:
    """What a send carries, as the owner wrote it."""

    agent: str
    text: str = ""
    files: tuple[str, ...] = ()
    context_id: str = ""
    task_id: str = ""
    data: dict[str, Any] | None = None  # a data part: a filled form's values

    def tool_args(self) -> dict[str, Any]:
        args: dict[str, Any] = {"agent": self.agent}
        if self.text:
            args["message"] = self.text
        if self.files:
            args["files"] = list(self.files)
        if self.data is not None:
            args["data"] = self.data
        if self.context_id:
            args["contextId"] = self.context_id
        if self.task_id:
            args["taskId"] = self.task_id
        return args

    @classmethod
    def of(cls, row: OutgoingMessage) -> Parts:
        return cls(row.agent, row.text, tuple(row.files or ()), row.context_id, row.task_id, row.data)

    @classmethod
    def from_args(cls, args: dict[str, Any]) -> Parts:
        """The tool's `send` arguments (`SendForm.tool_args`) as parts."""
        return cls(
            args["agent"],
            args.get("message", ""),
            tuple(args.get("files") or ()),
            args.get("contextId", ""),
            args.get("taskId", ""),
            args.get("data"),
        )

    @classmethod
    def of_event(cls, sent: TaskEvent, same_context: bool) -> Parts:
        """The parts of a message the history keeps (its `sent` event), for a new task: Re-send."""
        data = sent.data if isinstance(sent.data, dict) else {}
        files = tuple(f for f in data.get("files") or () if isinstance(f, str))
        sent_data = data.get("data") if isinstance(data.get("data"), dict) else None
        return cls(sent.agent, sent.text, files, sent.context_id if same_context else "", data=sent_data)


def stale_after() -> timedelta:
    """How long a send can take before the agent has it (card, call, the tool's wait), with a margin: a row
    still "sending" after that was left by a console that stopped."""
    c = settings.A2A_CLIENT
    return timedelta(seconds=c.card_timeout_seconds + c.call_timeout + c.wait_seconds + 60)


def shown_state(row: OutgoingMessage, now: datetime | None = None) -> tuple[str, str]:
    """The row's state and reason as the owner sees them: a "sending" left by a stopped console is failed."""
    if row.state == OutgoingMessage.SENDING and (now or timezone.now()) - row.created_at > stale_after():
        return OutgoingMessage.FAILED, INTERRUPTED
    return row.state, row.error


def shown(row: OutgoingMessage) -> OutgoingMessage:
    """The row with `shown`, `reason` (`shown_state`) and its task's `dom_id` set, as the templates show it."""
    row.shown, row.reason = shown_state(row)
    row.dom_id = dom_id(row.agent, row.task_id) if row.task_id else ""
    return row


def pending_of(target: str, context_id: str = "") -> list[OutgoingMessage]:
    """The chat's messages the agents have not taken yet (of one conversation when `context_id`), oldest first."""
    qs = OutgoingMessage.objects.filter(target_id=target)
    if context_id:
        qs = qs.filter(context_id=context_id)
    return list(qs.order_by("created_at", "id")[:50])


# the request's side


def create(target: str, parts: Parts) -> OutgoingMessage:
    return OutgoingMessage.objects.create(
        target_id=target,
        agent=parts.agent,
        text=parts.text,
        files=list(parts.files),
        data=parts.data,
        context_id=parts.context_id,
        task_id=parts.task_id,
    )


def again(row_id: int, target: str) -> OutgoingMessage | None:
    """A failed row back to "sending" for Retry; None when it is not this chat's or not failed."""
    row = OutgoingMessage.objects.filter(id=row_id, target_id=target).first()
    if row is None or shown_state(row)[0] != OutgoingMessage.FAILED:
        return None
    row.state, row.error, row.created_at, row.updated_at = OutgoingMessage.SENDING, "", timezone.now(), timezone.now()
    row.save(update_fields=["state", "error", "created_at", "updated_at"])
    return row


async def start(row: OutgoingMessage) -> None:
    """Tell the tabs, and send the row's message in a task of the runtime (the request does not wait for it)."""

    await announce(row)
    _going.add(get_runtime().spawn(deliver(row.id, row.target_id, Parts.of(row))))


_going: weakref.WeakSet[asyncio.Task[Any]] = weakref.WeakSet()  # the sends of this process still going out


async def settled() -> None:
    """Wait until every send this process started has come back from the tool (a test, the CLI)."""
    while going := [t for t in _going if not t.done()]:
        await asyncio.gather(*going, return_exceptions=True)


async def deliver(row_id: int, target: str, parts: Parts) -> dict[str, Any]:
    """Send through the tool with the row's events tied to it; what the events did not settle, settle here."""

    token = OUTGOING.set(row_id)
    try:
        reply = await scope.run_tool("send", parts.tool_args(), target)
    except asyncio.CancelledError:  # the console stops: say so now rather than when the row is stale
        with contextlib.suppress(Exception):
            await asyncio.shield(sync_to_async(_fail)(row_id, INTERRUPTED))
        raise
    finally:
        OUTGOING.reset(token)
    await broadcast.flush()  # the send's events are stored: the row is gone or marked by now, if they said so
    if "error" in reply:
        changed = await sync_to_async(_fail)(row_id, str(reply["error"]))
    else:  # answered without a `sent` event of this row (it cannot happen today): the row must not stay
        changed = await sync_to_async(_drop)(row_id)
    if changed is not None:
        await announce(changed)
    return reply


def _fail(row_id: int, reason: str) -> OutgoingMessage | None:
    n = OutgoingMessage.objects.filter(id=row_id, state=OutgoingMessage.SENDING).update(
        state=OutgoingMessage.FAILED, error=reason, updated_at=timezone.now()
    )
    return OutgoingMessage.objects.filter(id=row_id).first() if n else None


def _drop(row_id: int) -> OutgoingMessage | None:
    row = OutgoingMessage.objects.filter(id=row_id).first()
    if row is not None:
        row.delete()
        row.id = row_id  # what the tabs are told about
    return row


def discard(row_id: int, target: str) -> OutgoingMessage | None:
    """Remove a failed message the owner does not want to send; None when there is none such."""
    row = OutgoingMessage.objects.filter(id=row_id, target_id=target).first()
    if row is None or shown_state(row)[0] != OutgoingMessage.FAILED:
        return None
    return _drop(row_id)


async def announce(row: OutgoingMessage) -> None:
    """Tell the tabs that show this message that it changed: its chat's; an answer's also its task's page and the
    watch table (where it may have been given)."""
    groups = [target_group(row.target_id)]
    if row.task_id:
        groups += [task_group(row.agent, row.task_id), ALL_GROUP]
    payload = {"kind": KIND, "target": row.target_id, "agent": row.agent, "task_id": row.task_id, KIND: row.id}
    await broadcast.notify(groups, payload)


def first_sent(agent: str, task_id: str) -> TaskEvent | None:
    """The message that started a task (what Re-send sends again)."""
    return TaskEvent.objects.filter(agent=agent, task_id=task_id, kind="sent").order_by("id").first()


def fragments(changed: dict[int, str]) -> list[str]:
    """Each changed message (id -> its chat) as it is now, for the tabs showing it (a panel, the dashboard's
    question box): one query. A message the agent has now says so where it was."""
    rows = {o.id: o for o in OutgoingMessage.objects.filter(id__in=list(changed))}
    out = []
    for row_id, target in sorted(changed.items()):
        row = rows.get(row_id)
        ctx = {"o": shown(row) if row else None, "gone": row_id, "target": {"id": target}, "oob": True}
        out.append(render_to_string("web/_outgoing.html", ctx))
    return out
