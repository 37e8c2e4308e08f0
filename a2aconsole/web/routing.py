"""WebSocket routes of the console, and the background channels of the worker."""

from django.urls import path

from a2aconsole.web.inbound import InboundConsumer
from a2aconsole.web.live.consumer import ConsoleConsumer
from a2aconsole.web.process.worker import WatchWorker

# One socket per console tab: /ws/console/<page>/?target=…|agent=…&task=…|q=…
websocket_urlpatterns: list = [
    path("ws/console/<str:page>/", ConsoleConsumer.as_asgi()),
]

# Background channels (runworker): the watch worker registers here. (Filled in by the watches work.)
channel_routes: dict = {}
channel_routes["a2a-watches"] = WatchWorker.as_asgi()  # manage.py runworker a2a-watches

# Hosts inside the process report an inbound message's hops (chat targets work).
channel_routes["a2a-inbound"] = InboundConsumer.as_asgi()
