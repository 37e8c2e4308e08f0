"""`pending.json`: the watch records of a workspace (the spec's shape), plus `undelivered` result texts and
the events their history still needs (`endEvents`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

_KNOWN = (
    "watchId",
    "target",
    "agent",
    "taskId",
    "contextId",
    "pushToken",
    "startedAt",
    "source",
    "undelivered",
    "endEvents",
)
_TYPED_TEXT = ("state", "message")  # typed when they are strings; any other value stays in `extra` as it was


@dataclass
class WatchRecord:
    """One watch. `undelivered` holds a finished result's text until its delivery is confirmed; `end_events` the
    watch's closing events (kind, at, state, text, data: a bounded preview), written with it, so a process
    that dies before storing them in the history emits them at the next start (set once, never changed in
    place: the batched writer compares records by their JSON). `state` is the task's last known state (or
    "sending" while a send still waits for it: `sending.py`); `message` the text that was sent. Keys the
    console does not know stay in `extra` and are written back as they were."""

    watch_id: str
    target: str
    agent: str
    task_id: str
    context_id: str = ""
    push_token: str | None = field(default=None, repr=False)
    started_at: str = ""
    source: str = "poll"
    undelivered: str | None = field(default=None, repr=False)
    end_events: list[dict[str, Any]] | None = field(default=None, repr=False)
    extra: dict[str, Any] = field(default_factory=dict, repr=False)
    state: str = ""
    message: str = field(default="", repr=False)

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "watchId": self.watch_id,
            "target": self.target,
            "agent": self.agent,
            "taskId": self.task_id,
            "contextId": self.context_id,
            "startedAt": self.started_at,
            "source": self.source,
        }
        if self.push_token is not None:
            d["pushToken"] = self.push_token
        if self.undelivered is not None:
            d["undelivered"] = self.undelivered
        if self.end_events is not None:
            d["endEvents"] = self.end_events
        if self.state:
            d["state"] = self.state
        if self.message:
            d["message"] = self.message
        d.update({k: v for k, v in self.extra.items() if k not in _KNOWN and not (k in _TYPED_TEXT and k in d)})
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> WatchRecord:
        extra = {k: v for k, v in d.items() if k not in _KNOWN}
        typed = {k: extra.pop(k) for k in _TYPED_TEXT if isinstance(extra.get(k), str)}
        return cls(
            watch_id=d["watchId"],
            target=str(d["target"]),
            agent=d["agent"],
            task_id=d["taskId"],
            context_id=d.get("contextId") or "",
            push_token=d.get("pushToken"),
            started_at=d.get("startedAt") or "",
            source=d.get("source") or "poll",
            undelivered=d.get("undelivered"),
            end_events=_end_events(d.get("endEvents")),
            extra=extra,
            state=typed.get("state", ""),
            message=typed.get("message", ""),
        )


def _end_events(value: Any) -> list[dict[str, Any]] | None:
    """The kept events as written; anything else (a hand-edited file) is ignored rather than refused."""
    if not isinstance(value, list):
        return None
    return [e for e in value if isinstance(e, dict) and isinstance(e.get("kind"), str)]


def parse_pending(text: str, filename: str = "pending.json") -> list[WatchRecord]:
    """All records; raises ValueError with the position when the file is malformed."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{filename} is not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    if not isinstance(data, list):
        raise ValueError(f"{filename}: expected a JSON array of watch records")
    records = []
    for i, raw in enumerate(data):
        problem = record_problem(raw)
        if problem:
            raise ValueError(f"{filename} record {i + 1}: {problem}")
        records.append(WatchRecord.from_json(raw))
    return records


def record_problem(raw: object) -> str | None:
    """Why `raw` is not a watch record, or None."""
    if not isinstance(raw, dict):
        return "expected an object"
    missing = [k for k in ("watchId", "target", "agent", "taskId") if not isinstance(raw.get(k), str | int)]
    return f"missing {', '.join(missing)}" if missing else None


def dump_pending(records: list[WatchRecord]) -> bytes:
    return (json.dumps([r.to_json() for r in records], indent=2, ensure_ascii=False) + "\n").encode()
