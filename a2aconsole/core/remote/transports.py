"""The SDK's 1.0 transports with a second chance for every answer (`lenient.py`): the SDK's own reading first,
and only when it refuses the answer, the same answer mended and read again. The call is not made again: a send is
sent once, its raw answer kept (`keep_answer`) for the second reading.

`LenientJsonRpcTransport` and `LenientRestTransport` read the mended answer with `parse_answer`. The 0.3 ones are
in `transports_03.py`; `factory.py` makes them all.
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import AsyncGenerator, Awaitable
from typing import Any, TypeVar

from a2a.client import ClientCallContext
from a2a.client.errors import A2AClientError
from a2a.client.transports import JsonRpcTransport, RestTransport
from a2a.client.transports.http_helpers import get_http_args, send_http_stream_request
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    SendMessageRequest,
    SendMessageResponse,
    StreamResponse,
    Task,
)
from google.protobuf.json_format import ParseError
from google.protobuf.message import Message as Proto

from a2aconsole.core.remote.lenient import keep_states, parse_answer

P = TypeVar("P", bound=Proto)

# the raw answers of the calls in flight in this task: kept by `_send_request` for a second reading
KEPT_ANSWERS: contextvars.ContextVar[list[dict[str, Any]]] = contextvars.ContextVar("a2aconsole_raw_answers")


def keep_answer(answer: dict[str, Any]) -> None:
    kept = KEPT_ANSWERS.get(None)
    if kept is not None:
        kept.append(answer)


def json_event(sse_data: str, what: str) -> Any:
    try:
        return json.loads(sse_data)
    except json.JSONDecodeError as e:
        raise A2AClientError(f"{what}: {e}") from e


class _SecondChance:
    """What both lenient transports add to the SDK's: the raw answer of a call kept (`_send_request`), and parsed
    leniently (`parse_answer`) when the SDK's strict parse refuses it. The call is not made again: a send is sent
    once. `_result`: where the result is in a raw answer."""

    async def _send_request(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        answer: dict[str, Any] = await super()._send_request(*args, **kwargs)  # type: ignore[misc]
        keep_answer(answer)
        return answer

    def _result(self, answer: dict[str, Any]) -> Any:
        raise NotImplementedError

    async def _second_chance(self, call: Awaitable[P], message: P) -> P:
        kept: list[dict[str, Any]] = []
        token = KEPT_ANSWERS.set(kept)
        try:
            parsed = await call
        except ParseError:
            if not kept:
                raise
            return parse_answer(self._result(kept[-1]), message)
        finally:
            KEPT_ANSWERS.reset(token)
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
            answer = self._check_jsonrpc_response(json_event(sse_data, "Invalid JSON-RPC response in SSE stream"))
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
            yield parse_answer(json_event(sse_data, "Invalid JSON in SSE stream"), StreamResponse())
