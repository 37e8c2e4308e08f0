"""The task index: one `TaskRecord` per remote task, folded from its events as they are stored.

The Tasks page pages through thousands of tasks; reading them from the event history would mean grouping
every event on every page view. So each stored event also updates its task's row (same transaction,
`note`), and a migration folds the history that came before (`fold` works on any object with the fields,
including a migration's historical model).

Progress (`progress` events: what the agent says while it works) is kept on the row as its latest line
(`progress`, `progress_at`): a status message is not stored as an event at all (`note_progress`; an agent may
send hundreds), an artifact update is an event and sets the line too.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from a2aconsole.core.results import preview
from a2aconsole.web.models import TaskRecord

# finished: the task's own terminal states, and "lost" (its agent no longer knows it: nothing more comes)
TERMINAL = frozenset({"completed", "failed", "canceled", "rejected", "lost"})
LAST_CHARS = 300  # a row shows a line of the latest message, never the whole text
RESULT_CHARS = 1000  # of a result or question: what a row shows and free text finds (the task page has it all)
SPOKEN = ("sent", "state", "artifact", "question", "result")  # kinds whose text is something said
SEARCHED = ("task_id", "context_id", "sent_text", "last_text", "result_text")  # what free text finds


def progress_line(text: str, data: Any) -> str:
    """A progress event as one line: the status message, or `artifact <name>: <its text>`."""
    data = data if isinstance(data, dict) else {}
    if data.get("kind") == "artifact":
        name = str(data.get("name") or "")
        text = f"artifact {name}: {text}" if text else f"artifact {name}".strip()
    return preview(text, LAST_CHARS)


def fold(record: Any, ev: Any, *, stored: bool = True) -> None:
    """Apply one event (`TaskEvent`-like: kind, state, text, data, context_id, target, workspace,
    created_at) to `record`; `stored` False for a status message kept on the row only. Events folded out of
    order (a late write) never move a state backwards."""
    at: datetime = ev.created_at
    latest = record.updated_at is None or at >= record.updated_at
    record.events = (record.events or 0) + (1 if stored else 0)
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
    if latest and ev.kind == "progress":
        record.progress = record.last_text = progress_line(ev.text, ev.data)
        record.progress_at = at
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


class TaskRows:
    """The task rows a batch of events folds into: read in one query, each written once (`save`), so a batch of
    events (an API send's sent, state and result; a burst of pushes) costs two statements, not two an event.
    Use inside the transaction that stores the events."""

    def __init__(self, pairs: Any) -> None:
        self.rows = rows_of({p for p in pairs if p[1]}, full=True)
        self.read = {key: _values(row) for key, row in self.rows.items()}  # as stored: `save` writes what moved
        self.changed: dict[tuple[str, str], Any] = {}

    def _row(self, event_row: Any) -> Any:
        key = (event_row.agent, event_row.task_id)
        record = self.rows.get(key)
        if record is None:
            record = self.rows[key] = TaskRecord(agent=key[0], task_id=key[1], started_at=None, updated_at=None)
        self.changed[key] = record
        return record

    def note(self, event_row: Any) -> None:
        """Fold a stored `TaskEvent` into its task's row."""
        if event_row.task_id:  # a message-only reply, or an error before any task: no task to list
            fold(self._row(event_row), event_row)

    def note_progress(self, event_row: Any) -> bool:
        """Keep a status message (an unsaved `TaskEvent`) on its task's row; False when the row says it already."""
        if not event_row.task_id:
            return False
        record = self.rows.get((event_row.agent, event_row.task_id))
        if record is not None and record.progress == progress_line(event_row.text, event_row.data):
            return False
        fold(self._row(event_row), event_row, stored=False)
        return True

    def save(self) -> None:
        """Write the rows changed: the new ones in one INSERT, the others in an UPDATE per set of fields that
        moved (a burst of pushes moves the same few: progress, its time, the row's time), never every field: an
        UPDATE of all of them for each row of a batch was most of a push's database time."""
        new = {key for key, r in self.changed.items() if r.pk is None}
        if new:
            TaskRecord.objects.bulk_create([self.changed[key] for key in new])
        moved: dict[tuple[str, ...], list[Any]] = {}
        for key, record in self.changed.items():
            now = _values(record)
            if key not in new:
                was = self.read.get(key)
                fields = tuple(f for i, f in enumerate(_FOLDED) if was is None or was[i] != now[i])
                if fields:
                    moved.setdefault(fields, []).append(record)
            self.read[key] = now
        for fields, records in moved.items():
            TaskRecord.objects.bulk_update(records, fields)
        self.changed = {}


# what `fold` may change: every stored field but the key and the two that name the task (and any the database makes)
_FOLDED = [
    f.name
    for f in TaskRecord._meta.concrete_fields
    if not f.primary_key and not f.generated and f.name not in ("agent", "task_id")
]


def _values(record: Any) -> tuple[Any, ...]:
    return tuple(getattr(record, f) for f in _FOLDED)


def progress_of(pairs: Any) -> dict[tuple[str, str], Any]:
    """The rows with a progress line of these (agent, task id) pairs (`rows_of`): one query."""
    return {key: row for key, row in rows_of(pairs).items() if row.progress}


def rows_of(pairs: Any, times: bool = False, full: bool = False) -> dict[tuple[str, str], Any]:
    """The rows of these (agent, task id) pairs with what a watch row shows (state, progress line), and when
    `times` when each started and finished (a chat's task cards), or with every field when `full`: one query. A
    row's state is its latest event's (`fold`), so a watch table reads it here, not from the history."""

    wanted = set(pairs)
    if not wanted:
        return {}
    rows = TaskRecord.objects.filter(task_id__in={t for _, t in wanted})
    if not full:
        shown = ("agent", "task_id", "state", "progress", "progress_at")
        rows = rows.only(*shown, *(("started_at", "finished_at", "updated_at") if times else ()))
    return {(r.agent, r.task_id): r for r in rows if (r.agent, r.task_id) in wanted}


def progress_at(**where: str) -> Any:
    """When the latest progress line of the tasks matching `where` was told: a live tab's progress mark. A status
    message is no event, so a tab that heard no message while this moved missed one; an event moves the rows'
    `updated_at` but not this (the tab catches up on a missed event by its id, row by row, not in full)."""

    rows = TaskRecord.objects.filter(**where).exclude(progress_at=None).order_by("-progress_at")
    return rows.values_list("progress_at", flat=True).first()


def changed_at(**where: str) -> Any:
    """When a task's row last changed (of those matching `where`): a status message changes no event, so caches
    of what rows show, and tabs checking that they heard everything, look here."""

    return TaskRecord.objects.filter(**where).order_by("-updated_at").values_list("updated_at", flat=True).first()


RUNNING = frozenset({"", "unknown", "submitted", "working"})


def progress_view(record: Any, state: str | None = None) -> dict[str, Any] | None:
    """A task's progress line as `_progress.html` shows it (`p`), while it runs (`state`, else the row's);
    None when there is none, or the task is done or waits for an answer (its result or question says more)."""
    if record is None or not record.progress or (state if state is not None else record.state) not in RUNNING:
        return None
    at = record.progress_at
    view = {"text": record.progress, "at": at, "key": f"{at.isoformat() if at else ''}:{len(record.progress)}"}
    return {**view, **(fraction(record.progress) or {})}


_COUNT = re.compile(r"(?<![\d.])(\d{1,9})\s*(?:/|of)\s*(\d{1,9})(?![\d.])")  # "22/30", "step 3 of 8"
_PERCENT = re.compile(r"(?<![\d.])(\d{1,3}(?:\.\d+)?)\s*%")  # "73%", "12.5 %"


def fraction(text: str) -> dict[str, Any] | None:
    """How far along a status message says the task is, when it gives numbers ("working 22/30", "40%"): the
    bar's `done` of `total` and its `percent`; None when it gives none (or numbers no bar can show)."""
    text = text[:500]
    if m := _COUNT.search(text):
        done, total = int(m.group(1)), int(m.group(2))
        if total > 0 and done <= total:
            return {"done": done, "total": total, "percent": round(100 * done / total)}
    if m := _PERCENT.search(text):
        percent = float(m.group(1))
        if percent <= 100:
            return {"done": percent, "total": 100, "percent": round(percent)}
    return None


def task_progress(agent: str, task_id: str, state: str | None = None) -> dict[str, Any] | None:
    """One task's progress line (`progress_view`), or None: one query."""
    return progress_view(progress_of({(agent, task_id)}).get((agent, task_id)), state)


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
