"""Keyset pages of the Tasks page: a page is the rows just past a cursor (the last row shown) in the sort's order,
read as a range of the sort's index, so the millionth page costs what the first does (`OFFSET` reads and drops
every row before it).

A cursor names a row by its sort key (`started`: started_at and id; `agent`, `state`, `chat`: the column, then
started_at and id; `duration`: the finished by run_seconds, the running by started_at), plus its position in the
list when known (shown as "26–50"; a hint only: rows inserted since move it). Counts stop at `COUNT_CAP`.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Q, QuerySet
from django.utils import timezone

from a2aconsole.web.models import TaskRecord

PAGE_SIZE = 25  # rows a page shows: what a page costs, whatever the number of tasks
COUNT_CAP = 1000  # counted this far, then "1,000+": a count of a million rows reads them all
KEYS = {  # each sort's key, the fields its index holds in that order
    "started": ("started_at", "id"),
    "updated": ("updated_at", "id"),
    "state": ("state", "started_at", "id"),
    "agent": ("agent", "started_at", "id"),
    "chat": ("target", "started_at", "id"),
}
TIMES = frozenset({"started_at", "updated_at"})
TYPES: dict[str, Any] = {"id": int, "run_seconds": (int, float), "started_at": datetime, "updated_at": datetime}


class BadCursor(ValueError):
    """A page link whose cursor this list cannot read (edited, truncated, or made for another sort)."""


@dataclass(frozen=True)
class Cursor:
    """A row a page starts after (or ends before): its sort key in JSON's types, and its position when known."""

    sort: str
    key: tuple[Any, ...]
    position: int | None = None

    def encode(self) -> str:
        raw = json.dumps([self.sort, list(self.key), self.position], separators=(",", ":"))
        return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")

    @classmethod
    def decode(cls, text: str, sort: str) -> Cursor:
        """The cursor of a link made for `sort`; `BadCursor` saying why when it is none."""
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
            made_for, key, position = json.loads(raw)
        except (binascii.Error, ValueError, TypeError) as e:
            raise BadCursor("the page link is damaged") from e
        if made_for != sort:
            raise BadCursor("the page link was made for another order")
        if not (position is None or (isinstance(position, int) and position > 0)) or not isinstance(key, list):
            raise BadCursor("the page link is damaged")
        cursor = cls(sort, tuple(key), position)
        _values(cursor)  # checked now: a bad value is a clear notice, not a database error later
        return cursor


def _values(cursor: Cursor) -> list[Any]:
    """The cursor's key as the database compares it (times as datetimes), checked field by field."""
    column = cursor.sort.lstrip("-")
    fields = KEYS.get(column) or (("run_seconds", "id") if cursor.key[:1] == ("f",) else ("started_at", "id"))
    key = cursor.key[1:] if column == "duration" else cursor.key
    if column == "duration" and cursor.key[:1] not in (("f",), ("r",)) or len(key) != len(fields):
        raise BadCursor("the page link is damaged")
    values = []
    for name, value in zip(fields, key, strict=True):
        try:
            if name in TIMES:
                value = datetime.fromisoformat(value)
            if not isinstance(value, TYPES.get(name, str)) or name in TIMES and timezone.is_naive(value):
                raise ValueError(value)
        except (TypeError, ValueError) as e:
            raise BadCursor("the page link is damaged") from e
        values.append(value)
    return values


def _past(fields: tuple[str, ...], values: list[Any], less: bool) -> Q:
    """Rows whose key is below (`less`) or above `values`: `(a, b) < (x, y)` as `a <= x AND (a < x OR b < y)`,
    so the first field bounds the index range on every database."""
    op = "lt" if less else "gt"
    here = Q(**{f"{fields[0]}__{op}": values[0]})
    if len(fields) == 1:
        return here
    return Q(**{f"{fields[0]}__{op}e": values[0]}) & (here | _past(fields[1:], values[1:], less))


def _key(sort: str, row: TaskRecord, now: datetime) -> tuple[Any, ...]:
    """A row's place in the ascending order of `sort` (the descending order is its reverse)."""
    column = sort.lstrip("-")
    if column != "duration":
        return tuple(getattr(row, f) for f in KEYS[column])
    if row.run_seconds is not None:
        return (row.run_seconds, 1, row.id)
    return ((now - row.started_at).total_seconds(), 0, -row.id)  # the longest running started first


def cursor_of(sort: str, row: TaskRecord, position: int | None) -> Cursor:
    column = sort.lstrip("-")
    if column == "duration":
        if row.run_seconds is not None:
            return Cursor(sort, ("f", row.run_seconds, row.id), position)
        return Cursor(sort, ("r", row.started_at.isoformat(), row.id), position)
    key = tuple(v.isoformat() if isinstance(v, datetime) else v for v in (getattr(row, f) for f in KEYS[column]))
    return Cursor(sort, key, position)


