"""What an agent POSTs to the push receiver, read as the stream event it is.

Both SDKs (a2a-sdk 1.3's `BasePushNotificationSender`, @a2a-js/sdk 1.3's default sender) POST one `StreamResponse`
as JSON per task event: `{"task": ...}`, `{"statusUpdate": ...}` or `{"artifactUpdate": ...}`. It is read as the
SDK reads a stream's events (`parse_answer`: strict first, then mended), so a push says what a stream would.
A body in another shape (a bare 0.3 task, an agent's own) reads as None: the watch then asks GetTask, as before.
"""

from __future__ import annotations

from typing import Any

from a2a.types import StreamResponse
from google.protobuf.json_format import ParseError

from a2aconsole.core.remote.convert import event_value
from a2aconsole.core.remote.lenient import parse_answer
from a2aconsole.core.remote.values import TaskEvent


def push_event(data: dict[str, Any]) -> TaskEvent | None:
    """The task event a push body (its JSON object) carries; None when it is not a stream event the console reads."""
    try:
        return event_value(parse_answer(data, StreamResponse()))
    except (ParseError, ValueError, TypeError, RecursionError):
        return None
