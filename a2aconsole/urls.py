"""URL routes: the console (web), the agent-host API (api), and the push receiver."""

from django.urls import include, path

from a2aconsole.web.views import health, metrics, push

urlpatterns = [
    # answered first by web.probes (before the host check); routed too, so they resolve and reverse
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", metrics.scrape, name="metrics"),
    path("a2a/push/<str:watch_id>", push.receive, name="a2a-push"),
    path("api/v1/", include("a2aconsole.api.urls")),
    path("", include("a2aconsole.web.urls")),
]
