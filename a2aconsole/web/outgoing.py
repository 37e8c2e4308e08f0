"""How the event sink knows which of the owner's outgoing messages a tool event settles (`web.sends`).

A console send runs the tool with `OUTGOING` set to its `OutgoingMessage` row; the sink adds that id to the
send's `sent` and `error` events, and when it stores one, settles the row in the same transaction: `sent`
(the agent has the message) removes it, `error` marks it failed with the reason.
"""

from __future__ import annotations

import contextvars
from typing import Any

from django.utils import timezone

from a2aconsole.web.models import OutgoingMessage

OUTGOING: contextvars.ContextVar[int | None] = contextvars.ContextVar("a2a_outgoing", default=None)
KIND = "outgoing"  # the data member of a settling event, and the live message of a row that changed
SETTLING = ("sent", "error")


def took(event_kind: str, data: dict[str, Any]) -> None:
    """A stored event of a console send settles its row (called inside the event's transaction)."""

    row_id = data.get(KIND)
    if not isinstance(row_id, int):
        return
    if event_kind == "sent":
        OutgoingMessage.objects.filter(id=row_id).delete()
    elif event_kind == "error":
        reason = str(data.get("message") or "the send failed")
        OutgoingMessage.objects.filter(id=row_id, state=OutgoingMessage.SENDING).update(
            state=OutgoingMessage.FAILED, error=reason, updated_at=timezone.now()
        )
