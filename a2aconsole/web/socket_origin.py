"""Which pages may open the console's WebSockets: its own, and no other origin.

A browser sends the owner's session cookie with a WebSocket handshake whatever page opens it, and the
handshake is not subject to CORS, so the Origin header is all that tells the console's pages from a
hostile one. A page on another port of the same host (`http://127.0.0.1:9908`), on another scheme or on
a name that resolves here is another origin, so host names alone (channels' AllowedHostsOriginValidator)
are not enough: scheme, host and port must all be the console's.
"""

from __future__ import annotations

import logging

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host

from a2aconsole.public_site import web_origin
from a2aconsole.web.process.body_limit import ASGIApp, Receive, Scope, Send

log = logging.getLogger(__name__)

HTTP_SCHEME = {"ws": "http", "wss": "https"}


def header_values(scope: Scope, name: bytes) -> list[str]:
    return [v.decode("latin-1") for k, v in scope.get("headers", []) if k.lower() == name]


def own_origin(scope: Scope) -> str | None:
    """The console's origin for this handshake: the public URL's when one is set, else the request's scheme
    (X-Forwarded-Proto only from a trusted proxy, read as Django reads it) and its Host, which must be one of
    ALLOWED_HOSTS (else a name rebound to this address would pass as its own origin). None when there is none.
    """
    site = settings.PUBLIC_SITE
    if site.url:
        return site.url
    scheme = HTTP_SCHEME.get(scope.get("scheme") or "ws", "")
    forwarded = header_values(scope, b"x-forwarded-proto")
    if site.trust_proxy and forwarded:
        scheme = "https" if forwarded[0].split(",")[0].strip() == "https" else "http"
    hosts = header_values(scope, b"host")
    if not scheme or len(hosts) != 1:
        return None
    domain, _port = split_domain_port(hosts[0])
    if not domain or not validate_host(domain, settings.ALLOWED_HOSTS):
        return None
    return web_origin(f"{scheme}://{hosts[0]}")


class SameOriginSockets:
    """ASGI middleware: a WebSocket whose one Origin header is the console's own goes on to `app`; any other
    (none, `null`, another scheme, host or port) is refused with a 403 before the app sees it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.deny = WebsocketDenier.as_asgi()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        origins = header_values(scope, b"origin")
        own = own_origin(scope)
        if own is not None and len(origins) == 1 and web_origin(origins[0]) == own:
            return await self.app(scope, receive, send)
        log.info("WebSocket refused: Origin %r is not the console's own (%r)", origins[:1], own)
        return await self.deny(scope, receive, send)
