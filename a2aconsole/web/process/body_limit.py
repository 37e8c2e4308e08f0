"""The cap on an HTTP request body, and the ASGI middleware that refuses a body over it before the app reads it.

The largest body anyone has a reason to send is one `A2AClient__MaxFileBytes` of files: raw in a console
upload, or base64 (4/3 the size) inside a push's task snapshot. Anything over that plus a margin for the
JSON or multipart around it is refused with 413, on every path: a declared `Content-Length` at once,
before a byte of the body is read; a chunked body as soon as it passes the cap.

Django reads a whole body (to a spooled temp file) before any middleware or view runs, so the check must
sit in front of it. Under daphne the body is queued in memory by daphne itself before the app sees it:
`manage.py serve` uses `a2aconsole.web.server.Server`, which applies the same cap while the body arrives.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from django.conf import settings

log = logging.getLogger(__name__)

MARGIN_BYTES = 1024 * 1024

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def body_cap() -> int:
    """The largest request body accepted: MaxFileBytes as base64 (a push's task snapshot) plus 1 MiB."""
    return settings.A2A_CLIENT.max_file_bytes * 4 // 3 + MARGIN_BYTES


def too_large_body(cap: int) -> bytes:
    """The JSON body of a 413 answer."""
    return json.dumps({"error": f"the request body is over {cap} bytes (see A2AClient__MaxFileBytes)"}).encode()


def declared_length(headers: list[tuple[bytes, bytes]]) -> int | None:
    """The `Content-Length` a request declares; None when it declares none (or none a server accepted)."""
    for name, value in headers:
        if name.lower() == b"content-length" and value.strip().isdigit():
            return int(value)
    return None


def refused(method: str, path: str, cap: int) -> None:
    """One log line per refused body (the path cut short: it is the sender's)."""
    log.warning("refused a request body over %d bytes: %s %s", cap, method[:10], path[:80])


class BodyLimit:
    """ASGI middleware: an HTTP body over `body_cap()` gets 413 and the app never reads past the cap."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        cap = body_cap()
        declared = declared_length(scope.get("headers") or [])
        if declared is not None and declared > cap:
            refused(scope.get("method", ""), scope.get("path", ""), cap)
            await _send_413(send, cap)
            return
        received = 0
        over = False
        started = False

        async def bounded_receive() -> Message:
            nonlocal received, over
            if over:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > cap:
                    # Django takes a disconnect while reading the body as "the client went away" and answers
                    # nothing; the 413 is sent below
                    over = True
                    return {"type": "http.disconnect"}
            return message

        async def tracked_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        await self.app(scope, bounded_receive, tracked_send)
        if over and not started:
            refused(scope.get("method", ""), scope.get("path", ""), cap)
            await _send_413(send, cap)


async def _send_413(send: Send, cap: int) -> None:
    body = too_large_body(cap)
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    await send({"type": "http.response.start", "status": 413, "headers": headers})
    await send({"type": "http.response.body", "body": body})
