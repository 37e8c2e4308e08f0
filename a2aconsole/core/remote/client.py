"""The only module that talks to remote agents: a thin layer over `a2a-sdk` 1.3 and one shared httpx client.

Every call is bounded by the call timeout and every failure becomes a RemoteError whose message a person
can read and which never holds a key. Keys travel as per-call headers that a request hook on the shared
client strips from any request not addressed to the agent's own origin, so no card, redirect or interface
URL can carry a key elsewhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import httpx
from a2a.client import (
    A2AClientError,
    A2AClientTimeoutError,
    AgentCardResolutionError,
    Client,
    ClientCallContext,
    ClientConfig,
    ClientFactory,
)
from a2a.client.card_resolver import parse_agent_card
from a2a.types import (
    AgentCard,
    Artifact,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
)
from a2a.utils.errors import (
    A2AError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from google.protobuf.json_format import MessageToDict, ParseDict

from a2aconsole.core import metrics
from a2aconsole.core.clock import Clock, SystemClock
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.errors import A2AConsoleError
from a2aconsole.core.files import AgentEntry, Attachment, mask_url, origin
from a2aconsole.core.remote.answer_budget import AnswerEncoded, AnswerTooLarge, bound_answers, megabytes
from a2aconsole.core.remote.limits import CALLS_TOTAL, STREAMS_TOTAL
from a2aconsole.core.remote.log_masking import mask_urls
from a2aconsole.core.remote.values import (
    ArtifactUpdate,
    ArtifactValue,
    CardSummary,
    MessageValue,
    OutgoingMessage,
    PartValue,
    SkillSummary,
    StatusUpdate,
    StatusValue,
    TaskEvent,
    TaskSnapshot,
)

KEY_ORIGIN_HEADER = "x-a2aconsole-key-origin"
_SECRET_HEADERS = ("x-api-key", "authorization")
BINDINGS = ["JSONRPC", "HTTP+JSON"]
MAX_CARD_BYTES = 1024 * 1024  # real cards are a few KB; a bigger one is a mistake or an attack
# Room for every stream the watches may hold open, their calls, and the tool's own calls (sends, statuses, cards).
# Every connection may stay alive: httpcore closes an idle one whenever the pool holds more connections in all
# (streams too) than its keep-alive limit, so a lower limit makes every call beside open streams connect anew.
MAX_CONNECTIONS = STREAMS_TOTAL + CALLS_TOTAL + 64


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


# the SDK's objects as the core's values (snapshots.py), made once, at the edge

STATE_NAMES: dict[int, str] = {
    TaskState.TASK_STATE_SUBMITTED: "submitted",
    TaskState.TASK_STATE_WORKING: "working",
    TaskState.TASK_STATE_COMPLETED: "completed",
    TaskState.TASK_STATE_FAILED: "failed",
    TaskState.TASK_STATE_CANCELED: "canceled",
    TaskState.TASK_STATE_REJECTED: "rejected",
    TaskState.TASK_STATE_INPUT_REQUIRED: "input-required",
    TaskState.TASK_STATE_AUTH_REQUIRED: "auth-required",
}


def state_name(state: int) -> str:
    """The spec's lowercase kebab name of a TaskState (`unknown` for an unspecified state)."""
    return STATE_NAMES.get(state, "unknown")


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


def status_value(s: TaskStatus) -> StatusValue:
    stamp = (s.timestamp.seconds, s.timestamp.nanos) if s.HasField("timestamp") else None
    return StatusValue(state_name(s.state), message_value(s.message) if s.HasField("message") else None, stamp)


def _artifact(a: Artifact) -> ArtifactValue:
    return ArtifactValue(a.artifact_id, a.name, a.description, tuple([_part(p) for p in a.parts]))


def task_snapshot(t: Task, *, history: bool = True) -> TaskSnapshot:
    """`history`: keep the ids of the task's history messages (a send's reply needs them to tell a stale reply;
    a GetTask's task does not)."""
    return TaskSnapshot(
        t.id,
        t.context_id,
        status_value(t.status),
        tuple([_artifact(a) for a in t.artifacts]),
        tuple([m.message_id for m in t.history]) if history else (),
    )


def event_value(ev: StreamResponse) -> TaskEvent | None:
    """A stream event as the core reads it; None for a kind it does not (a message)."""
    kind = ev.WhichOneof("payload")
    if kind == "task":
        return task_snapshot(ev.task)
    if kind == "status_update":
        u = ev.status_update
        return StatusUpdate(u.task_id, u.context_id, status_value(u.status))
    if kind == "artifact_update":
        a = ev.artifact_update
        return ArtifactUpdate(a.task_id, a.context_id, _artifact(a.artifact), a.append, a.last_chunk)
    return None


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


