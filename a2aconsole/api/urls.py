"""The JSON tool API for agent hosts. (Filled in by the chat-targets work.)"""

urlpatterns: list = []
