"""The push receiver: `POST /a2a/push/<watchId>`, where remote agents report task updates.

Unknown watch or wrong token -> 404 and nothing happens (constant-time compare, the same answer for
both; a push with no token at all is answered before its body is read); body over `body_cap()` -> 413
(refused in front of Django, see `a2aconsole.web.process.body_limit`; checked here again for any other way in);
not JSON, or about another task -> 400; a good push -> 200 once its own news (state, status message) is
stored and shown; a push that says the task settled wakes the watch, which decides the end with GetTask
(`WatchRegistry.on_push`). No body makes it answer 500. In the embedded default the registry is in this
process; in scale-out the push is checked against `pending.json` and only wakes the worker over the channel
layer (the worker's watch confirms with GetTask).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from a2aconsole.core import pending
from a2aconsole.core.files import Workspace
from a2aconsole.core.pending import WatchRecord
from a2aconsole.core.watches import push_json, push_task_id, token_matches
from a2aconsole.web import db_threads
from a2aconsole.web.chats import enabled_workspaces
from a2aconsole.web.metrics import counted_push
from a2aconsole.web.process.body_limit import body_cap
from a2aconsole.web.process.runtime import get_runtime, wake_worker

log = logging.getLogger(__name__)

TOKEN_HEADER = "X-A2A-Notification-Token"
PUSH_PREFIX = "/a2a/push/"  # the receiver's route (a2aconsole/urls.py), for the check before the body
NO_SUCH_WATCH = {"error": "no such watch"}


def _answer(result: str) -> HttpResponse:
    if result == "ok":
        return JsonResponse({"ok": True})
    if result == "bad_request":
        return JsonResponse({"error": "not a push about this watch's task"}, status=400)
    return JsonResponse(NO_SUCH_WATCH, status=404)


def push_token(request: HttpRequest) -> str | None:
    """The token from `X-A2A-Notification-Token` (what a2a-sdk servers send) or `Authorization: Bearer`."""
    return token_in(request.headers)


def token_in(headers: Mapping[str, str]) -> str | None:
    """`push_token` over any headers mapping (`HttpRequest.headers`, or lower-case names)."""
    token = headers.get(TOKEN_HEADER) or headers.get(TOKEN_HEADER.lower())
    if token:
        return token
    auth = headers.get("Authorization") or headers.get("authorization") or ""
    scheme, _, value = auth.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return None


def refused_before_body(method: str, path: str, headers: Mapping[str, str]) -> bool:
    """Whether a request can be answered "no such watch" before its body arrives: a push to a watch this
    process follows, without that watch's token. False whenever it cannot tell (another path, or no registry
    in this process: a scale-out web process checks the files, which it does after the body as before)."""
    if method != "POST" or not path.startswith(PUSH_PREFIX):
        return False
    watch_id = path[len(PUSH_PREFIX) :]
    if not watch_id or "/" in watch_id:
        return False  # not the receiver's route: Django answers it

    registry = get_runtime().registry
    if registry is None:
        return False
    if registry.accepts(watch_id, token_in(headers)):
        return False
    log.warning("push to an unknown watch or without its token refused before its body: %s", path[:80])
    return True


def _find(watch_id: str) -> tuple[Workspace, WatchRecord] | None:
    """The active watch record with this id in any known workspace (sync: the ORM lists the workspaces)."""

    for ws in enabled_workspaces():
        for rec in pending.read(ws).records:
            if rec.watch_id == watch_id and rec.undelivered is None:
                return ws, rec
    return None


def _check(rec: WatchRecord, token: str | None, body: bytes) -> str:
    if not token_matches(rec.push_token, token):
        return "not_found"
    try:
        data = push_json(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return "bad_request"
    return "ok" if push_task_id(data) == rec.task_id else "bad_request"


async def _receive_from_files(watch_id: str, token: str | None, body: bytes) -> str:
    """Scale-out: verify the push against pending.json, then wake the worker that follows the watch."""

    found = await db_threads.run(_find, watch_id)  # a kept connection: one push after another
    if found is None:
        return "not_found"
    ws, rec = found
    result = _check(rec, token, body)
    if result != "ok":
        return result
    await wake_worker({"type": "watch.push", "workspace": str(ws.root), "watch_id": watch_id})
    return "ok"


@counted_push
@csrf_exempt
@login_not_required
async def receive(request: HttpRequest, watch_id: str) -> HttpResponse:
    if request.method != "POST":
        return JsonResponse({"error": "POST a push notification here"}, status=405, headers={"Allow": "POST"})
    cap = body_cap()
    try:
        declared = int(request.headers.get("Content-Length") or 0)
    except ValueError:
        return JsonResponse({"error": "bad Content-Length"}, status=400)
    if declared > cap:
        return JsonResponse({"error": f"push body over {cap} bytes"}, status=413)
    token = push_token(request)
    if token is None:  # no token never matches: the body is not even read
        return _answer("not_found")
    try:
        body = request.read(cap + 1)
    except Exception:
        return JsonResponse({"error": "unreadable body"}, status=400)
    if len(body) > cap:
        return JsonResponse({"error": f"push body over {cap} bytes"}, status=413)
    try:
        registry = get_runtime().registry
        if registry is not None:  # embedded: the registry knows every watch (it rescans the files each minute)
            result = await registry.on_push(watch_id, token, body)
        else:  # a web process of a scale-out: check against the files, then wake the worker
            result = await _receive_from_files(watch_id, token, body)
    except Exception:
        log.exception("push for watch %s could not be handled", watch_id[:40])
        return JsonResponse({"error": "the console could not take the push now; send it again later"}, status=503)
    return _answer(result)
