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

from django.contrib.auth.decorators import login_not_required
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
    await ApiToken.objects.filter(pk=row.pk).aupdate(last_used_at=timezone.now())
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
    target = await _token_target(request, target_id)
    if target is None:
        return _unauthorized()
    if not target.enabled:
        return JsonResponse({"error": "this chat target is disabled"}, status=403)
    try:
        data = json.loads(request.body or b"null")
    except (ValueError, UnicodeDecodeError):
        return JsonResponse({"error": "the body is not valid JSON", "field": None}, status=400)
    try:
        call = parse_call(data)
    except BadCall as e:
        return JsonResponse(e.to_json(), status=400)

    runtime = get_runtime()
    _flush_kept(runtime, target.id)
    if call.hops is not None:
        await set_inbound_hops(target, call.hops)
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