class RemoteError(A2AConsoleError):
    """A remote call failed. `kind` is one of: network, timeout, auth, card, not_found, not_cancelable,
    terminal, unsupported, protocol, rpc, too_big (an answer over the byte budget)."""

    def __init__(self, kind: str, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status


async def _guard_key(request: httpx.Request) -> None:
    """Request hook: a key header only ever goes to the origin it was meant for."""
    allowed = request.headers.pop(KEY_ORIGIN_HEADER, None)
    if allowed is not None and origin(str(request.url)) != allowed:
        for h in _SECRET_HEADERS:
            request.headers.pop(h, None)


def new_http_client(max_response_bytes: int | None = None, call_timeout: float = 60.0) -> httpx.AsyncClient:
    """The process's shared client: no redirects followed, keepalive pool, the key guard, every answer read
    within `max_response_bytes` (default: `ClientSettings().response_limit`), and each phase of a call (connect,
    each read, each write) within `call_timeout`, the remote calls' (`Remote`; each call is also bounded whole)."""
    limit = max_response_bytes or ClientSettings().response_limit
    return httpx.AsyncClient(
        follow_redirects=False,
        timeout=httpx.Timeout(call_timeout),
        limits=httpx.Limits(max_connections=MAX_CONNECTIONS, max_keepalive_connections=MAX_CONNECTIONS),
        headers={"A2A-Version": "1.0", "Accept-Encoding": "identity"},
        event_hooks={"request": [_guard_key], "response": [bound_answers(limit)]},
    )


def callable_card(entry: AgentEntry, card: AgentCard) -> AgentCard:
    """The card with only the interfaces the console may call (`AgentEntry.may_call`: on the entry's own origin,
    or one the owner confirmed). Raises RemoteError ("card") naming the other origins when that leaves none the
    console can speak: the card is the agent's word, and could aim the owner's messages anywhere."""
    elsewhere = [i for i in card.supported_interfaces if not entry.may_call(i.url)]
    if not elsewhere:
        return card
    kept = [i for i in card.supported_interfaces if entry.may_call(i.url)]
    if not any(i.protocol_binding in BINDINGS for i in kept):
        where = ", ".join(sorted({origin(i.url) or mask_url(i.url) for i in elsewhere}))
        raise RemoteError(
            "card",
            f'agent "{entry.name}": its card points its calls at {where}, another origin than {entry.origin} where '
            "agents.json has it, so nothing was sent; if you trust that address, confirm it on the agent's page in "
            "the console (or add it to the entry's trustedOrigins)",
        )
    out = AgentCard()
    out.CopyFrom(card)
    del out.supported_interfaces[:]
    out.supported_interfaces.extend(kept)
    return out


def uses_bearer(card: AgentCard) -> bool:
    """True when the card's security schemes declare only http bearer."""
    schemes = list(card.security_schemes.values())
    if not schemes:
        return False
    return all(
        s.WhichOneof("scheme") == "http_auth_security_scheme" and s.http_auth_security_scheme.scheme.lower() == "bearer"
        for s in schemes
    )


def key_headers(entry: AgentEntry, card: AgentCard | None) -> dict[str, str]:
    if not entry.key:
        return {}
    bearer = card is not None and uses_bearer(card)
    name, value = ("Authorization", f"Bearer {entry.key}") if bearer else ("X-API-Key", entry.key)
    return {name: value, KEY_ORIGIN_HEADER: origin(entry.url)}


def translate(exc: BaseException, agent: str, action: str) -> RemoteError:
    """Turn an SDK or network failure into a readable RemoteError naming the agent and what to do."""
    if isinstance(exc, RemoteError):
        return exc
    over = next((e for e in (exc, exc.__cause__) if isinstance(e, AnswerTooLarge | AnswerEncoded)), None)
    if isinstance(over, AnswerTooLarge):
        return RemoteError(
            "too_big",
            f'agent "{agent}" answered more than {megabytes(over.limit)} to {action}: the answer was not read and '
            "nothing of it was kept; ask the agent for less (files by link), or raise A2AClient__MaxResponseBytes",
        )
    if isinstance(over, AnswerEncoded):
        return RemoteError(
            "protocol",
            f'agent "{agent}" answered {action} compressed ({over.encoding}) though asked for no compression; '
            "its answer was not read",
        )
    if isinstance(exc, A2AClientTimeoutError | asyncio.TimeoutError | httpx.TimeoutException):
        return RemoteError("timeout", f'agent "{agent}" did not answer in time ({action}); try again later')
    if isinstance(exc, AgentCardResolutionError):
        status = exc.status_code
        if status in (401, 403):
            return RemoteError(
                "auth",
                f'agent "{agent}" refused to show its card (HTTP {status}); check its key in agents.json',
                status=status,
            )
        if status is not None:
            return RemoteError(
                "card", f'agent "{agent}": card fetch failed with HTTP {status}; check its url', status=status
            )
        if isinstance(exc.__cause__, httpx.RequestError) or "Network communication" in str(exc):
            return RemoteError(
                "network", f'agent "{agent}" is unreachable (its card could not be fetched); is it running?'
            )
        return RemoteError("card", f'agent "{agent}": could not read its card ({_short(exc)}); check its url')
    cause = exc.__cause__
    # a REST error body the SDK read (TaskNotFound, ...) also has the HTTP error as its cause: the error wins
    mapped = isinstance(exc, A2AError) and not isinstance(exc, A2AClientError)
    if isinstance(cause, httpx.HTTPStatusError) and not mapped:
        status = cause.response.status_code
        if status in (401, 403):
            return RemoteError(
                "auth",
                f'agent "{agent}" refused the request (HTTP {status}): the key in agents.json is missing or wrong',
                status=status,
            )
        return RemoteError("network", f'agent "{agent}" answered HTTP {status} to {action}', status=status)
    if isinstance(cause, httpx.RequestError) or isinstance(exc, httpx.RequestError):
        return RemoteError("network", f'agent "{agent}" is unreachable ({type(cause or exc).__name__}); is it running?')
    if isinstance(exc, TaskNotFoundError):
        return RemoteError("not_found", f'agent "{agent}" does not know that task (it may have been deleted)')
    if isinstance(exc, TaskNotCancelableError):
        return RemoteError("not_cancelable", f'agent "{agent}": the task can no longer be canceled')
    if isinstance(exc, UnsupportedOperationError):
        msg = exc.message if hasattr(exc, "message") else str(exc)
        kind = "terminal" if "terminal" in str(msg).lower() else "unsupported"
        return RemoteError(kind, f'agent "{agent}" refused {action}: {_short(msg)}')
    if isinstance(exc, A2AClientError):
        return RemoteError("protocol", f'agent "{agent}": {action} failed: {_short(exc)}')
    if isinstance(exc, A2AError):
        code = type(exc).__name__.removesuffix("Error")
        return RemoteError("rpc", f'agent "{agent}" answered an error to {action}: {code}: {_short(exc)}')
    if isinstance(exc, ValueError) and "transport" in str(exc):
        return RemoteError("protocol", f'agent "{agent}": its card offers no transport we speak (JSON-RPC, REST)')
    return RemoteError("protocol", f'agent "{agent}": {action} failed: {type(exc).__name__}: {_short(exc)}')


_STATE_ENUM = re.compile(r"\bTASK_STATE_[A-Z_]+\b")
_STATE_NUMBER = re.compile(r"\b(state\s*[(:]\s*)(\d{1,2})\b", re.IGNORECASE)


def _state_word(value: str | int) -> str | None:
    """The spec's name of a TaskState given as its enum name or number (`completed`), or None."""
    try:
        name = TaskState.Name(int(value)) if isinstance(value, int) or value.isdigit() else value
    except ValueError:
        return None
    return name.removeprefix("TASK_STATE_").lower().replace("_", "-")


def name_states(text: str) -> str:
    """An SDK's error text with task states named as the spec does: `terminal state (3)` (@a2a-js/sdk) and
    `terminal state: TASK_STATE_COMPLETED` (a2a-sdk) both say `completed`."""
    text = _STATE_ENUM.sub(lambda m: _state_word(m.group(0)) or m.group(0), text)
    return _STATE_NUMBER.sub(lambda m: m.group(1) + (_state_word(m.group(2)) or m.group(2)), text)


def _short(x: object, limit: int = 300) -> str:
    """A one-line excerpt of an error text, URLs masked (SDK errors quote the card URL, key and all), states
    named (SDKs print their enum's numbers)."""
    s = name_states(mask_urls(" ".join(str(x).split())))
    return s if len(s) <= limit else s[: limit - 1] + "…"


@dataclass
class Remote:
    """Creates connections over one shared httpx client."""

    http: httpx.AsyncClient
    call_timeout: float = 60.0
    card_timeout: float = 10.0
    clock: Clock = field(default_factory=SystemClock)

    async def fetch_card(self, entry: AgentEntry) -> CardSummary:
        """The public card, within the card timeout and MAX_CARD_BYTES. Raises RemoteError.

        Read here rather than by the SDK's resolver, which reads any size and follows no bound; the
        JSON is parsed by the SDK's own card parser (legacy 0.3 cards included).
        """
        with metrics.remote_call(entry.name, "card fetch"):
            return card_summary(await self._card(entry))

    async def _card(self, entry: AgentEntry) -> AgentCard:
        """The card; a failure says which URL was tried (masked), since the owner gave the agent's URL and the
        card's is made from it."""
        try:
            async with self.clock.timeout(self.card_timeout):
                return await self._read_card(entry)
        except httpx.RequestError as e:
            if isinstance(e, httpx.TimeoutException):
                err = translate(e, entry.name, "card fetch")
            else:
                err = RemoteError(
                    "network", f'agent "{entry.name}" is unreachable (its card could not be fetched); is it running?'
                )
        except Exception as e:
            err = translate(e, entry.name, "card fetch")
        said = str(err)
        raise RemoteError(
            err.kind,
            f"{said}{'' if said.endswith(('?', '.')) else '.'} Tried {mask_url(entry.card_url)}",
            status=err.status,
        ) from None

    async def _read_card(self, entry: AgentEntry) -> AgentCard:
        name = entry.name
        async with self.http.stream(
            "GET", entry.card_url, headers=key_headers(entry, None), timeout=self.card_timeout
        ) as resp:
            if 300 <= resp.status_code < 400:
                location = resp.headers.get("location")
                where = mask_url(str(resp.url.join(location))) if location else "elsewhere"
                raise RemoteError(
                    "card",
                    f'agent "{name}": its card URL redirects (HTTP {resp.status_code}) to {where}; '
                    "put the final URL in agents.json",
                    status=resp.status_code,
                )
            if resp.status_code >= 400:
                raise AgentCardResolutionError(f"HTTP {resp.status_code}", status_code=resp.status_code)
            body = bytearray()
            async for chunk in resp.aiter_bytes():
                body += chunk
                if len(body) > MAX_CARD_BYTES:
                    raise RemoteError(
                        "card", f'agent "{name}": its card is over {MAX_CARD_BYTES // 1024} KB; check its url'
                    )
        try:
            data = json.loads(bytes(body))
        except (ValueError, RecursionError):
            raise RemoteError("card", f'agent "{name}": its card is not JSON; check its url') from None
        try:
            return parse_agent_card(data)
        except Exception as e:  # ParseError, or a field of the wrong type deep inside
            raise RemoteError("card", f'agent "{name}": its card is not a valid agent card ({_short(e)})') from None

    async def connect(self, entry: AgentEntry, card: CardSummary | None = None) -> Connection:
        if card is None:
            card = await self.fetch_card(entry)
        return Connection(self, entry, card)


@contextlib.contextmanager
def remote_errors(agent: str, action: str) -> Iterator[None]:
    """Any failure of the block raised as a RemoteError naming the agent and the action (`translate`); a cancel
    stays a cancel."""
    try:
        yield
    except Exception as e:
        raise translate(e, agent, action) from None


class Connection:
    """A client for one agent entry and its card; reused across calls until the entry changes."""

    def __init__(self, remote: Remote, entry: AgentEntry, card: CardSummary) -> None:
        self.remote = remote
        self.entry = entry
        self.card = card
        self._clients: dict[bool, Client] = {}
        self._default_ctx: ClientCallContext | None = None

    def __repr__(self) -> str:
        return f"Connection({self.entry!r})"

    @property
    def streaming(self) -> bool:
        return self.card.streaming

    @property
    def push(self) -> bool:
        return self.card.push

    def _client(self, streaming: bool) -> Client:
        c = self._clients.get(streaming)
        if c is None:
            cfg = ClientConfig(httpx_client=self.remote.http, streaming=streaming, supported_protocol_bindings=BINDINGS)
            try:
                c = ClientFactory(cfg).create(callable_card(self.entry, self.card.sdk_card))
            except ValueError as e:
                raise translate(e, self.entry.name, "connect") from None
            self._clients[streaming] = c
        return c

    def _ctx(self) -> ClientCallContext:
        """The calls' context: the key's headers and the per-phase timeout (connect, read, write: a stream's gaps),
        which the http client's own default already is when made for the call timeout (`new_http_client`): the
        SDK then builds no timeout of its own on every call. Built once (the SDK only reads it: only its auth
        interceptor, which we do not use, writes into one), without pydantic's validation of what is ours already;
        each was a share of a send's overhead."""
        if self._default_ctx is None:
            timeout: float | None = self.remote.call_timeout
            if self.remote.http.timeout == httpx.Timeout(timeout):
                timeout = None
            # read-only mappings: a shared context that something tried to write into would fail loudly
            self._default_ctx = ClientCallContext.model_construct(
                state=MappingProxyType({}),
                service_parameters=MappingProxyType(key_headers(self.entry, self.card.sdk_card)),
                timeout=timeout,
            )
        return self._default_ctx

    @contextlib.asynccontextmanager
    async def _call(self, action: str) -> AsyncIterator[None]:
        """`async with self._call(action):` around a remote call: within the call timeout (on the remote's clock),
        timed and counted (`metrics`), a failure a RemoteError. A caller's own shorter bound is its own
        `clock.timeout` around the call: running out, it cancels the call, which is then neither the agent's
        failure nor timed."""
        name = self.entry.name
        with metrics.remote_call(name, action), remote_errors(name, action):
            async with self.remote.clock.timeout(self.remote.call_timeout):
                yield

    async def send(self, message: OutgoingMessage) -> TaskSnapshot | MessageValue:
        """SendMessage with returnImmediately; the task (or a message-only reply). The reply is asked without the
        task's history (`historyLength` 0), which would only echo the messages and their files back (a long
        conversation's could outgrow the answer budget, and the task be followed by nobody), except a follow-up's
        last FOLLOW_UP_HISTORY messages: a stale reply is told by its question coming before the message sent
        (`following.stale_status`), its last two."""
        req = send_request(message, FOLLOW_UP_HISTORY if message.task_id else 0)
        async with self._call("send"):
            last: StreamResponse | None = None
            async for ev in self._client(False).send_message(req, context=self._ctx()):
                last = ev
            if last is None:
                raise RemoteError("protocol", f'agent "{self.entry.name}" answered nothing to send')
            kind = last.WhichOneof("payload")
            if kind == "task":
                return task_snapshot(last.task)
            if kind == "message":
                return message_value(last.message)
            raise RemoteError("protocol", f'agent "{self.entry.name}" answered send with {kind}')

    async def _get_task(self, task_id: str, history_length: int | None) -> Task:
        req = GetTaskRequest(id=task_id)
        if history_length is not None:
            req.history_length = history_length
        async with self._call("status"):
            return await self._client(False).get_task(req, context=self._ctx())

    async def get_task(self, task_id: str) -> TaskSnapshot:
        """GetTask: the task as the core reads it, asked without its history (`historyLength` 0): the core reads
        a GetTask's status and artifacts only, while the history grows with the conversation (a file the user
        sent is in it) and could outgrow the answer budget, ending a watch over a small result."""
        return task_snapshot(await self._get_task(task_id, 0), history=False)

    async def get_task_json(self, task_id: str) -> dict[str, Any]:
        """GetTask, the task as the agent's JSON says it (what the console's task page shows raw)."""
        return MessageToDict(await self._get_task(task_id, None))

    async def cancel(self, task_id: str) -> TaskSnapshot:
        async with self._call("cancel"):
            task = await self._client(False).cancel_task(CancelTaskRequest(id=task_id), context=self._ctx())
        return task_snapshot(task)

    async def subscribe(self, task_id: str) -> AsyncIterator[TaskEvent]:
        """SubscribeToTask: the first event is the task snapshot. Gaps over the call timeout fail. Events the
        core does not read (a message) are skipped."""
        with remote_errors(self.entry.name, "subscribe"):
            async for ev in self._client(True).subscribe(SubscribeToTaskRequest(id=task_id), context=self._ctx()):
                value = event_value(ev)
                if value is not None:
                    yield value

    async def create_push(self, task_id: str, url: str, token: str, config_id: str) -> None:
        cfg = TaskPushNotificationConfig(task_id=task_id, id=config_id, url=url, token=token)
        async with self._call("push setup"):
            await self._client(False).create_task_push_notification_config(cfg, context=self._ctx())

    async def delete_push(self, task_id: str, config_id: str) -> None:
        req = DeleteTaskPushNotificationConfigRequest(task_id=task_id, id=config_id)
        async with self._call("push removal"):
            await self._client(False).delete_task_push_notification_config(req, context=self._ctx())

    async def extended_card(self) -> CardSummary:
        """The extended card when the card offers one (else the public card, with no request)."""
        async with self._call("extended card"):
            card = await self._client(False).get_extended_agent_card(GetExtendedAgentCardRequest(), context=self._ctx())
        return card_summary(card)
