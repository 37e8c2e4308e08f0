"""WebSocket routes of the console. (Filled in by the console work.)"""

websocket_urlpatterns: list = []

# Background channels (runworker): the watch worker registers here. (Filled in by the watches work.)
channel_routes: dict = {}
