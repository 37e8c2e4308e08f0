"""Answers read leniently where the protocol's meaning is clear (issue 26): the SDK's own strict parse first, and
only when it refuses the answer, the same JSON mended and parsed again.

Agents built on other implementations than the SDKs write what a strict 1.0 parse refuses, and the SDK then
refuses the whole answer: `fasta2a`'s stock storage writes every status timestamp without a time zone
(`2026-12-04T20:59:14.363182`), so no send to such an agent ever worked. Mended here: a timestamp without a zone is
UTC (one that is no time at all is left out: the status is kept without it), a 0.3 task state or role (`working`,
`input-required`, `agent`) is its 1.0 name. An unknown enum value is not a failure (the SDK's parse ignores it);
an unknown task state is kept as text (`keep_states`: "paused" is shown, not "unknown"). The owner sees no
difference: the answer is the one the agent meant.

`LenientJsonRpcTransport` and `LenientRestTransport` are the SDK's transports with that second chance, for calls
and stream events alike; `client.Connection` makes them (through the SDK's `ClientFactory`) for every 1.0
interface.
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import AsyncGenerator, Awaitable
from datetime import UTC, datetime
from typing import Any, TypeVar

from a2a.client import ClientCallContext, ClientConfig, ClientFactory
from a2a.client.errors import A2AClientError
from a2a.client.transports import ClientTransport, JsonRpcTransport, RestTransport
from a2a.client.transports.http_helpers import get_http_args, send_http_stream_request
from a2a.compat.v0_3.jsonrpc_transport import CompatJsonRpcTransport
from a2a.compat.v0_3.rest_transport import CompatRestTransport
from a2a.compat.v0_3.versions import is_legacy_version
from a2a.types import (
    AgentCard,
    CancelTaskRequest,
    GetTaskRequest,
    SendMessageRequest,
    SendMessageResponse,
    StreamResponse,
    Task,
    TaskState,
)
from a2a.utils.proto_utils import parse_lenient
from google.protobuf.json_format import ParseError
from google.protobuf.message import Message as Proto

from a2aconsole.core.remote.convert import KEPT_STATE

P = TypeVar("P", bound=Proto)

# the members whose values are the application's, not the protocol's: copied as they are
_APPLICATION_KEYS = frozenset({"data", "metadata"})
_STATES = ("submitted", "working", "input-required", "completed", "canceled", "failed", "rejected", "auth-required")
# 0.3's names (and "cancelled", as some write it) for 1.0's
_STATE_NAMES = {s: "TASK_STATE_" + s.upper().replace("-", "_") for s in _STATES} | {
    "cancelled": "TASK_STATE_CANCELED",
    "unknown": "TASK_STATE_UNSPECIFIED",
}
_ROLE_NAMES = {"user": "ROLE_USER", "agent": "ROLE_AGENT"}
_LEFT_OUT = object()

# the raw answers of the calls in flight in this task: kept by `_send_request` for a second parse
_ANSWERS: contextvars.ContextVar[list[dict[str, Any]]] = contextvars.ContextVar("a2aconsole_raw_answers")


def utc_timestamp(text: str) -> str | None:
    """A timestamp as RFC 3339 in UTC (`...Z`): one without a zone is UTC; None when it is no ISO 8601 time."""
    try:
        when = datetime.fromisoformat(text.strip().replace("z", "Z"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _mended(value: Any, key: str = "") -> Any:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            item = v if k in _APPLICATION_KEYS else _mended(v, k)
            if item is not _LEFT_OUT:
                out[k] = item
        return out
    if isinstance(value, list):
        return [_mended(v, key) for v in value]
    if not isinstance(value, str):
        return value
    if key == "timestamp":
        stamp = utc_timestamp(value)
        return _LEFT_OUT if stamp is None else stamp
    if key == "state":
        return _STATE_NAMES.get(value.lower(), value)
    if key == "role":
        return _ROLE_NAMES.get(value.lower(), value)
    return value


def mended(answer: Any) -> Any:
    """The answer's JSON with what a strict parse refuses mended where the meaning is clear (the module's doc)."""
    return _mended(answer)


def parse_answer(answer: Any, message: P) -> P:
    """The SDK's parse of an answer; when it refuses, the answer mended (`mended`) and parsed again. Raises the
    strict parse's ParseError when the mended answer is refused too. A task state no enum names is kept as text
    (`keep_states`)."""
    try:
        parsed = parse_lenient(answer, message)
    except ParseError as strict:
        message.Clear()
        try:
            parsed = parse_lenient(mended(answer), message)
        except ParseError:
            raise strict from None
    keep_states(answer, parsed)
    return parsed


def _member(value: Any, *names: str) -> Any:
    """A member of a JSON object by any of its names (ProtoJSON reads camelCase and the proto's own)."""
    if isinstance(value, dict):
        for name in names:
            if name in value:
                return value[name]
    return None


def state_word(said: str) -> str:
    """A state as the console writes states: `TASK_STATE_ON_HOLD`, `On hold` -> `on-hold` (64 characters at most)."""
    word = said.strip().removeprefix("TASK_STATE_").lower()
    return "-".join(word.replace("_", " ").replace("-", " ").split())[:64] or "unknown"


def keep_states(answer: Any, parsed: Proto) -> None:
    """A task state the agent said that no 1.0 enum names (the parse left it unspecified) kept as text, in the
    metadata of the task or status update holding it (`convert.KEPT_STATE`): shown as the task's state, where
    it would read `unknown`."""
    if isinstance(parsed, Task):
        holders = [(answer, parsed)]
    else:
        kind = parsed.WhichOneof("payload") if parsed.DESCRIPTOR.oneofs_by_name.get("payload") else None
        if kind == "task":
            holders = [(_member(answer, "task"), parsed.task)]
        elif kind == "status_update":
            holders = [(_member(answer, "statusUpdate", "status_update"), parsed.status_update)]
        else:
            return
    for raw, holder in holders:
        if holder.status.state != TaskState.TASK_STATE_UNSPECIFIED:
            continue
        said = _member(_member(raw, "status"), "state")
        if isinstance(said, str) and said.strip() and said != "TASK_STATE_UNSPECIFIED":
            holder.metadata[KEPT_STATE] = state_word(said)


class _SecondChance:
    """What both lenient transports add to the SDK's: the raw answer of a call kept (`_send_request`), and parsed
    leniently (`parse_answer`) when the SDK's strict parse refuses it. The call is not made again: a send is sent
    once. `_result`: where the result is in a raw answer."""

    async def _send_request(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        answer: dict[str, Any] = await super()._send_request(*args, **kwargs)  # type: ignore[misc]
        kept = _ANSWERS.get(None)
        if kept is not None:
            kept.append(answer)
        return answer

    def _result(self, answer: dict[str, Any]) -> Any:
        raise NotImplementedError

    async def _second_chance(self, call: Awaitable[P], message: P) -> P:
        kept: list[dict[str, Any]] = []
        token = _ANSWERS.set(kept)
        try:
            parsed = await call
        except ParseError:
            if not kept:
                raise
            return parse_answer(self._result(kept[-1]), message)
        finally:
            _ANSWERS.reset(token)
        if kept:  # read by the SDK: a state it left unspecified may still be the agent's word
            keep_states(self._result(kept[-1]), parsed)
        return parsed

    async def send_message(
        self, request: SendMessageRequest, *, context: ClientCallContext | None = None
    ) -> SendMessageResponse:
        call = super().send_message(request, context=context)  # type: ignore[misc]
        return await self._second_chance(call, SendMessageResponse())

    async def get_task(self, request: GetTaskRequest, *, context: ClientCallContext | None = None) -> Task:
        return await self._second_chance(super().get_task(request, context=context), Task())  # type: ignore[misc]

    async def cancel_task(self, request: CancelTaskRequest, *, context: ClientCallContext | None = None) -> Task:
        return await self._second_chance(super().cancel_task(request, context=context), Task())  # type: ignore[misc]


class LenientJsonRpcTransport(_SecondChance, JsonRpcTransport):
    """The SDK's JSON-RPC transport, whose answers (sends, tasks, cancels, stream events) are parsed leniently
    when its strict parse refuses them (`parse_answer`)."""

    def _result(self, answer: dict[str, Any]) -> Any:
        if "result" not in answer:
            raise ParseError("a JSON-RPC answer without a result")
        return answer["result"]

    async def _send_stream_request(
        self, rpc_request_payload: dict[str, Any], context: ClientCallContext | None = None
    ) -> AsyncGenerator[StreamResponse]:
        """The SDK's stream reading, each event parsed with `parse_answer` (a stream cannot be read again)."""
        async for sse_data in send_http_stream_request(
            self.httpx_client,
            "POST",
            self.url,
            None,
            self._handle_sse_error,
            json=rpc_request_payload,
            **get_http_args(context),
        ):
            answer = self._check_jsonrpc_response(_json_event(sse_data, "Invalid JSON-RPC response in SSE stream"))
            yield parse_answer(answer["result"], StreamResponse())


class LenientRestTransport(_SecondChance, RestTransport):
    """The SDK's HTTP+JSON transport, with the same second chance (`LenientJsonRpcTransport`)."""

    def _result(self, answer: dict[str, Any]) -> Any:
        return answer

    async def _send_stream_request(
        self,
        method: str,
        target: str,
        tenant: str,
        context: ClientCallContext | None = None,
        *,
        json: dict[str, Any] | None = None,
    ) -> AsyncGenerator[StreamResponse]:
        """The SDK's stream reading, each event parsed with `parse_answer`."""
        async for sse_data in send_http_stream_request(
            self.httpx_client,
            method,
            f"{self.url}{self._get_path(target, tenant)}",
            self._handle_http_error,
            self._handle_sse_error,
            json=json,
            **get_http_args(context),
        ):
            yield parse_answer(_json_event(sse_data, "Invalid JSON in SSE stream"), StreamResponse())


def _json_event(sse_data: str, what: str) -> Any:
    try:
        return json.loads(sse_data)
    except json.JSONDecodeError as e:
        raise A2AClientError(f"{what}: {e}") from e


def lenient_factory(config: ClientConfig) -> ClientFactory:
    """The SDK's client factory, its JSON-RPC and HTTP+JSON transports for a 1.0 interface the lenient ones (a 0.3
    interface keeps the SDK's compat transport, which reads 0.3's own JSON). The interface is picked as the SDK
    picks it."""
    factory = ClientFactory(config)
    http = config.httpx_client
    assert http is not None, "the console's calls share one http client"

    def legacy(card: AgentCard, url: str, binding: str) -> bool:
        interface = ClientFactory._find_best_interface(
            list(card.supported_interfaces), protocol_bindings=[binding], url=url
        )
        return interface is not None and is_legacy_version(interface.protocol_version)

    def jsonrpc(card: AgentCard, url: str, config: ClientConfig) -> ClientTransport:
        if legacy(card, url, "JSONRPC"):
            return CompatJsonRpcTransport(http, card, url, is_shared_httpx=True)
        return LenientJsonRpcTransport(http, card, url, is_shared_httpx=True)

    def rest(card: AgentCard, url: str, config: ClientConfig) -> ClientTransport:
        if legacy(card, url, "HTTP+JSON"):
            return CompatRestTransport(http, card, url, is_shared_httpx=True)
        return LenientRestTransport(http, card, url, is_shared_httpx=True)

    factory.register("JSONRPC", jsonrpc)
    factory.register("HTTP+JSON", rest)
    return factory
