"""The SDK's objects as the core's values (`values.py`) and back: made once, at the edge of the wire."""

from __future__ import annotations

from typing import Any

from a2a.types import (
    AgentCard,
    Artifact,
    ListTasksResponse,
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
)
from google.protobuf.json_format import MessageToDict, ParseDict
from google.protobuf.struct_pb2 import Struct

from a2aconsole.core.files import Attachment, mask_url
from a2aconsole.core.remote.values import (
    ArtifactUpdate,
    ArtifactValue,
    CardSummary,
    MessageValue,
    OutgoingMessage,
    PartValue,
    PushConfigValue,
    SkillSummary,
    StatusUpdate,
    StatusValue,
    TaskEvent,
    TaskPage,
    TaskSnapshot,
)

FOLLOW_UP_HISTORY = 2  # the messages a follow-up's reply carries: the question it answers and the answer


def outgoing_message(
    text: str,
    files: list[Attachment],
    context_id: str,
    task_id: str,
    metadata: dict[str, Any],
    data: dict[str, Any] | None = None,
) -> OutgoingMessage:
    """The user message a send carries: a text, the attachments (each a file part on the wire), a data part (a
    JSON object: a filled form), the metadata."""
    return OutgoingMessage(text, tuple(files), context_id, task_id, metadata, data=data)


def send_request(out: OutgoingMessage, history: int) -> SendMessageRequest:
    """SendMessage's request for `out`, with returnImmediately and the history asked (`historyLength`, set even
    when 0: unset, an agent answers with the whole history). The message is built inside the request: one built
    apart is copied into it whole, and its parts into it before, so a file took four times its size at the peak
    (and each send a few us more)."""
    req = SendMessageRequest()
    req.configuration.return_immediately = True
    req.configuration.history_length = history
    message = req.message
    message.message_id = out.message_id
    message.role = Role.ROLE_USER
    message.context_id = out.context_id
    message.task_id = out.task_id
    if out.text:
        message.parts.add(text=out.text)
    for f in out.files:
        message.parts.add(raw=f.data, media_type=f.media_type, filename=f.filename)
    if out.data is not None:
        ParseDict(out.data, message.parts.add().data)
    message.metadata.update(out.metadata)
    return req


# the spec's task states by their enum, in the order of a task's life (as a filter of them lists them)
STATE_NAMES: dict[int, str] = {
    TaskState.TASK_STATE_SUBMITTED: "submitted",
    TaskState.TASK_STATE_WORKING: "working",
    TaskState.TASK_STATE_INPUT_REQUIRED: "input-required",
    TaskState.TASK_STATE_AUTH_REQUIRED: "auth-required",
    TaskState.TASK_STATE_COMPLETED: "completed",
    TaskState.TASK_STATE_FAILED: "failed",
    TaskState.TASK_STATE_CANCELED: "canceled",
    TaskState.TASK_STATE_REJECTED: "rejected",
}
TASK_STATES = tuple(STATE_NAMES.values())  # the names, as ListTasks filters by them (`Connection.list_tasks`)


# where the lenient parse (`lenient.py`) keeps a state the agent said that no 1.0 enum names, in the metadata of
# the task or status update that holds the status: the console's own word, shown as the task's state
KEPT_STATE = "a2aconsole.state"
STATE_VALUES: dict[str, int] = {name: value for value, name in STATE_NAMES.items()}


def state_name(state: int) -> str:
    """The spec's lowercase kebab name of a TaskState (`unknown` for an unspecified state)."""
    return STATE_NAMES.get(state, "unknown")


def kept_state(metadata: Struct) -> str:
    """The state the agent said that no enum names (`KEPT_STATE`), or ""."""
    kept = metadata.fields.get(KEPT_STATE)
    return kept.string_value if kept is not None else ""


def _part(p: Part) -> PartValue:
    kind = p.WhichOneof("content")
    if kind == "text":
        return PartValue("text", text=p.text)
    if kind == "raw":
        return PartValue("raw", raw=p.raw, filename=p.filename, media_type=p.media_type)
    if kind == "url":
        return PartValue("url", url=p.url, filename=p.filename, media_type=p.media_type)
    if kind == "data":
        return PartValue("data", data=MessageToDict(p.data), filename=p.filename, media_type=p.media_type)
    return PartValue("")


