"""What the core knows of a remote task, message, stream event and card: small frozen values, no SDK types.

`client.py` reads a2a-sdk's protobuf objects and turns each into one of these once, at the edge (a send's
reply, GetTask, CancelTask, each stream event, each card); the rest of the core and the web layer see only
these. States are the spec's names as strings ("working", "input-required", "completed", ...; "unknown" for
an unspecified one). Each part's text or bytes are read from the SDK's object once, by that conversion.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from a2aconsole.core.files import Attachment


@dataclass(frozen=True, slots=True)
class PartValue:
    """One part: `kind` is "text", "raw" (file bytes), "url", "data" (a JSON value) or "" (none of these)."""

    kind: str
    text: str = ""
    raw: bytes = b""
    url: str = ""
    data: Any = None
    filename: str = ""
    media_type: str = ""


@dataclass(frozen=True, slots=True)
class MessageValue:
    """A message: an agent's status message, or a message-only reply to a send."""

    message_id: str
    context_id: str = ""
    task_id: str = ""
    parts: tuple[PartValue, ...] = ()


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class StatusValue:
    """A task's status: its state, message and timestamp (`stamp`: seconds and nanoseconds since the epoch,
    None for none; read as text or datetime only when asked, which is rare)."""

    state: str
    message: MessageValue | None = None
    stamp: tuple[int, int] | None = None

    @property
    def at(self) -> datetime | None:
        """The timestamp as an aware UTC datetime, to the microsecond (None when absent or out of range)."""
        if self.stamp is None:
            return None
        seconds, nanos = self.stamp
        try:
            return _EPOCH + timedelta(seconds=seconds, microseconds=nanos // 1000)
        except OverflowError:
            return None

    @property
    def timestamp(self) -> str:
        """The timestamp in RFC 3339 as the SDK writes it ("" for none): UTC, `Z`, and 0, 3, 6 or 9 fractional
        digits as the exact time needs. A watch record's `staleStatus` keeps it in this form."""
        at = self.at
        if at is None or self.stamp is None:
            return ""
        nanos = self.stamp[1]
        whole = at.replace(microsecond=0, tzinfo=None).isoformat()
        if nanos % 1_000_000_000 == 0:
            return whole + "Z"
        if nanos % 1_000_000 == 0:
            return f"{whole}.{nanos // 1_000_000:03d}Z"
        if nanos % 1_000 == 0:
            return f"{whole}.{nanos // 1_000:06d}Z"
        return f"{whole}.{nanos:09d}Z"


@dataclass(frozen=True, slots=True)
class ArtifactValue:
    artifact_id: str
    name: str = ""
    description: str = ""
    parts: tuple[PartValue, ...] = ()


@dataclass(frozen=True, slots=True)
class TaskSnapshot:
    """A task as last seen: ids, status, artifacts, and (read from a send's reply) the ids of its history's messages."""

    id: str
    context_id: str
    status: StatusValue
    artifacts: tuple[ArtifactValue, ...] = ()
    history_ids: tuple[str, ...] = ()

    @property
    def state(self) -> str:
        return self.status.state


@dataclass(frozen=True, slots=True)
class TaskPage:
    """One page of an agent's ListTasks: the tasks (status only, no history or artifacts), and the agent's token of
    the next page ("" on the last). `total` is what the agent says it holds in all (None when it does not say)."""

    tasks: tuple[TaskSnapshot, ...]
    next_page_token: str = ""
    total: int | None = None


@dataclass(frozen=True, slots=True)
class PushConfigValue:
    """A push config an agent holds for a task, as the console may show it: its id, its URL as scheme, host, port
    and path only, and whether it carries a token or credentials (never what they are)."""

    id: str
    task_id: str
    url: str
    has_token: bool = False
    auth_scheme: str = ""


@dataclass(frozen=True, slots=True)
class StatusUpdate:
    """A stream's status update event."""

    task_id: str
    context_id: str
    status: StatusValue


@dataclass(frozen=True, slots=True)
class ArtifactUpdate:
    """A stream's artifact update event: a new artifact, a replacement, or parts to append (`append`)."""

    task_id: str
    context_id: str
    artifact: ArtifactValue
    append: bool = False
    last_chunk: bool = False


TaskEvent = TaskSnapshot | StatusUpdate | ArtifactUpdate  # what a subscription yields


def new_id() -> str:
    """A fresh random id, 32 hex digits: a message's or a watch's. An id, not a secret (push tokens come
    from `secrets`)."""
    return uuid.uuid4().hex


@dataclass(frozen=True, slots=True)
class OutgoingMessage:
    """The user message a send carries: a text, the attached files, the ids it continues, its metadata."""

    text: str
    files: tuple[Attachment, ...] = ()
    context_id: str = ""
    task_id: str = ""
    metadata: dict[str, Any] = field(default_factory=dict, hash=False)
    message_id: str = field(default_factory=new_id)
    data: dict[str, Any] | None = field(default=None, hash=False)  # a data part (a filled form), after the files


@dataclass(frozen=True, slots=True)
class SkillSummary:
    id: str
    name: str
    description: str = ""
    examples: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CardSummary:
    """What the core reads of an agent card. `sdk_card` is the SDK's parsed card, for `client.py` only (it
    builds the SDK's clients from it; `client.card_json` gives its JSON)."""

    name: str
    description: str = ""
    streaming: bool = False
    push: bool = False
    extended_card: bool = False
    skills: tuple[SkillSummary, ...] = ()
    protocol_versions: tuple[str, ...] = ()
    sdk_card: Any = field(default=None, repr=False, compare=False, hash=False)
