"""`Idempotency-Key`: a host that retries a call (a dropped connection, a timeout) gets the first answer
instead of a second send (a second task, a second booking).

The first call with a key claims it (a unique row per token and key, written before anything is sent),
runs in a task of its own, so a client that hangs up (Django then cancels the view) does not stop the
call half-way, and stores the answer's bytes exactly as they were sent. Within 24 h the same key with
the same body gets those bytes again; with another body, a 422. A retry that arrives while the first
call still runs joins it when it runs in this process, else gets a 409 to retry shortly.

Its database work runs on the kept connections of `web.db_threads`, not the request's own (opened and closed with
each request): the claim and the expiry of old keys are one transaction, the stored answer another.
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import json
import logging
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

from django.db import DatabaseError, IntegrityError, transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone

from a2aconsole.api.calls import BadCall
from a2aconsole.api.errors import error
from a2aconsole.api.models import IdempotentCall
from a2aconsole.web import db_threads

log = logging.getLogger(__name__)

HEADER = "Idempotency-Key"
REPLAYED = "Idempotent-Replayed"
KEEP = timedelta(hours=24)
# a call still unanswered after this long will never be (its process stopped): say so rather than "retry"
IN_FLIGHT_LIMIT = timedelta(minutes=10)
MAX_KEY = 255

Answer = tuple[int, bytes]
_running: dict[tuple[int, str], asyncio.Task[Answer]] = {}


def key_of(request: HttpRequest) -> str | None:
    """The request's key (None: no header), or BadCall for one that cannot be a key."""
    key = request.headers.get(HEADER)
    if key is None:
        return None
    if not 0 < len(key) <= MAX_KEY or not all(" " <= c <= "~" for c in key):
        raise BadCall(HEADER, f"{HEADER} must be 1-{MAX_KEY} printable ASCII characters (a UUID is a good key)")
    return key


def body_hash(data: Any) -> str:
    """The hash of a call's body as canonical JSON: the same call in other whitespace or order is the same body."""
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _answer(status: int, content: bytes, replayed: bool) -> HttpResponse:
    resp = HttpResponse(content, status=status, content_type="application/json")
    if replayed:
        resp[REPLAYED] = "true"
    return resp


def _claim(token_id: int, key: str, digest: str) -> int:
    """Claim the key (its row, before anything is sent), and forget the keys older than KEEP: one transaction."""
    now = timezone.now()
    with transaction.atomic():
        IdempotentCall.objects.filter(created_at__lt=now - KEEP).delete()
        return IdempotentCall.objects.create(token_id=token_id, key=key, body_hash=digest, created_at=now).pk


def _answered(pk: int, status: int | None, content: bytes | None) -> None:
    """Store the call's answer (None: the call failed before the tool; its key is free again)."""
    if status is None:
        IdempotentCall.objects.filter(pk=pk).delete()
    else:
        IdempotentCall.objects.filter(pk=pk).update(status=status, answer=content)


def _claimed(token_id: int, key: str) -> IdempotentCall | None:
    return IdempotentCall.objects.filter(token_id=token_id, key=key).first()


async def once(token_id: int, key: str, digest: str, call: Callable[[], Awaitable[JsonResponse]]) -> HttpResponse:
    """`call`'s answer, made at most once per (token, key) within 24 h."""
    try:
        pk = await db_threads.run(_claim, token_id, key, digest)
    except IntegrityError:
        return await _again(token_id, key, digest)
    except DatabaseError as e:  # without the claim a retry could send twice: send nothing
        log.warning("claiming an %s failed (%s)", HEADER, type(e).__name__)
        return error(503, "the console is busy; try again shortly", Retry_After="1")
    # a context of its own: the request's (its thread for sync database calls) ends when the host hangs up
    task = asyncio.get_running_loop().create_task(_run(pk, call), context=contextvars.Context())
    _running[(token_id, key)] = task
    task.add_done_callback(lambda t: _done(t, (token_id, key)))
    status, content = await asyncio.shield(task)  # the host hanging up cancels this await, not the call
    return _answer(status, content, replayed=False)


def _done(task: asyncio.Task[Answer], slot: tuple[int, str]) -> None:
    """Forget a finished call; a failure is retrieved here too (its waiter may have hung up), and logged."""
    _running.pop(slot, None)
    if not task.cancelled() and task.exception() is not None:
        log.warning("a call with an %s failed (%s); the key is free again", HEADER, type(task.exception()).__name__)


async def _run(pk: int, call: Callable[[], Awaitable[JsonResponse]]) -> Answer:
    """Make the call and store its answer. A call that fails (a fault before the tool, which never raises) frees
    the key for a retry; one cancelled mid-way (the process stopping) keeps it: whether it was sent is unknown."""
    try:
        resp = await call()
    except Exception:
        await db_threads.run(_answered, pk, None, None)
        raise
    await db_threads.run(_answered, pk, resp.status_code, resp.content)
    return resp.status_code, resp.content


async def _again(token_id: int, key: str, digest: str) -> HttpResponse:
    """A key already claimed: the first answer, the in-flight call's answer, or why not."""
    row = await db_threads.run(_claimed, token_id, key)
    if row is None:  # expired and deleted in between: nothing was answered for it within 24 h
        return error(409, f"that {HEADER} was just released; retry the call", HEADER, Retry_After="1")
    if row.body_hash != digest:
        return error(
            422,
            f"this {HEADER} was used for a different call (another body) in the last 24 h; use a new key for a new "
            "call, or repeat the first call's body exactly",
            HEADER,
        )
    if row.status is not None:
        return _answer(row.status, bytes(row.answer or b""), replayed=True)
    task = _running.get((token_id, key))
    if task is not None and task.get_loop() is asyncio.get_running_loop():
        status, content = await asyncio.shield(task)
        return _answer(status, content, replayed=True)
    if timezone.now() - row.created_at > IN_FLIGHT_LIMIT:
        return error(
            409,
            f"the first call with this {HEADER} never answered (the console stopped during it); whether it reached "
            "the agent is unknown: check with action=status, or send again with a new key",
            HEADER,
        )
    return error(409, f"a call with this {HEADER} is in progress; retry shortly", HEADER, Retry_After="1")
