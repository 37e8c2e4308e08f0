"""The SDK's 0.3 transports with the same second chance as the 1.0 ones (`transports.py`), and what 0.3 agents
need besides. `LenientCompatJsonRpcTransport` (older fasta2a and pydantic-ai agents among them) has the SDK's own
0.3 reading read a refused answer again, its timestamps mended. `LenientCompatRestTransport` (0.3 over HTTP+JSON)
reads the files and the errors of `@a2a-js/sdk` 0.3 agents, which the SDK's 0.3 reading misreads, and learns its
subscription's verb without a race. Both ask a 0.3 agent for the last message where the console means none
(`last_message_for_none`).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any, NoReturn, TypeVar

import httpx
from a2a.client import ClientCallContext
from a2a.client.errors import A2AClientError
from a2a.client.transports.http_helpers import get_http_args, handle_http_exceptions, send_http_stream_request
from a2a.compat.v0_3 import a2a_v0_3_pb2, conversions, proto_utils
from a2a.compat.v0_3 import types as types_v03
from a2a.compat.v0_3.extension_headers import add_legacy_extension_header
from a2a.compat.v0_3.jsonrpc_transport import CompatJsonRpcTransport
from a2a.compat.v0_3.rest_transport import CompatRestTransport
from a2a.types import (
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskRequest,
    SendMessageRequest,
    SendMessageResponse,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
)
from a2a.utils.constants import PROTOCOL_VERSION_0_3, VERSION_HEADER
from a2a.utils.errors import JSON_RPC_ERROR_CODE_MAP
from google.protobuf.json_format import ParseDict
from google.protobuf.message import Message as Proto

from a2aconsole.core.remote.lenient import mended_times, raw_file_bytes
from a2aconsole.core.remote.transports import KEPT_ANSWERS, json_event, keep_answer

P = TypeVar("P", bound=Proto)

# an answer `_send_request` returns instead of asking the agent: the mended answer, read again
_REPLAY: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar("a2aconsole_replay", default=None)


def last_message_for_none(request: GetTaskRequest) -> GetTaskRequest:
    """A 0.3 GetTask asking no history (`historyLength` 0) asks for the last message instead: 0.3 agents read 0 as
    the whole history (@a2a-js/sdk 0.3 slices by `-0`, a2a-sdk 0.3 and fasta2a cut only for more than 0), and a
    conversation's files in it could outgrow the answer budget and end a watch over a small result. 1.0 has "none"."""
    if not request.HasField("history_length") or request.history_length != 0:
        return request
    asked = GetTaskRequest()
    asked.CopyFrom(request)
    asked.history_length = 1
    return asked


def _v03_http_args(context: ClientCallContext | None) -> dict[str, Any]:
    """A 0.3 call's httpx arguments, as the SDK's 0.3 transports make them (the version and extension headers)."""
    http_kwargs = get_http_args(context)
    http_kwargs.setdefault("headers", {})
    http_kwargs["headers"][VERSION_HEADER.lower()] = PROTOCOL_VERSION_0_3
    add_legacy_extension_header(http_kwargs["headers"])
    return http_kwargs


class LenientCompatJsonRpcTransport(CompatJsonRpcTransport):
    """The SDK's 0.3 JSON-RPC transport, with the second chance: when its reading refuses an answer (a timestamp
    without a zone, which 0.3 allows and the conversion to 1.0 refuses), the answer with its timestamps mended
    (`mended_times`) is read again by the same SDK code, given it by `_send_request` instead of the agent."""

    async def _send_request(
        self, json_data: dict[str, Any], context: ClientCallContext | None = None
    ) -> dict[str, Any]:
        replay = _REPLAY.get()
        if replay is not None:
            return replay
        answer = await super()._send_request(json_data, context)
        keep_answer(answer)
        return answer

    async def _again(self, call: Callable[[], Awaitable[P]]) -> P:
        kept: list[dict[str, Any]] = []
        token = KEPT_ANSWERS.set(kept)
        try:
            return await call()
        except ValueError:  # the conversion's, or pydantic's (a ValidationError is one)
            if not kept:
                raise
            replay = _REPLAY.set(mended_times(kept[-1]))
            try:
                return await call()
            finally:
                _REPLAY.reset(replay)
        finally:
            KEPT_ANSWERS.reset(token)

    async def send_message(
        self, request: SendMessageRequest, *, context: ClientCallContext | None = None
    ) -> SendMessageResponse:
        return await self._again(functools.partial(super().send_message, request, context=context))

    async def get_task(self, request: GetTaskRequest, *, context: ClientCallContext | None = None) -> Task:
        return await self._again(functools.partial(super().get_task, last_message_for_none(request), context=context))

    async def cancel_task(self, request: CancelTaskRequest, *, context: ClientCallContext | None = None) -> Task:
        return await self._again(functools.partial(super().cancel_task, request, context=context))

    async def _send_stream_request(
        self, json_data: dict[str, Any], context: ClientCallContext | None = None
    ) -> AsyncGenerator[StreamResponse]:
        """The SDK's 0.3 stream reading, each event read again with its timestamps mended when refused. An error
        the agent sends as an SSE `error` event (@a2a-js/sdk 0.3 opens the stream before it knows the task) is
        read as the JSON-RPC error in it, as the SDK's 1.0 transport reads one: a task the agent no longer knows
        ends its watch rather than read as a failed stream, retried."""
        async for sse_data in send_http_stream_request(
            self.httpx_client,
            "POST",
            self.url,
            self._handle_http_error,
            self._sse_error,
            json=json_data,
            **_v03_http_args(context),
        ):
            data = json_event(sse_data, "Invalid JSON-RPC response in SSE stream")
            if "error" in data:
                raise self._create_jsonrpc_error(data["error"])
            result = data.get("result", {})
            if not isinstance(result, dict):
                continue
            try:
                event = _compat_event(result)
            except ValueError:
                event = _compat_event(mended_times(result))
            if event is not None:
                yield event

    def _sse_error(self, sse_data: str) -> NoReturn:
        data = json_event(sse_data, "Invalid JSON-RPC error event in SSE stream")
        if isinstance(data, dict) and isinstance(data.get("error"), dict):
            raise self._create_jsonrpc_error(data["error"])
        raise A2AClientError(f"SSE stream error: {sse_data[:300]}")