def message_value(m: Message) -> MessageValue:
    return MessageValue(m.message_id, m.context_id, m.task_id, tuple([_part(p) for p in m.parts]))


def status_value(s: TaskStatus, metadata: Struct | None = None) -> StatusValue:
    """`metadata`: the holder's (task, update), where a state no enum names is kept (`KEPT_STATE`)."""
    stamp = (s.timestamp.seconds, s.timestamp.nanos) if s.HasField("timestamp") else None
    state = STATE_NAMES.get(s.state) or (metadata is not None and kept_state(metadata)) or "unknown"
    return StatusValue(state, message_value(s.message) if s.HasField("message") else None, stamp)


def _artifact(a: Artifact) -> ArtifactValue:
    return ArtifactValue(a.artifact_id, a.name, a.description, tuple([_part(p) for p in a.parts]))


def task_snapshot(t: Task, *, history: bool = True) -> TaskSnapshot:
    """`history`: keep the ids of the task's history messages (a send's reply needs them to tell a stale reply;
    a GetTask's task does not)."""
    return TaskSnapshot(
        t.id,
        t.context_id,
        status_value(t.status, t.metadata),
        tuple([_artifact(a) for a in t.artifacts]),
        tuple([m.message_id for m in t.history]) if history else (),
    )


def task_page(answer: ListTasksResponse, most: int) -> TaskPage:
    """A ListTasks answer as a page of at most `most` tasks (an agent may send more than asked: the rest is not
    read), each its status only."""
    tasks = tuple(TaskSnapshot(t.id, t.context_id, status_value(t.status)) for t in answer.tasks[:most])
    total = answer.total_size if answer.total_size > 0 else None
    return TaskPage(tasks, answer.next_page_token[:MAX_PAGE_TOKEN], total)


MAX_PAGE_TOKEN = 1000  # an agent's page token is opaque; a longer one is not a token the console passes on


def push_config_value(cfg: TaskPushNotificationConfig) -> PushConfigValue:
    """A push config as the console may show it: URL masked, token and credentials only said to be there."""
    auth = cfg.authentication if cfg.HasField("authentication") else None
    return PushConfigValue(
        cfg.id,
        cfg.task_id,
        mask_url(cfg.url) if cfg.url else "",
        has_token=bool(cfg.token) or bool(auth and auth.credentials),
        auth_scheme=auth.scheme[:40] if auth is not None else "",
    )


def event_value(ev: StreamResponse) -> TaskEvent | None:
    """A stream event as the core reads it; None for a kind it does not (a message)."""
    kind = ev.WhichOneof("payload")
    if kind == "task":
        return task_snapshot(ev.task)
    if kind == "status_update":
        u = ev.status_update
        return StatusUpdate(u.task_id, u.context_id, status_value(u.status, u.metadata))
    if kind == "artifact_update":
        a = ev.artifact_update
        return ArtifactUpdate(a.task_id, a.context_id, _artifact(a.artifact), a.append, a.last_chunk)
    return None


def task_json(task: Task) -> dict[str, Any]:
    """The task as the agent's JSON says it (what the console's task page shows raw): without a state the
    console kept in it (`KEPT_STATE`), which the agent never said there."""
    out = MessageToDict(task)
    meta = out.get("metadata")
    if isinstance(meta, dict) and KEPT_STATE in meta:
        del meta[KEPT_STATE]
        if not meta:
            del out["metadata"]
    return out


def card_summary(card: AgentCard) -> CardSummary:
    caps = card.capabilities
    return CardSummary(
        name=card.name,
        description=card.description,
        streaming=bool(caps.streaming),
        push=bool(caps.push_notifications),
        extended_card=bool(caps.extended_agent_card),
        skills=tuple(SkillSummary(s.id, s.name, s.description, tuple(s.examples)) for s in card.skills),
        protocol_versions=tuple(sorted({i.protocol_version for i in card.supported_interfaces if i.protocol_version})),
        sdk_card=card,
    )


def card_json(card: CardSummary) -> dict[str, Any]:
    """The whole card as the agent's JSON says it (what the console's agent page shows)."""
    return MessageToDict(card.sdk_card) if card.sdk_card is not None else {}
