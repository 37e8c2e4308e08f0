"""Probes for a container orchestrator: `/healthz` (the process answers) and `/readyz` (it can serve).

Both answer without login and before the host and HTTPS checks (`web.probes`), because orchestrators
probe by IP over plain HTTP. Neither says more than which part failed: no URLs, paths, names or keys.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import secrets
from collections.abc import Callable
from typing import Any, TypeVar

from channels.layers import get_channel_layer
from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse, JsonResponse

from a2aconsole.core.files import Workspace
from a2aconsole.web.chats import enabled_workspaces
from a2aconsole.web.process.runtime import live_runtimes, worker_mode

CHECK_TIMEOUT_SECONDS = 5.0
T = TypeVar("T")


class NotReady(Exception):
    """A readiness check failed; the message is what `/readyz` shows (no secrets)."""


@login_not_required
def healthz(request: HttpRequest) -> HttpResponse:
    """The process is up and answers: no database, no channel layer, nothing else is touched."""
    return HttpResponse("ok\n", content_type="text/plain; charset=utf-8", headers={"Cache-Control": "no-store"})


@login_not_required
async def readyz(request: HttpRequest) -> HttpResponse:
    """200 when the database, the channel layer and the worker lease are as expected; else 503 naming them."""
    names = ("database", "channel_layer", "worker_lease")
    results = await asyncio.gather(
        _timed(_database_ready()), _timed(_channel_layer_ready()), _timed(_lease_ready()), return_exceptions=False
    )
    checks = dict(zip(names, results, strict=True))
    failed = [n for n, r in checks.items() if not r["ok"]]
    body: dict[str, Any] = {"ready": not failed, "failed": failed, "checks": checks}
    return JsonResponse(body, status=503 if failed else 200, headers={"Cache-Control": "no-store"})


async def _timed(check: Any) -> dict[str, Any]:
    try:
        detail = await asyncio.wait_for(check, CHECK_TIMEOUT_SECONDS)
    except NotReady as e:
        return {"ok": False, "detail": str(e)}
    except TimeoutError:
        return {"ok": False, "detail": f"no answer within {CHECK_TIMEOUT_SECONDS:g} s"}
    except Exception as e:  # only the error's type: its text may carry a host, a user or a URL
        return {"ok": False, "detail": f"unreachable ({type(e).__name__})"}
    return {"ok": True, "detail": detail}


# The probes' database work runs in threads of their own, not the one the ORM's other sync work shares, and at
# most two: a database that hangs makes probes time out, never piles up threads or blocks the pages.
_db_threads = concurrent.futures.ThreadPoolExecutor(2, thread_name_prefix="a2a-readyz")


def _closing(fn: Callable[[], T]) -> T:
    from django.db import connections

    try:
        return fn()
    finally:
        connections.close_all()  # this thread's connections: leave none idle behind


async def _in_db_thread(fn: Callable[[], T]) -> T:
    return await asyncio.get_running_loop().run_in_executor(_db_threads, _closing, fn)


def _select_one() -> None:
    from django.db import connections

    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()


async def _database_ready() -> str:
    await _in_db_thread(_select_one)
    return "ok"


async def _channel_layer_ready() -> str:
    """A message to a private channel of this process and back (Redis, or the in-memory layer)."""
    layer = get_channel_layer()
    if layer is None:
        raise NotReady("no channel layer is configured")
    channel = await layer.new_channel("readyz.")
    nonce = secrets.token_hex(8)
    await layer.send(channel, {"type": "readyz.ping", "nonce": nonce})
    message = await layer.receive(channel)
    if message.get("nonce") != nonce:
        raise NotReady("the channel layer returned another message")
    return "ok"


async def _lease_ready() -> str:
    """Embedded: this process runs the watch worker and the console workspace's lease is held (by it, or
    by another process it can see). External (a scale-out web process): the workers hold the leases."""

    if worker_mode() == "external":
        return "not needed: the watches run in external workers"
    if not settings.A2A_CLIENT.enabled:
        return "not needed: the A2A client is off"
    runtimes = [rt for rt in live_runtimes() if rt.registry is not None and not rt.registry.stopped]
    if not runtimes:
        raise NotReady("the embedded watch worker is not running")
    workspaces = await _in_db_thread(enabled_workspaces)
    console = Workspace(settings.WORKSPACE_DIR)
    mine = [ws for ws in workspaces if any(rt.leases.holds(ws) for rt in runtimes)]
    others = [ws for ws in workspaces if ws not in mine and await runtimes[0].leases.holder_of(ws) is not None]
    if console not in mine and console not in others:
        raise NotReady("no process holds the lease of the console's workspace")
    waiting = len(workspaces) - len(mine) - len(others)
    detail = f"this process runs {len(mine)} of {len(workspaces)} workspace(s), other processes {len(others)}"
    return detail + (f"; {waiting} wait for the next rescan" if waiting else "")
