"""URL routes: the console (web), the agent-host API (api), and the push receiver.

Everything under /api/ answers JSON: unknown paths there get the API's JSON 404 (not the console's page,
nor a redirect to the login), and Django's error handlers answer JSON for /api/ paths.
"""

from django.urls import include, path, re_path

from a2aconsole.api import errors
from a2aconsole.web.views import health, metrics, push

handler400 = errors.bad_request
handler403 = errors.permission_denied
handler404 = errors.page_not_found
handler500 = errors.server_error

urlpatterns = [
    # answered first by web.probes (before the host check); routed too, so they resolve and reverse
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", metrics.scrape, name="metrics"),
    path("a2a/push/<str:watch_id>", push.receive, name="a2a-push"),
    path("api/v1/", include("a2aconsole.api.urls")),
    re_path(r"^api(?:/(?P<rest>.*))?$", errors.unknown_path),
    path("", include("a2aconsole.web.urls")),
]
