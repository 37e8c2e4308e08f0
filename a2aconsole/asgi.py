"""ASGI entry point: Django for HTTP, Channels for WebSockets and the watch worker channel."""

from __future__ import annotations

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "a2aconsole.settings")

from django.core.asgi import get_asgi_application

django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ChannelNameRouter, ProtocolTypeRouter, URLRouter  # noqa: E402

from a2aconsole.api.handler import split_api  # noqa: E402
from a2aconsole.web import routing  # noqa: E402
from a2aconsole.web.process.body_limit import BodyLimit  # noqa: E402
from a2aconsole.web.socket_origin import SameOriginSockets  # noqa: E402
from a2aconsole.web.static_files import StaticFiles  # noqa: E402

application = ProtocolTypeRouter(
    {
        # A body over the cap is refused before Django reads it. Static files (CSS, htmx) are served by the app
        # itself, so one process needs no web server in front.
        # /api/ goes to a handler of its own, without the console's session middleware (api/handler.py).
        "http": BodyLimit(StaticFiles(split_api(django_asgi_app))),
        # A WebSocket opens only for a page of the console's own origin (web/socket_origin.py).
        "websocket": SameOriginSockets(AuthMiddlewareStack(URLRouter(routing.websocket_urlpatterns))),
        "channel": ChannelNameRouter(routing.channel_routes),
    }
)
