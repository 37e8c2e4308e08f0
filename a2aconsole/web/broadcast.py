"""The event sink of the Django side: store each event as a TaskEvent row, then tell the open tabs.

Record first, notify second: the row is written before the channel-layer message, and the message only
says "something changed" (tabs re-render from the database). A sink never raises into the registry or
the tool: a lost event loses a live update, not data. An event with a key (`Event.key`) is stored at most
once: emitted again, it is neither stored nor broadcast. Each message carries the stored row's id and a sequence
number per group and sending process, so a tab notices a message the layer dropped and renders in full.
A re-check of a finished task reports the same outcome again: it is not stored (nor shown) a second time.
A status message told while a task works (a `progress` event of kind `status`) is kept on the task's row only
(`task_index.TaskRows.note_progress`), not as an event: the tabs render it from there, and a reload shows it.

Events are written by one writer per event loop, on a kept database connection (`db_threads`), all that are
waiting in one transaction: a burst of pushes costs a few commits, not one each. `emit` returns once its event
is stored and announced, except inside `deferred_events()` (an API call): there it returns at once, the events
wait up to LINGER_SECONDS for the ones that follow, and the scope's end waits until all of them are stored, so
a call's events are usually one transaction, and its answer leaves only after its events are committed.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, fields, replace
from typing import Any

from channels.layers import get_channel_layer
from django.db import IntegrityError, OperationalError, transaction

from a2aconsole.core.events import Event, groups_for
from a2aconsole.core.results import PREVIEW_CHARS, preview
from a2aconsole.web import db_threads, outgoing, task_index
from a2aconsole.web.models import TaskEvent

log = logging.getLogger(__name__)

MESSAGE_TYPE = "a2a.event"
STORE_ATTEMPTS = 5
EVENT_TEXT_CHARS = 2 * PREVIEW_CHARS  # results keep a PREVIEW_CHARS preview already (`outcome_event`)
REPEATABLE = ("result", "question", "state")  # the outcome a status call reports, the same each time it is asked
ORIGIN = uuid.uuid4().hex[:12]  # this process, as a sender of sequence numbers
LINGER_SECONDS = 0.05  # how long a deferred event waits for the next ones of its call before it is written anyway
BATCH_MAX = 200  # events in one transaction at most
SEQ_GROUPS = 10_000  # per-group counters kept (oldest forgotten: a tab then sees a gap and renders in full)
_seqs: OrderedDict[str, int] = OrderedDict()


def _said(event: Event) -> tuple[Any, ...]:
    """What an outcome event says, as `_store_batch` compares it with the task's last outcome."""
    return (event.kind, event.state, event.text, _outcome_data(event.data))


def _outcome_data(data: object) -> object:
    """What an outcome says, without which watch reported it (a watch's result and a re-check's are the same)."""
    return {k: v for k, v in data.items() if k != "watchId"} if isinstance(data, dict) else data


def _store(event: Event) -> int | None:
    """Write the event's row and its task's row of the Tasks page, together; the row's id. None when nothing is
    stored: a keyed event already in the history (emitted again after a crash, or by two workers), or one that
    repeats the task's last outcome (a re-check). Its own transaction (a savepoint inside another): a key another
    writer stored meanwhile counts as stored."""
    try:
        with transaction.atomic():
            return _store_batch([event])[0]
    except IntegrityError:
        if event.key and TaskEvent.objects.filter(key=event.key).exists():
            return None
        raise


