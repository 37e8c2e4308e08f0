"""When a watch last heard from its agent, and whether the silence since is news the owner must see.

The follower knows when the agent last answered (a push's GetTask, a stream event, a poll) and why the last call
failed. It keeps that in memory: a write per push would cost a `pending.json` transaction each. The record gets it
only when it changes meaning (`HEARD_AT`, `LAST_ERROR`: the first failed call after an answer, the first answer
after a failure), so a restarted console still says since when the agent is silent, and why. The silence is
**quiet** (shown as "no news since 21:04 (why)" in a warning style) once the last call failed and the agent has
not answered for longer than its watch waits between checks: 2 minutes for push and subscribe, twice the poll
interval for polling.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

HEARD_AT = "heardAt"  # a watch record's key: when the agent last answered (ISO), written at a change only
LAST_ERROR = "lastError"  # and why its last call failed ("" or absent: it answered)
PUSH_QUIET = 120.0  # seconds a push or subscribe watch may go unanswered after a failed call before it is news
ERROR_CHARS = 200  # of a failure's reason, what is kept and shown
QUIET = "quiet"  # a `watch.update` event's `news`: no answer for too long
HEARD = "heard"  # and: the agent answered again


def reason(error: str) -> str:
    """A failure's reason as kept and shown: one line, bounded."""
    line = " ".join(error.split())
    return line if len(line) <= ERROR_CHARS else line[: ERROR_CHARS - 1] + "…"


def parse_at(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    with contextlib.suppress(ValueError):
        return datetime.fromisoformat(value)
    return None


def is_quiet(heard_at: datetime | None, error: str, quiet_after: float, now: datetime) -> bool:
    """The last call failed, and the agent has not answered for longer than `quiet_after` seconds."""
    return bool(error) and heard_at is not None and (now - heard_at).total_seconds() > quiet_after


@dataclass(frozen=True)
class News:
    """What a watch row says of its agent: `heard_at` (None: not known yet), `quiet`, and `error` (the reason)."""

    heard_at: datetime | None
    error: str
    quiet: bool


def news_of(row: dict[str, Any], record_extra: dict[str, Any], now: datetime) -> News:
    """A watch's news from the registry's row of it (`WatchRegistry.snapshot`: `heardAt`, `lastError`,
    `quietAfter`), else from its record as last written (a watch another process follows, or none yet)."""
    if row:
        heard_at, error = parse_at(row.get("heardAt")), str(row.get("lastError") or "")
        quiet_after = float(row.get("quietAfter") or PUSH_QUIET)
    else:
        heard_at, error = parse_at(record_extra.get(HEARD_AT)), str(record_extra.get(LAST_ERROR) or "")
        quiet_after = PUSH_QUIET
    error = reason(error)
    return News(heard_at, error, is_quiet(heard_at, error, quiet_after, now))