def _parts(
    sort: str, descending: bool, cursor: Cursor | None, now: datetime, finished: bool | None
) -> list[tuple[Q, list[str]]]:
    """What to read for the rows past `cursor` in this direction: (restriction, order) per index read.
    `finished`: see `read_page`."""
    column = sort.lstrip("-")
    if column != "duration":
        fields = KEYS[column]
        order = [f"-{f}" if descending else f for f in fields]
        return [(Q() if cursor is None else _past(fields, _values(cursor), descending), order)]
    # ascending: finished by (run_seconds, id), running by how long so far (started_at descending), id descending
    done, running = Q(run_seconds__isnull=False), Q(run_seconds__isnull=True)
    if cursor is not None:
        values = _values(cursor)
        if cursor.key[0] == "f":  # past a finished row of R seconds
            seconds = values[0]
            done &= _past(("run_seconds", "id"), values, descending)
            since = now - timedelta(seconds=seconds)
            running &= Q(started_at__gte=since) if descending else Q(started_at__lt=since)
        else:  # past a running row started at S
            seconds = (now - values[0]).total_seconds()
            done &= Q(run_seconds__lt=seconds) if descending else Q(run_seconds__gte=seconds)
            running &= _past(("started_at", "id"), values, not descending)
    if descending:
        parts = [(done, ["-run_seconds", "-id"]), (running, ["started_at", "id"])]
    else:
        parts = [(done, ["run_seconds", "id"]), (running, ["-started_at", "-id"])]
    return parts if finished is None else [parts[0 if finished else 1]]


def _read(
    qs: QuerySet[TaskRecord], sort: str, descending: bool, cursor: Cursor | None, n: int, finished: bool | None
) -> list[TaskRecord]:
    """The first `n` rows past `cursor` in this direction: each part read `n` rows at most, merged."""
    now = timezone.now()
    parts = _parts(sort, descending, cursor, now, finished)
    rows = [r for where, order in parts for r in qs.filter(where).order_by(*order)[:n]]
    return sorted(rows, key=lambda r: _key(sort, r, now), reverse=descending)[:n]


def count(qs: QuerySet[TaskRecord]) -> int:
    """How many rows, up to `COUNT_CAP` + 1 (more than the cap: show "1,000+")."""
    return qs.order_by()[: COUNT_CAP + 1].count()


def shown_count(n: int) -> str:
    return f"{COUNT_CAP:,}+" if n > COUNT_CAP else f"{n:,}"


@dataclass
class Page:
    """One page: its rows, where it starts when known, and the cursors of the pages beside it."""

    rows: list[TaskRecord]
    start: int | None
    previous: Cursor | None
    next: Cursor | None

    @property
    def end(self) -> int | None:
        return None if self.start is None else self.start + len(self.rows) - 1


def read_page(
    qs: QuerySet[TaskRecord], sort: str, matched: int, after: Cursor | None = None, before: Cursor | None = None,
    last: bool = False, finished: bool | None = None,
) -> Page:  # fmt: skip
    """The page after `after`, before `before`, the last one, or else the first. `matched`: the capped count.
    `finished`: every row of `qs` is finished (True) or running (False), as a `state:` filter says (a task's
    `run_seconds` is set exactly when its state is final: `task_index.fold`), so the duration sort reads one
    part only: the other part's read, its filter matching no row, would read the whole of its index."""
    descending = sort.startswith("-")
    if before is not None or last:
        rows = _read(qs, sort, not descending, before, PAGE_SIZE + 1, finished)[::-1]
        more = len(rows) > PAGE_SIZE
        rows = rows[1:] if more else rows
        if more or last:
            if last:
                start = matched - len(rows) + 1 if matched <= COUNT_CAP else None
            else:
                start = before.position - len(rows) if before and before.position else None
            start = start if start is None or start > 0 else None
            return _page(sort, rows, start, more, not last and bool(rows))
        # nothing before these: the first page, filled (rows may have come and gone since the link was made)
    rows = _read(qs, sort, descending, after, PAGE_SIZE + 1, finished)
    if after is not None and not rows:  # past the end (the rows after it are gone): the last page
        return read_page(qs, sort, matched, last=True, finished=finished)
    more, rows = len(rows) > PAGE_SIZE, rows[:PAGE_SIZE]
    start = 1 if after is None else (after.position + 1 if after.position else None)
    return _page(sort, rows, start, after is not None and bool(rows), more)


def _page(sort: str, rows: list[TaskRecord], start: int | None, has_previous: bool, has_next: bool) -> Page:
    end = None if start is None else start + len(rows) - 1
    return Page(
        rows,
        start,
        cursor_of(sort, rows[0], start) if has_previous and rows else None,
        cursor_of(sort, rows[-1], end) if has_next and rows else None,
    )
