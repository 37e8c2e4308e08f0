"""URL routes: the console (web), the agent-host API (api), and the push receiver."""

from django.urls import include, path

urlpatterns = [
    path("", include("a2aconsole.web.urls")),
]
