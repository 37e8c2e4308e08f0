"""The API's and the push receiver's own Django handler: the same URLs, views and error answers, without the
console's session middleware.

Django runs each hook of a classic (`MiddlewareMixin`) middleware through `sync_to_async`, so with the console's
eleven a request under /api/ was handed to another thread and back about fifteen times before and after its
view; under load every hand-off waits for the scheduler. An API call carries a bearer token, never a session or
a CSRF token (every API view is CSRF-exempt and needs no login), so the session, auth, login, messages, CSRF,
htmx and axes middleware do nothing for it. The ones that shape every answer stay, run in the loop: their hooks
only read the request and set headers (the host check, HTTPS redirect, HSTS, nosniff, the CSP, frame denial).
A push (`POST /a2a/push/<watchId>`) is the same: a remote agent's request with the watch's token, no session,
CSRF-exempt; at 50 pushes a second those hand-offs were a fifth of the event loop's time
(`tests/bench/push_to_row.py --tabs 10`).

Django also sends `request_started` and `request_finished` (in `response.close`) through `sync_to_async`: two more
hand-offs a request, the first before the view runs. Their receivers (Django's own: the thread's database
connections closed when old or broken, its queries log and caches reset) care for the thread that runs a request's
sync ORM work; an API or push request has none (its database work runs in `web.db_threads`, which tidies its
connections after each job), so they are sent in the loop, where they find nothing to do. Like the middleware
here, a receiver of those signals must be pure.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from django.core import signals
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.urls import set_script_prefix

from a2aconsole.api.errors import API_PREFIX
from a2aconsole.web.process.in_loop import in_loop_chain
from a2aconsole.web.views.push import PUSH_PREFIX

# In settings.MIDDLEWARE's order. Each must be pure: no database, no blocking I/O, in any of its hooks.
API_MIDDLEWARE = (
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
)


class ApiHandler(ASGIHandler):
    """Django's ASGI handler with API_MIDDLEWARE (in the loop) instead of settings.MIDDLEWARE, and no thread made
    for each request. Django serves each request in a ThreadSensitiveContext: its first `sync_to_async` call
    starts a thread of its own (the request_started signal's receivers, `response.close`), and the event loop
    waits for that thread to start: a fifth of the loop's time at 50 pushes a second. Here the request signals
    run in the loop (`handle`), the sync views (the tool schema, openapi.json) on asgiref's one shared sync thread,
    and the views' database work in `web.db_threads`."""

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            raise ValueError(f"the API serves HTTP only, not {scope['type']}")
        await self.handle(scope, receive, send)

    async def handle(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Django's `ASGIHandler.handle` with its request signals sent in the loop (see the module's doc): the body
        read, the response got while a disconnect is listened for (it cancels the view), sent, then closed."""
        try:
            body_file = await self.read_body(receive)
        except RequestAborted:
            return
        try:
            set_script_prefix(get_script_prefix(scope))
            signals.request_started.send(sender=self.__class__, scope=scope)
            request, error_response = self.create_request(scope, body_file)
            if request is None:
                await self.send_response(error_response, send)
                error_response.close()
                return

            async def process_request() -> Any:
                response = await self.run_get_response(request)
                with contextlib.suppress(asyncio.CancelledError):  # the client went away while it was sent
                    await self.send_response(response, send)
                return response

            listening = asyncio.create_task(self.listen_for_disconnect(receive))
            answering = asyncio.create_task(process_request())
            await asyncio.wait({listening, answering}, return_when=asyncio.FIRST_COMPLETED)
            for task in (listening, answering):  # the listener first: it cannot fail in a way that hides the view's
                if not task.done():
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
                    continue
                with contextlib.suppress(RequestAborted):
                    task.result()
            if answering.cancelled():
                signals.request_finished.send(sender=self.__class__)
            else:
                answering.result().close()
        finally:
            body_file.close()

    def load_middleware(self, is_async: bool = False) -> None:
        self._view_middleware: list[Any] = []
        self._template_response_middleware: list[Any] = []
        self._exception_middleware: list[Any] = []
        self._middleware_chain = in_loop_chain(self._get_response_async, API_MIDDLEWARE)


def split_api(console: Any) -> Callable[..., Awaitable[None]]:
    """An ASGI app: HTTP requests under /api/ and /a2a/push/ to an ApiHandler, everything else to `console`."""
    api = ApiHandler()

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        lean = path == API_PREFIX[:-1] or path.startswith(API_PREFIX) or path.startswith(PUSH_PREFIX)
        if scope["type"] == "http" and lean:
            await api(scope, receive, send)
        else:
            await console(scope, receive, send)

    return app
