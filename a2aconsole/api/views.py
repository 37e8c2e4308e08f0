"""The JSON tool API: an agent host's model calls the `a2a` tool of one chat target over HTTP.

`POST /api/v1/targets/<id>/tool` with `Authorization: Bearer <token>` runs one tool action for that
target and answers the tool's result JSON. Any token problem (missing, wrong, revoked, another
target's) is the same bare 401, so a caller learns nothing about which tokens or targets exist.
A call also shows the target is reachable again, so results kept for it are flushed.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import RequestDataTooBig
from django.db import DatabaseError
from django.http import HttpRequest, JsonResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from a2aconsole.web.models import ChatTarget
from a2aconsole.web.runtime import get_runtime

from .calls import BadCall, parse_call
from .hops import remember, set_inbound_hops
from .models import ApiToken, hash_token
from .openapi import openapi_document, tool_definition

log = logging.getLogger(__name__)


def _unauthorized() -> JsonResponse:
    resp = JsonResponse({"error": "unauthorized"}, status=401)
    resp["WWW-Authenticate"] = 'Bearer realm="a2aconsole"'
    return resp


async def _token_target(request: HttpRequest, target_id: str) -> ChatTarget | None:
    """The target the bearer token belongs to, if it is `target_id`'s live token; else None."""
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or len(token) > 200:
        return None
    row = await (
        ApiToken.objects.select_related("target")
        .filter(token_hash=hash_token(token), revoked_at__isnull=True, target_id=target_id)
        .afirst()
    )
    if row is None:
        return None
    try:  # a record for the owner, not a condition of the call: a busy database must not refuse it
        await ApiToken.objects.filter(pk=row.pk).aupdate(last_used_at=timezone.now())
    except DatabaseError as e:
        log.warning("noting the use of a token of target %s failed (%s)", target_id, type(e).__name__)
    return row.target


def _flush_kept(runtime: Any, target_id: str) -> None:
    """The host answered, so the target is reachable: its kept results go out (in the background, a second later)."""
    try:
        runtime.request_flush(target_id)
    except Exception as e:  # a flush that cannot start leaves the results kept for the next chance
        log.warning("flushing kept results of target %s failed: %s", target_id, type(e).__name__)


@csrf_exempt
@login_not_required
@require_POST
async def tool(request: HttpRequest, target_id: str) -> JsonResponse:
    try:
        target = await _token_target(request, target_id)
    except DatabaseError as e:
        log.warning("checking an API token failed (%s)", type(e).__name__)
        return JsonResponse({"error": "the console is busy; try again shortly"}, status=503)
    if target is None:
        return _unauthorized()
    if not target.enabled:
        return JsonResponse({"error": "this chat target is disabled"}, status=403)
    try:
        raw = request.body
    except RequestDataTooBig:
        return JsonResponse({"error": f"the body is over {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes"}, status=413)
    try:
        data = json.loads(raw or b"null")
    except (ValueError, UnicodeDecodeError):
        return JsonResponse({"error": "the body is not valid JSON", "field": None}, status=400)
    except RecursionError:  # nesting deeper than the parser goes: no tool call looks like that
        return JsonResponse({"error": "the body is nested too deeply", "field": None}, status=400)
    try:
        call = parse_call(data)
    except BadCall as e:
        return JsonResponse(e.to_json(), status=400)

    runtime = get_runtime()
    _flush_kept(runtime, target.id)
    if call.hops is not None:
        try:
            await set_inbound_hops(target, call.hops)
        except DatabaseError as e:  # this call still uses the count; it is kept once the database takes it
            log.warning("keeping the hops of target %s failed (%s)", target.id, type(e).__name__)
            remember(target.pk, call.hops)
    else:
        remember(target.pk, target.inbound_hops)
    result = await runtime.tool.run(call.action, call.args, target.id)
    return JsonResponse(result, json_dumps_params={"ensure_ascii": False})


@login_not_required
@require_GET
def tool_schema(request: HttpRequest) -> JsonResponse:
    """The `a2a` tool's definition (name, description, JSON schema of its arguments) for a model's tool list."""
    return JsonResponse(tool_definition())


@login_not_required
@require_GET
def openapi(request: HttpRequest) -> JsonResponse:
    return JsonResponse(openapi_document(request.build_absolute_uri("/")[:-1]))
