"""The task index: one `TaskRecord` per remote task, folded from its events as they are stored.

The Tasks page pages through thousands of tasks; reading them from the event history would mean grouping
every event on every page view. So each stored event also updates its task's row (same transaction,
`note`), and a migration folds the history that came before (`fold` works on any object with the fields,
including a migration's historical model).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from a2aconsole.core.results import preview

TERMINAL = frozenset({"completed", "failed", "canceled", "rejected"})
LAST_CHARS = 300  # a row shows a line of the latest message, never the whole text
RESULT_CHARS = 1000  # of a result or question: what a row shows and free text finds (the task page has it all)
SPOKEN = ("sent", "state", "artifact", "question", "result")  # kinds whose text is something said
SEARCHED = ("task_id", "context_id", "sent_text", "last_text", "result_text")  # what free text finds


def fold(record: Any, ev: Any) -> None:
    """Apply one event (`TaskEvent`-like: kind, state, text, data, context_id, target, workspace,
    created_at) to `record`. Events folded out of order (a late write) never move a state backwards."""
    at: datetime = ev.created_at
    latest = record.updated_at is None or at >= record.updated_at
    record.events = (record.events or 0) + 1
    if record.started_at is None or at < record.started_at:
        record.started_at = at
    if latest:
        record.updated_at = at
    for field in ("context_id", "target", "workspace"):
        if not getattr(record, field) and getattr(ev, field, ""):
            setattr(record, field, getattr(ev, field))
    data = ev.data if isinstance(ev.data, dict) else {}
    if isinstance(data.get("source"), str) and ev.kind.startswith("watch.") and latest:
        record.source = data["source"][:20]
    if ev.kind == "sent" and ev.text and not record.sent_text:
        record.sent_text = preview(ev.text, LAST_CHARS)
    if latest and ev.state:
        record.state = ev.state
        terminal = ev.state in TERMINAL
        record.finished_at = (record.finished_at or at) if terminal else None  # the first terminal event
    if latest and ev.kind in SPOKEN and ev.text:
        record.last_text = preview(ev.text, LAST_CHARS)
    if latest and ev.kind in ("result", "question"):
        record.result_text = preview(ev.text, RESULT_CHARS)
    finished = record.finished_at
    record.run_seconds = (finished - record.started_at).total_seconds() if finished is not None else None
    record.search_words = search_words(record)


def search_words(record: Any) -> str:
    """Each whitespace-separated word of the searched fields once, lower case, in order. A search word without
    whitespace is in one of the texts exactly when it is in this (a substring lies inside one word), which is
    far shorter than the texts: a result repeats its words."""
    text = " ".join(str(getattr(record, name) or "") for name in SEARCHED)
    return " ".join(dict.fromkeys(text.lower().split()))


def note(event_row: Any) -> None:
    """Fold a just-stored `TaskEvent` into its task's row (call inside the transaction that stored it)."""
    from a2aconsole.web.models import TaskRecord

    if not event_row.task_id:  # a message-only reply, or an error before any task: no task to list
        return
    record = TaskRecord.objects.filter(agent=event_row.agent, task_id=event_row.task_id).first()
    if record is None:
        record = TaskRecord(agent=event_row.agent, task_id=event_row.task_id, started_at=None, updated_at=None)
    fold(record, event_row)
    record.save()


def rebuild(task_record: Any, task_event: Any, batch: int = 1000) -> int:
    """Fold the whole event history into empty rows (the migration's backfill); the number of tasks."""
    records: dict[tuple[str, str], Any] = {}
    for ev in task_event.objects.exclude(task_id="").order_by("created_at", "id").iterator(chunk_size=batch):
        key = (ev.agent, ev.task_id)
        record = records.get(key)
        if record is None:
            record = records[key] = task_record(
                agent=ev.agent, task_id=ev.task_id, started_at=None, updated_at=None, events=0
            )
        fold(record, ev)
    task_record.objects.bulk_create(records.values(), batch_size=batch, ignore_conflicts=True)
    return len(records)
