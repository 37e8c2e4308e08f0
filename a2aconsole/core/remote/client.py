"""The calls to remote agents: `Remote` (cards, connections) and `Connection` (a thin layer over `a2a-sdk` 1.3's
client, over the process's one httpx client, `http.py`).

Every call is bounded by the call timeout, timed, and every failure becomes a RemoteError (`errors.py`) whose
message a person can read and which never holds a key. The SDK's types become the core's values in
`convert.py`: the remote wing is the only part of the console that sees them. An answer the SDK's strict parse
refuses is read again leniently where its meaning is clear (`lenient.py`: a timestamp without a zone is UTC).
Keys travel as per-call headers that a request hook on the shared client strips from any request not addressed
to the agent's own origin, so no card, redirect or interface URL can carry a key elsewhere.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import httpx
from a2a.client import (
    A2AClientError,
    AgentCardResolutionError,
    Client,
    ClientCallContext,
    ClientConfig,
)
from a2a.client.card_resolver import parse_agent_card
from a2a.types import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
)

from a2aconsole.core import metrics
from a2aconsole.core.clock import Clock, SystemClock
from a2aconsole.core.files import AgentEntry, mask_url, origin
from a2aconsole.core.remote.convert import (
    FOLLOW_UP_HISTORY,
    MAX_PAGE_TOKEN,
    STATE_VALUES,
    card_summary,
    event_value,
    message_value,
    push_config_value,
    send_request,
    task_json,
    task_page,
    task_snapshot,
)
from a2aconsole.core.remote.errors import LIST_TASKS, RemoteError, remote_errors, short, translate
from a2aconsole.core.remote.factory import lenient_factory
from a2aconsole.core.remote.http import KEY_ORIGIN_HEADER
from a2aconsole.core.remote.values import (
    CardSummary,
    MessageValue,
    OutgoingMessage,
    PushConfigValue,
    TaskEvent,
    TaskPage,
    TaskSnapshot,
)

BINDINGS = ["JSONRPC", "HTTP+JSON"]  # the protocol bindings the console speaks (the SDK picks in card order)
MAX_CARD_BYTES = 1024 * 1024  # real cards are a few KB; a bigger one is a mistake or an attack
MAX_PAGE_SIZE = 100  # tasks asked of ListTasks at once (the spec's most; and read of an answer that holds more)
MAX_PUSH_CONFIGS = 50  # push configs read of one task's list: the console makes one per watch
MAX_FILTER = 200  # characters of a context id passed on to ListTasks


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
        """The card, at `agent-card.json`, or at the legacy `agent.json` when that answers 404 (both within the
        card timeout); a failure says which URLs were tried (masked), since the owner gave the agent's URL and the
        card's is made from it."""
        tried = [entry.card_url]
        try:
            async with self.clock.timeout(self.card_timeout):
                try:
                    return await self._read_card(entry, entry.card_url)
                except AgentCardResolutionError as e:
                    legacy = entry.legacy_card_url
                    if e.status_code != 404 or legacy is None:
                        raise
                    tried.append(legacy)
                    return await self._read_card(entry, legacy)
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
            f"{said}{'' if said.endswith(('?', '.')) else '.'} Tried {' and '.join(mask_url(u) for u in tried)}",
            status=err.status,
        ) from None

    async def _read_card(self, entry: AgentEntry, url: str) -> AgentCard:
        name = entry.name
        async with self.http.stream("GET", url, headers=key_headers(entry, None), timeout=self.card_timeout) as resp:
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
            raise RemoteError("card", f'agent "{name}": its card is not a valid agent card ({short(e)})') from None

    async def connect(self, entry: AgentEntry, card: CardSummary | None = None) -> Connection:
        if card is None:
            card = await self.fetch_card(entry)
        return Connection(self, entry, card)


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
                c = lenient_factory(cfg).create(callable_card(self.entry, self.card.sdk_card))
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

    async def task_holding(self, task_id: str, message_id: str) -> TaskSnapshot | None:
        """GetTask: the task when its last FOLLOW_UP_HISTORY messages hold the message `message_id` (the agent has
        it), else None; read as a follow-up's reply is (`send`), history and all."""
        task = task_snapshot(await self._get_task(task_id, FOLLOW_UP_HISTORY))
        return task if message_id in task.history_ids else None

    async def get_task_json(self, task_id: str) -> dict[str, Any]:
        """GetTask, the task as the agent's JSON says it (what the console's task page shows raw)."""
        return task_json(await self._get_task(task_id, None))

    async def cancel(self, task_id: str) -> TaskSnapshot:
        async with self._call("cancel"):
            task = await self._client(False).cancel_task(CancelTaskRequest(id=task_id), context=self._ctx())
        return task_snapshot(task)

    async def subscribe(self, task_id: str) -> AsyncIterator[TaskEvent]:
        """SubscribeToTask: the first event is the task snapshot (not on a2a-sdk 0.3: its events only, which the
        follower reads against the task it has). Gaps over the call timeout fail. Events the core does not read (a
        message) are skipped."""
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
        """DeleteTaskPushNotificationConfig. An agent may answer it over REST with a success and no body (HTTP 204,
        as @a2a-js/sdk does), which a2a-sdk's REST client fails to read as JSON: that answer is the success."""
        req = DeleteTaskPushNotificationConfigRequest(task_id=task_id, id=config_id)
        async with self._call("push removal"):
            try:
                await self._client(False).delete_task_push_notification_config(req, context=self._ctx())
            except A2AClientError as e:
                if not (isinstance(e.__cause__, json.JSONDecodeError) and not e.__cause__.doc.strip()):
                    raise

    async def list_tasks(
        self, context_id: str | None = None, state: str | None = None, page_size: int = 20, page_token: str = ""
    ) -> TaskPage:
        """ListTasks: one page of the tasks the agent holds (for this key), newest first as the agent orders them,
        filtered by context and state (the spec's name: "working", ...), each its status only (no history, no
        artifacts: a page is small whatever its tasks hold). At most MAX_PAGE_SIZE. An agent without ListTasks
        (0.3, or answering method-not-found or unsupported) raises RemoteError "not_listing", saying so."""
        req = ListTasksRequest(page_size=max(1, min(page_size, MAX_PAGE_SIZE)), history_length=0)
        req.include_artifacts = False
        if context_id:
            req.context_id = context_id[:MAX_FILTER]
        if state:
            if state not in STATE_VALUES:
                raise RemoteError("protocol", f"unknown task state {state!r}: use one of {', '.join(STATE_VALUES)}")
            req.status = STATE_VALUES[state]  # type: ignore[assignment]
        if page_token:
            req.page_token = page_token[:MAX_PAGE_TOKEN]
        async with self._call(LIST_TASKS):
            answer = await self._client(False).list_tasks(req, context=self._ctx())
        return task_page(answer, req.page_size)

    async def list_push_configs(self, task_id: str) -> list[PushConfigValue]:
        """ListTaskPushNotificationConfigs: the push configs the agent holds for the task (at most
        MAX_PUSH_CONFIGS), URLs masked and tokens left out (`PushConfigValue`). An agent whose card offers no push
        holds none: RemoteError "unsupported", without a call."""
        if not self.push:
            raise RemoteError(
                "unsupported",
                f'agent "{self.entry.name}" takes no push notifications (its card says so): it holds no push configs',
            )
        req = ListTaskPushNotificationConfigsRequest(task_id=task_id, page_size=MAX_PUSH_CONFIGS)
        async with self._call("push config list"):
            answer = await self._client(False).list_task_push_notification_configs(req, context=self._ctx())
        return [push_config_value(c) for c in answer.configs[:MAX_PUSH_CONFIGS]]

    async def extended_card(self) -> CardSummary:
        """The extended card when the card offers one (else the public card, with no request)."""
        async with self._call("extended card"):
            card = await self._client(False).get_extended_agent_card(GetExtendedAgentCardRequest(), context=self._ctx())
        return card_summary(card)
