"""Which Origin may open a console WebSocket, through the real routed ASGI app: the console's own (scheme, host
and port) and no other, with and without a public URL, X-Forwarded-Proto read only from a trusted proxy."""

from __future__ import annotations

import pytest
from channels.testing import WebsocketCommunicator
from django.test import override_settings

from a2aconsole.asgi import application
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.public_site import PublicSite

pytestmark = pytest.mark.django_db(transaction=True)

HOSTS = ["127.0.0.1", "localhost", "[::1]", "console.example"]
LOCAL = PublicSite()
BEHIND_PROXY = PublicSite(trust_proxy=True)
PUBLIC = PublicSite(url="https://console.example", trust_proxy=True)
# (site, scheme, Host, X-Forwarded-Proto, Origin): a console reached at http://127.0.0.1:8901 unless the row says
OWN = [
    (LOCAL, "ws", "127.0.0.1:8901", None, "http://127.0.0.1:8901"),
    (LOCAL, "ws", "localhost:8901", None, "http://LOCALHOST:8901"),
    (LOCAL, "ws", "[::1]:8901", None, "http://[::1]:8901"),
    (LOCAL, "ws", "127.0.0.1", None, "http://127.0.0.1:80"),  # default ports are the same origin
    (LOCAL, "ws", "127.0.0.1:80", None, "http://127.0.0.1"),
    (LOCAL, "wss", "127.0.0.1:8901", None, "https://127.0.0.1:8901"),
    (LOCAL, "ws", "127.0.0.1:8901", "https", "http://127.0.0.1:8901"),  # the header of an untrusted client
    (BEHIND_PROXY, "ws", "127.0.0.1:8901", "https", "https://127.0.0.1:8901"),
    (BEHIND_PROXY, "ws", "console.example", "https", "https://console.example:443"),
    (PUBLIC, "ws", "console.example", "https", "https://console.example"),
    (PUBLIC, "ws", "127.0.0.1:8901", None, "https://console.example"),  # the public URL, whatever the proxy says
]
FOREIGN = [
    (LOCAL, "ws", "127.0.0.1:8901", None, "https://127.0.0.1:8901"),
    (LOCAL, "ws", "127.0.0.1:8901", None, "http://localhost:3000"),
    (LOCAL, "ws", "127.0.0.1:8901", None, "http://[::1]:8080"),
    (LOCAL, "ws", "127.0.0.1:8901", None, "ftp://127.0.0.1"),
    (LOCAL, "ws", "127.0.0.1:8901", None, "http://127.0.0.1:9908"),
    (LOCAL, "ws", "127.0.0.1:8901", None, "http://127.0.0.1"),
    (LOCAL, "ws", "127.0.0.1:8901", None, "http://localhost:8901"),
    (LOCAL, "ws", "127.0.0.1:8901", None, "null"),
    (LOCAL, "ws", "127.0.0.1:8901", None, None),
    (LOCAL, "ws", "127.0.0.1:8901", None, "http://127.0.0.1:8901/path"),
    (LOCAL, "ws", None, None, "http://127.0.0.1"),
    (LOCAL, "ws", "evil.example:8901", None, "http://evil.example:8901"),  # a name rebound to this address
    (LOCAL, "wss", "127.0.0.1:8901", None, "http://127.0.0.1:8901"),
    (LOCAL, "ws", "127.0.0.1:8901", "https", "https://127.0.0.1:8901"),  # X-Forwarded-Proto not trusted
    (BEHIND_PROXY, "ws", "127.0.0.1:8901", "https", "http://127.0.0.1:8901"),
    (BEHIND_PROXY, "wss", "127.0.0.1:8901", "http", "https://127.0.0.1:8901"),
    (PUBLIC, "ws", "console.example", "https", "http://console.example"),
    (PUBLIC, "ws", "console.example", "https", "https://console.example:8443"),
    (PUBLIC, "ws", "console.example", "https", "https://evil.example"),
    (PUBLIC, "ws", "127.0.0.1:8901", None, "http://127.0.0.1:8901"),
]


async def opens(site: PublicSite, scheme: str, host: str | None, proto: str | None, origin: str | None, cookie: str):
    headers = [(b"cookie", f"sessionid={cookie}".encode())]
    headers += [(b"host", host.encode())] if host else []
    headers += [(b"x-forwarded-proto", proto.encode())] if proto else []
    headers += [(b"origin", origin.encode())] if origin else []
    with override_settings(PUBLIC_SITE=site, PUBLIC_URL=site.url, ALLOWED_HOSTS=HOSTS):
        comm = WebsocketCommunicator(application, "/ws/console/dashboard/", headers=headers)
        comm.scope["scheme"] = scheme
        connected, _ = await comm.connect(timeout=5)
        await comm.disconnect()
    return connected


@pytest.mark.parametrize("case", OWN, ids=lambda c: f"{c[1]}-{c[2]}-{c[3]}-{c[4]}")
async def test_the_consoles_own_origin_opens(case: tuple, ws: Workspace, owner_cookie: str) -> None:
    assert await opens(*case, owner_cookie)


@pytest.mark.parametrize("case", FOREIGN, ids=lambda c: f"{c[1]}-{c[2]}-{c[3]}-{c[4]}")
async def test_any_other_origin_is_refused(case: tuple, ws: Workspace, owner_cookie: str) -> None:
    assert not await opens(*case, owner_cookie)
