"""The JSON tool API: an agent host's model calls the `a2a` tool of one chat target over HTTP.

`POST /api/v1/targets/<id>/tool` with `Authorization: Bearer <token>` runs one tool action for that
target and answers the tool's result JSON. Any token problem (missing, wrong, revoked, another
target's) is the same bare 401, so a caller learns nothing about which tokens or targets exist.
A call also shows the target is reachable again, so results kept for it are flushed. Every answer is
JSON, errors included (`errors.py`); every view is CSRF-exempt, as a host has a token, not a session.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import RequestDataTooBig
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from a2aconsole.api import idempotency, tokens
from a2aconsole.api.calls import BadCall, ToolCall, parse_call
from a2aconsole.api.errors import error, methods
from a2aconsole.api.openapi import openapi_document, tool_definition
from a2aconsole.core.chat import ChatTarget as Chat
from a2aconsole.core.watches import FLUSH_DELAY
from a2aconsole.web.broadcast import deferred_events
from a2aconsole.web.chats import value_of
from a2aconsole.web.inbound import set_inbound_hops
from a2aconsole.web.models import ApiToken, ChatTarget, hash_token
from a2aconsole.web.process.runtime import get_runtime

log = logging.getLogger(__name__)


MAX_TARGET_ID = 64  # ChatTarget.id's max_length


def _unauthorized() -> JsonResponse:
    resp = JsonResponse({"error": "unauthorized"}, status=401)
    resp["WWW-Authenticate"] = 'Bearer realm="a2aconsole"'
    return resp


def _is_text(value: str, limit: int) -> bool:
    """Whether a header or path value can be looked up at all: short enough and real (UTF-8 encodable) text."""
    if len(value) > limit:
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _json_body(request: HttpRequest) -> bool:
    """JSON by its type; a body of no stated type (none, or the generic application/octet-stream, which is what
    an HTTP client sending raw bytes says) is taken as JSON too. A form, text or any other type is refused."""
    media = request.content_type.strip().lower()
    if media in ("", "application/json", "application/octet-stream"):
        return True
    return media.startswith("application/") and media.endswith("+json")


async def _token_row(request: HttpRequest, target_id: str) -> ApiToken | None:
    """The bearer token's row (with its target), if it is `target_id`'s live token; else None."""
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or not _is_text(token, 200) or not _is_text(target_id, MAX_TARGET_ID):
        return None
    return await tokens.CACHE.live(hash_token(token), target_id)


def _flush_kept(runtime: Any, target: Chat) -> None:
    """The host answered, so the target is reachable: its kept results go out (in the background, a second later).
    A flush asked for less than FLUSH_DELAY ago has not read the kept results yet, so it covers this call too: a
    busy host does not make a flush (a read of pending.json) per call."""
    asked: dict[str, float] = vars(runtime).setdefault("api_flushes", {})  # target -> when, per runtime
    now = runtime.clock.monotonic()
    if now - asked.get(target.id, -FLUSH_DELAY) < FLUSH_DELAY:
        return
    asked[target.id] = now
    try:
        runtime.request_flush(target)
    except Exception as e:  # a flush that cannot start leaves the results kept for the next chance
        log.warning("flushing kept results of target %s failed: %s", target.id, type(e).__name__)


@csrf_exempt
@login_not_required
@methods("POST")
async def tool(request: HttpRequest, target_id: str) -> HttpResponse:
    try:
        token = await _token_row(request, target_id)
    except DatabaseError as e:
        log.warning("checking an API token failed (%s)", type(e).__name__)
        return error(503, "the console is busy; try again shortly", Retry_After="1")
    if token is None:
        return _unauthorized()
    target = token.target
    if not target.enabled:
        return error(403, "this chat target is disabled")
    if not _json_body(request):
        return error(415, f"the body must be JSON (Content-Type: application/json), not {request.content_type[:80]}")
    try:
        raw = request.body
    except RequestDataTooBig:
        return error(413, f"the body is over {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes")
    try:
        data = json.loads(raw or b"null")
    except (ValueError, UnicodeDecodeError):
        return error(400, "the body is not valid JSON")
    except RecursionError:  # nesting deeper than the parser goes: no tool call looks like that
        return error(400, "the body is nested too deeply")
    try:
        call = parse_call(data)
        key = idempotency.key_of(request)
    except BadCall as e:
        return error(400, e.problem, e.field)
    if key is None:
        return await _run(target, call)
    return await idempotency.once(token.pk, key, idempotency.body_hash(data), lambda: _run(target, call))


async def _run(target: ChatTarget, call: ToolCall) -> JsonResponse:
    """Run a checked call for the target: its kept results flushed, its hops noted, the tool's result answered.
    The target is resolved once, here, from the token's row: the call's `hops` (else the count kept on the row)
    go to the tool with the workspace, so the tool reads nothing more."""
    runtime = get_runtime()
    chat = value_of(target, target.id, hops=call.hops)
    if chat is None:
        return error(403, "this chat target is disabled")
    _flush_kept(runtime, chat)
    if call.hops is not None:
        try:
            await set_inbound_hops(target, call.hops)
        except DatabaseError as e:  # this call still uses the count; later ones see it once the database takes it
            log.warning("keeping the hops of target %s failed (%s)", target.id, type(e).__name__)
    async with deferred_events():  # the call's events, written together; committed before the answer leaves
        result = await runtime.tool.run(call.action, call.args, chat, by="api")
    return JsonResponse(result, json_dumps_params={"ensure_ascii": False})


@csrf_exempt
@login_not_required
@methods("GET")
def tool_schema(request: HttpRequest) -> JsonResponse:
    """The `a2a` tool's definition (name, description, JSON schema of its arguments) for a model's tool list."""
    return JsonResponse(tool_definition())


@csrf_exempt
@login_not_required
@methods("GET")
def openapi(request: HttpRequest) -> JsonResponse:
    return JsonResponse(openapi_document(request.build_absolute_uri("/")[:-1]))