def _row_fields(event: Event) -> dict[str, Any]:
    return {
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


def _status_only(event: Event) -> bool:
    """A status message told while the task works: kept on the task's row only, not as an event."""
    return event.kind == "progress" and isinstance(event.data, dict) and event.data.get("kind") == "status"


OUTCOME_KINDS = (*REPEATABLE, "sent")  # what `_store_batch` compares an outcome with: the task's latest of these


def _last_outcome(agent: str, task_id: str) -> tuple[Any, ...] | None:
    """The task's latest outcome event (`OUTCOME_KINDS`) as (created_at, kind, state, text, outcome data)."""
    last = (
        TaskEvent.objects.filter(agent=agent, task_id=task_id, kind__in=OUTCOME_KINDS)
        .order_by("-created_at", "-id")
        .values_list("created_at", "kind", "state", "text", "data")
        .first()
    )
    return None if last is None else (*last[:4], _outcome_data(last[4]))


def _store_batch(events: list[Event]) -> list[int | None]:
    """Store the events in order (call inside a transaction), in a few statements for
    the whole batch: the keys already stored, one INSERT of the new events, their tasks' rows read and written once
    (`task_index.TaskRows`), and a task's last outcome read only for an outcome the batch itself does not follow
    (an API send's batch starts with its `sent`: its state and result are compared with that, not the history)."""
    last: dict[tuple[str, str], tuple[Any, ...] | None] = {}
    keys = {e.key for e in events if e.key}
    taken = set(TaskEvent.objects.filter(key__in=keys).values_list("key", flat=True)) if keys else set()
    rows = task_index.TaskRows((e.agent, e.task_id) for e in events)
    out: list[TaskEvent | int | None] = []
    new: list[TaskEvent] = []
    for event in events:
        pair = (event.agent, event.task_id)
        said = _said(event)
        if event.kind in REPEATABLE and event.task_id:
            if pair not in last:
                last[pair] = _last_outcome(*pair)
            if last[pair] is not None and last[pair][1:] == said:
                out.append(None)  # repeats the task's last outcome
                continue
        row = TaskEvent(**_row_fields(event), key=event.key)
        if _status_only(event):
            out.append(0 if rows.note_progress(row) else None)
            continue
        if event.key in taken:  # already in the history, or earlier in this batch
            out.append(None)
            continue
        if event.key:
            taken.add(event.key)
        if event.kind in OUTCOME_KINDS and event.task_id and (last.get(pair) is None or event.at >= last[pair][0]):
            last[pair] = (event.at, *said)
        rows.note(row)
        if isinstance(event.data, dict) and outgoing.KIND in event.data:
            outgoing.took(event.kind, event.data)
        new.append(row)
        out.append(row)
    TaskEvent.objects.bulk_create(new)
    rows.save()
    # a database that does not return the new ids (SQLite before 3.35): stored, told without an id
    return [(r.id or 0) if isinstance(r, TaskEvent) else r for r in out]


def _store_all(events: list[Event]) -> list[int | None | BaseException]:
    """Store the events in order, in one transaction; for each, its row id, None (not stored: a repeat) or the
    exception that kept it out. When one fails, the batch is written again with a savepoint per event, so the
    others are kept; a failure of the database itself (OperationalError) is raised, for the whole to be retried."""
    try:
        with transaction.atomic():
            return _store_batch(events)
    except OperationalError:
        raise
    except Exception:
        pass
    out: list[int | None | BaseException] = []
    with transaction.atomic():
        for event in events:
            try:
                out.append(_store(event))
            except OperationalError:
                raise
            except Exception as e:
                out.append(e)
    return out


def _payload(event: Event) -> dict:
    """`event.to_json()` without its deep copy: the channel layer copies (or serialises) the message anyway."""
    payload = {f: getattr(event, f) for f in _FIELDS}
    payload["at"] = event.at.isoformat()
    return payload


_FIELDS = tuple(f.name for f in fields(Event))


async def notify(groups: list[str], payload: dict) -> None:
    """Send one `a2a.event` message to each group; failures are logged, never raised."""
    await notify_each({group: [payload] for group in groups})


async def notify_each(by_group: dict[str, list[dict]]) -> None:
    """Send each group one `a2a.event` message with its events (`event` when one, else `events`, in order), under
    the group's next sequence number; failures are logged, never raised. A batch of stored events goes out as one
    message a group, not one an event: ten tabs and 50 pushes a second were 500 messages a second, each copied
    and dispatched on the event loop."""
    layer = get_channel_layer()
    if layer is None:
        return
    for group, payloads in by_group.items():
        seq = _seqs.pop(group, 0) + 1
        _seqs[group] = seq
        if len(_seqs) > SEQ_GROUPS:
            _seqs.popitem(last=False)
        message: dict[str, Any] = {"type": MESSAGE_TYPE, "group": group, "origin": ORIGIN, "seq": seq}
        if len(payloads) == 1:
            message["event"] = payloads[0]
        else:
            message["events"] = payloads
        try:
            await layer.group_send(group, message)
        except Exception as e:
            log.warning("live update to %s failed: %s", group, type(e).__name__)


@dataclass
class _Scope:
    """The events of one API call: queued without waiting while `open`, then waited for at its end."""

    open: bool = True
    futures: list[asyncio.Future[None]] = field(default_factory=list)


_scope: contextvars.ContextVar[_Scope | None] = contextvars.ContextVar("a2a_event_scope", default=None)


@contextlib.asynccontextmanager
async def deferred_events() -> AsyncIterator[None]:
    """Within: the events emitted (by this task and the tasks it starts) are queued, not waited for; at the end,
    wait until they are all stored and announced. An event emitted after the end (a follower that went on as a
    watch) is waited for by its emitter again, as outside the scope."""
    scope = _Scope()
    token = _scope.set(scope)
    try:
        yield
    finally:
        _scope.reset(token)
        scope.open = False
        if scope.futures:
            _writer().kick()
            await asyncio.gather(*scope.futures, return_exceptions=True)


@dataclass
class _Queued:
    event: Event
    done: asyncio.Future[None]
    scope: _Scope | None
    at: float


class _Writer:
    """One event loop's writer: stores the queued events in batches, in order, then announces them."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.queue: list[_Queued] = []
        self.writing: list[_Queued] = []  # the batch being written
        self.wake = asyncio.Event()
        # a context of its own: not the first emitter's (a request's, whose thread for sync work ends with it)
        self.task = loop.create_task(self._run(), context=contextvars.Context())

    def put(self, item: _Queued) -> None:
        self.queue.append(item)
        self.wake.set()

    def kick(self) -> None:
        self.wake.set()

    def _due(self) -> float:
        """Seconds until the queue must be written (0: now): deferred events wait a little for their call's next."""
        if any(q.scope is None or not q.scope.open for q in self.queue):
            return 0.0
        oldest = min(q.at for q in self.queue)
        return max(0.0, oldest + LINGER_SECONDS - self.loop.time())

    async def _run(self) -> None:
        try:
            await self._write_forever()
        finally:  # cancelled (the loop's end): whoever waits for an event is not left waiting
            for q in self.queue:
                q.done.cancel()

    async def _write_forever(self) -> None:
        while True:
            await self.wake.wait()
            self.wake.clear()
            while self.queue:
                wait = self._due()
                if wait > 0:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self.wake.wait(), wait)
                    self.wake.clear()
                    continue
                batch, self.queue = self.queue[:BATCH_MAX], self.queue[BATCH_MAX:]
                self.writing = batch
                try:
                    await self._write(batch)
                except asyncio.CancelledError:
                    for q in batch:
                        q.done.cancel()
                    raise
                except Exception:
                    log.exception("storing %d event(s) failed", len(batch))
                for q in batch:
                    if not q.done.done():
                        q.done.set_result(None)
                self.writing = []

    async def _write(self, batch: list[_Queued]) -> None:
        events = [q.event for q in batch]
        stored: list[int | None | BaseException] = [0] * len(events)
        for attempt in range(1, STORE_ATTEMPTS + 1):
            try:
                stored = await db_threads.run(_store_all, events)
                break
            except OperationalError as e:  # a busy SQLite ("database is locked"): wait a moment and try again
                if attempt == STORE_ATTEMPTS:
                    log.error("storing %d event(s) failed: %s", len(events), e)
                else:
                    await asyncio.sleep(0.05 * attempt)
            except Exception:
                log.exception("storing %d event(s) failed", len(events))
                break
        by_group: dict[str, list[dict]] = {}
        for event, row in zip(events, stored, strict=True):
            if isinstance(row, BaseException):
                log.error("storing a %s event of task %s failed", event.kind, event.task_id, exc_info=row)
                row = 0
            if row is None:  # not stored: a repeat, not announced either
                continue
            payload = _payload(event)
            if row:
                payload["eventId"] = row
            for group in groups_for(event):
                by_group.setdefault(group, []).append(payload)
        try:
            await notify_each(by_group)
        except Exception:
            log.exception("broadcasting %d event(s) failed", len(events))

    async def drain(self) -> None:
        """Write what is queued now, without waiting for more; until it is stored and announced."""
        for q in self.queue:
            q.scope = None
        self.kick()
        await asyncio.gather(*(q.done for q in [*self.writing, *self.queue]), return_exceptions=True)

    async def aclose(self) -> None:
        """Write what is queued, then stop."""
        await self.drain()
        self.task.cancel()
        await asyncio.wait({self.task})  # not `await` in suppress(CancelledError): that swallows our own cancel
        if not self.task.cancelled():
            self.task.result()  # the writer's own failure


