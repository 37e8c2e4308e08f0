"""The only module that talks to remote agents: a thin layer over `a2a-sdk` 1.3 and one shared httpx client.

Every call is bounded by the call timeout and every failure becomes a RemoteError whose message a person
can read and which never holds a key. Keys travel as per-call headers that a request hook on the shared
client strips from any request not addressed to the agent's own origin, so no card, redirect or interface
URL can carry a key elsewhere.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx
from a2a.client import (
    A2ACardResolver,
    A2AClientError,
    A2AClientTimeoutError,
    AgentCardResolutionError,
    Client,
    ClientCallContext,
    ClientConfig,
    ClientFactory,
)
from a2a.types import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskRequest,
    Message,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
)
from a2a.utils.errors import (
    A2AError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)

from .agents import AgentEntry
from .errors import A2AConsoleError

KEY_ORIGIN_HEADER = "x-a2aconsole-key-origin"
_SECRET_HEADERS = ("x-api-key", "authorization")
BINDINGS = ["JSONRPC", "HTTP+JSON"]


class RemoteError(A2AConsoleError):
    """A remote call failed. `kind` is one of: network, timeout, auth, card, not_found, not_cancelable,
    terminal, unsupported, protocol, rpc."""

    def __init__(self, kind: str, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status


def origin_of(url: str) -> str:
    p = urlsplit(url)
    port = p.port or {"http": 80, "https": 443}.get(p.scheme, 0)
    return f"{p.scheme}://{(p.hostname or '').lower()}:{port}"


async def _guard_key(request: httpx.Request) -> None:
    """Request hook: a key header only ever goes to the origin it was meant for."""
    allowed = request.headers.pop(KEY_ORIGIN_HEADER, None)
    if allowed is not None and origin_of(str(request.url)) != allowed:
        for h in _SECRET_HEADERS:
            request.headers.pop(h, None)


def new_http_client() -> httpx.AsyncClient:
    """The process's shared client: no redirects followed, keepalive pool, the key guard."""
    return httpx.AsyncClient(
        follow_redirects=False,
        timeout=httpx.Timeout(60.0, connect=10.0),
        limits=httpx.Limits(max_connections=200, max_keepalive_connections=50),
        headers={"A2A-Version": "1.0"},
        event_hooks={"request": [_guard_key]},
    )


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
    return {name: value, KEY_ORIGIN_HEADER: origin_of(entry.url)}


def translate(exc: BaseException, agent: str, action: str) -> RemoteError:
    """Turn an SDK or network failure into a readable RemoteError naming the agent and what to do."""
    if isinstance(exc, RemoteError):
        return exc
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
    if isinstance(cause, httpx.HTTPStatusError):
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


def _short(x: object, limit: int = 300) -> str:
    s = " ".join(str(x).split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


@dataclass
class Remote:
    """Creates connections over one shared httpx client."""

    http: httpx.AsyncClient
    call_timeout: float = 60.0
    card_timeout: float = 10.0

    async def fetch_card(self, entry: AgentEntry) -> AgentCard:
        """The public card, within the card timeout. Raises RemoteError."""
        headers = key_headers(entry, None)
        url = entry.card_url
        try:
            resolver = A2ACardResolver(self.http, url, agent_card_path="")
            return await asyncio.wait_for(
                resolver.get_agent_card(http_kwargs={"headers": headers, "timeout": self.card_timeout}),
                self.card_timeout,
            )
        except Exception as e:
            raise translate(e, entry.name, "card fetch") from None

    async def connect(self, entry: AgentEntry, card: AgentCard | None = None) -> Connection:
        if card is None:
            card = await self.fetch_card(entry)
        return Connection(self, entry, card)


class Connection:
    """A client for one agent entry and its card; reused across calls until the entry changes."""

    def __init__(self, remote: Remote, entry: AgentEntry, card: AgentCard) -> None:
        self.remote = remote
        self.entry = entry
        self.card = card
        self._clients: dict[bool, Client] = {}

    def __repr__(self) -> str:
        return f"Connection({self.entry!r})"

    @property
    def streaming(self) -> bool:
        return bool(self.card.capabilities.streaming)

    @property
    def push(self) -> bool:
        return bool(self.card.capabilities.push_notifications)

    def _client(self, streaming: bool) -> Client:
        c = self._clients.get(streaming)
        if c is None:
            cfg = ClientConfig(httpx_client=self.remote.http, streaming=streaming, supported_protocol_bindings=BINDINGS)
            try:
                c = ClientFactory(cfg).create(self.card)
            except ValueError as e:
                raise translate(e, self.entry.name, "connect") from None
            self._clients[streaming] = c
        return c

    def _ctx(self, timeout: float | None = None) -> ClientCallContext:
        return ClientCallContext(
            service_parameters=key_headers(self.entry, self.card),
            timeout=timeout if timeout is not None else self.remote.call_timeout,
        )

    async def _bounded(self, coro: Any, action: str) -> Any:
        try:
            return await asyncio.wait_for(coro, self.remote.call_timeout)
        except Exception as e:
            raise translate(e, self.entry.name, action) from None

    async def send(self, message: Message) -> Task | Message:
        """SendMessage with returnImmediately; the Task (or a message-only reply)."""
        req = SendMessageRequest(message=message, configuration=SendMessageConfiguration(return_immediately=True))

        async def run() -> Task | Message:
            last: StreamResponse | None = None
            async for ev in self._client(False).send_message(req, context=self._ctx()):
                last = ev
            if last is None:
                raise RemoteError("protocol", f'agent "{self.entry.name}" answered nothing to send')
            kind = last.WhichOneof("payload")
            if kind == "task":
                return last.task
            if kind == "message":
                return last.message
            raise RemoteError("protocol", f'agent "{self.entry.name}" answered send with {kind}')

        return await self._bounded(run(), "send")

    async def get_task(self, task_id: str, history_length: int | None = None) -> Task:
        req = GetTaskRequest(id=task_id)
        if history_length is not None:
            req.history_length = history_length
        return await self._bounded(self._client(False).get_task(req, context=self._ctx()), "status")

    async def cancel(self, task_id: str) -> Task:
        return await self._bounded(
            self._client(False).cancel_task(CancelTaskRequest(id=task_id), context=self._ctx()), "cancel"
        )

    async def subscribe(self, task_id: str) -> AsyncIterator[StreamResponse]:
        """SubscribeToTask: the first event is the task snapshot. Gaps over the call timeout fail."""
        try:
            async for ev in self._client(True).subscribe(SubscribeToTaskRequest(id=task_id), context=self._ctx()):
                yield ev
        except Exception as e:
            raise translate(e, self.entry.name, "subscribe") from None

    async def create_push(self, task_id: str, url: str, token: str, config_id: str) -> TaskPushNotificationConfig:
        cfg = TaskPushNotificationConfig(task_id=task_id, id=config_id, url=url, token=token)
        return await self._bounded(
            self._client(False).create_task_push_notification_config(cfg, context=self._ctx()), "push setup"
        )

    async def delete_push(self, task_id: str, config_id: str) -> None:
        req = DeleteTaskPushNotificationConfigRequest(task_id=task_id, id=config_id)
        await self._bounded(
            self._client(False).delete_task_push_notification_config(req, context=self._ctx()), "push removal"
        )

    async def extended_card(self) -> AgentCard:
        """The extended card when the card offers one (else the public card, with no request)."""
        return await self._bounded(
            self._client(False).get_extended_agent_card(GetExtendedAgentCardRequest(), context=self._ctx()),
            "extended card",
        )