_COMPAT_EVENTS: dict[str, Any] = {
    "task": types_v03.Task,
    "message": types_v03.Message,
    "status-update": types_v03.TaskStatusUpdateEvent,
    "artifact-update": types_v03.TaskArtifactUpdateEvent,
}


def _compat_event(result: dict[str, Any]) -> StreamResponse | None:
    """A 0.3 stream event as the SDK reads it (its kind, or guessed as the SDK guesses for servers that omit it)."""
    kind = result.get("kind")
    if not kind:
        if "taskId" in result and "final" in result:
            kind = "status-update"
        elif "messageId" in result:
            kind = "message"
        elif "id" in result:
            kind = "task"
    model = _COMPAT_EVENTS.get(kind) if isinstance(kind, str) else None
    if model is None:
        return None
    return conversions.to_core_stream_response(
        types_v03.SendStreamingMessageSuccessResponse(result=model.model_validate(result))
    )


def _not_allowed(e: A2AClientError) -> bool:
    cause = e.__cause__
    return isinstance(cause, httpx.HTTPStatusError) and cause.response.status_code == httpx.codes.METHOD_NOT_ALLOWED


_ERRORS_BY_CODE = {code: error for error, code in JSON_RPC_ERROR_CODE_MAP.items()}


class LenientCompatRestTransport(CompatRestTransport):
    """The SDK's 0.3 HTTP+JSON transport, reading what `@a2a-js/sdk` 0.3 agents write as they mean it: the bytes
    of a file (`raw_file_bytes`), and an error as `{"code": -32001, "message": ...}` (the JSON-RPC code), which the
    SDK's reading, looking for a `type`, took for a bare HTTP status: a task the agent no longer knows (404) read as
    a method it lacks, and a finished task's refused cancel (409) as an agent that could not be reached. It also
    deletes a push config (the SDK's 0.3 transport has no delete), so an ended watch's config is not left behind.

    A 0.3 agent may serve `tasks/{id}:subscribe` by GET only (a2a-sdk 0.3 does; POST answers 405): the SDK's
    transport then falls back to GET and remembers it, but two first subscriptions at once (two watches of one
    agent) find each other's guess, and the second fails and sets it back to POST, so every later one failed with
    405 too. Here a 405 is answered by trying the other verb once, which is then remembered (`subscribe`)."""

    async def delete_task_push_notification_config(
        self, request: DeleteTaskPushNotificationConfigRequest, *, context: ClientCallContext | None = None
    ) -> None:
        http_kwargs = _v03_http_args(context)
        path = f"/v1/tasks/{request.task_id}/pushNotificationConfigs/{request.id}"
        with handle_http_exceptions(self._handle_http_error):
            response = await self.httpx_client.send(
                self.httpx_client.build_request("DELETE", self.url + path, **http_kwargs)
            )
            response.raise_for_status()

    async def _send_request(self, request: httpx.Request) -> dict[str, Any]:
        return raw_file_bytes(await super()._send_request(request))  # type: ignore[no-any-return]

    async def get_task(self, request: GetTaskRequest, *, context: ClientCallContext | None = None) -> Task:
        return await super().get_task(last_message_for_none(request), context=context)

    def _handle_http_error(self, e: httpx.HTTPStatusError) -> NoReturn:
        with contextlib.suppress(httpx.StreamClosed, httpx.ResponseNotRead, ValueError):
            e.response.read()
            said = e.response.json()
            code = said.get("code") if isinstance(said, dict) else None
            error = _ERRORS_BY_CODE.get(code) if isinstance(code, int) and not isinstance(code, bool) else None
            if error is not None:
                message = said.get("message")
                raise error(message if isinstance(message, str) else f"HTTP {e.response.status_code}") from e
        super()._handle_http_error(e)

    async def _send_stream_request(
        self,
        method: str,
        path: str,
        context: ClientCallContext | None = None,
        *,
        json: dict[str, Any] | None = None,
    ) -> AsyncGenerator[StreamResponse]:
        """The SDK's 0.3 stream reading, each event's files read as the agent wrote them."""
        http_kwargs = _v03_http_args(context)
        async for sse_data in send_http_stream_request(
            self.httpx_client, method, f"{self.url}{path}", self._handle_http_error, json=json, **http_kwargs
        ):
            event = ParseDict(
                raw_file_bytes(json_event(sse_data, "Invalid JSON in SSE stream")),
                a2a_v0_3_pb2.StreamResponse(),
                ignore_unknown_fields=True,
            )
            yield conversions.to_core_stream_response(
                types_v03.SendStreamingMessageSuccessResponse(result=proto_utils.FromProto.stream_response(event))
            )

    async def subscribe(
        self, request: SubscribeToTaskRequest, *, context: ClientCallContext | None = None
    ) -> AsyncGenerator[StreamResponse]:
        path = f"/v1/tasks/{request.id}:subscribe"
        verb = self._subscribe_method_override or "POST"
        try:
            async for event in self._send_stream_request(verb, path, context=context):
                yield event
            return
        except A2AClientError as e:
            if not _not_allowed(e):
                raise
        other = "GET" if verb == "POST" else "POST"
        async for event in self._send_stream_request(other, path, context=context):
            self._subscribe_method_override = other
            yield event