_writers: dict[asyncio.AbstractEventLoop, _Writer] = {}


def _writer() -> _Writer:
    loop = asyncio.get_running_loop()
    w = _writers.get(loop)
    if w is None or w.task.done():
        for old in [lp for lp in _writers if lp.is_closed()]:
            del _writers[old]
        w = _writers[loop] = _Writer(loop)
    return w


async def flush() -> None:
    """Wait until every event queued in this loop is stored and announced (a test, a bench, a shutdown)."""
    w = _writers.get(asyncio.get_running_loop())
    if w is not None:
        await w.drain()


async def close() -> None:
    """Write what this loop has queued and stop its writer (the runtime's end)."""
    w = _writers.pop(asyncio.get_running_loop(), None)
    if w is not None:
        await w.aclose()


class ChannelsBroadcast:
    """EventSink: a TaskEvent row per event, then `a2a.event` to `core.events.groups_for(event)`."""

    async def emit(self, event: Event) -> None:
        if len(event.text) > EVENT_TEXT_CHARS:  # e.g. a delivered result's text: rows and messages stay small
            event = replace(event, text=preview(event.text, EVENT_TEXT_CHARS))
        row = outgoing.OUTGOING.get()
        if row is not None and event.kind in outgoing.SETTLING:  # a console send's: settles its message's row
            event = replace(event, data={**event.data, outgoing.KIND: row})
        loop = asyncio.get_running_loop()
        scope = _scope.get()
        if scope is not None and not scope.open:
            scope = None
        done: asyncio.Future[None] = loop.create_future()
        _writer().put(_Queued(event, done, scope, loop.time()))
        if scope is not None:
            scope.futures.append(done)
            return
        await asyncio.shield(done)  # the emitter giving up does not take the event out of the queue
