"""`GET /metrics`: the process's Prometheus metrics, for a scraper holding the token or on an allowed address.

Off (no `A2ACONSOLE_METRICS_TOKEN`, no `A2ACONSOLE_METRICS_ALLOW`): 404. An address outside the allowed
networks: 403. A missing or wrong bearer token: 401 (the same answer for both). Each process answers
for itself; in a scale-out Prometheus scrapes every web process (and every worker's metrics port).
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse
from prometheus_client.exposition import choose_encoder

from a2aconsole.core.metrics import REGISTRY
from a2aconsole.core.metrics_access import MetricsAccess
from a2aconsole.web import metrics as _families  # noqa: F401  (registers the console's families

REFUSALS = {
    404: "not found\n",
    403: "metrics are not served to this address\n",
    401: "metrics need the bearer token (Authorization: Bearer <A2ACONSOLE_METRICS_TOKEN>)\n",
}


@login_not_required
def scrape(request: HttpRequest) -> HttpResponse:
    access: MetricsAccess = settings.A2A_METRICS
    status = access.answer(request.META.get("REMOTE_ADDR"), request.headers.get("Authorization"))
    if status != 200:
        headers = {"WWW-Authenticate": 'Bearer realm="metrics"'} if status == 401 else {}
        return HttpResponse(REFUSALS[status], status=status, content_type="text/plain; charset=utf-8", headers=headers)
    encoder, content_type = choose_encoder(request.headers.get("Accept", ""))
    return HttpResponse(encoder(REGISTRY), content_type=content_type, headers={"Cache-Control": "no-store"})
