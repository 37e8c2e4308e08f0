"""The middleware that answers `/healthz`, `/readyz` and `/metrics` first, before anything else looks.

Orchestrators and Prometheus reach a container by its IP over plain HTTP: the host check
(ALLOWED_HOSTS), an HTTPS redirect or the login redirect would turn every probe away. These three
paths answer here instead, and it is safe: they read nothing from the request but its path, the
client's address and the metrics token, and they write no URL, so a forged Host header gains nothing.
It must come first in MIDDLEWARE.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from asgiref.sync import async_to_sync, iscoroutinefunction
from csp.utils import build_policy
from django.http import HttpRequest, HttpResponse
from django.utils.decorators import sync_and_async_middleware

from a2aconsole.web.views import health, metrics

PROBES: dict[str, Callable[[HttpRequest], Any]] = {
    "/healthz": health.healthz,
    "/readyz": health.readyz,
    "/metrics": metrics.scrape,
}
METHODS = ("GET", "HEAD")


def _with_policy(response: HttpResponse) -> HttpResponse:
    """The console's Content-Security-Policy on a probe's answer too (it is answered before the CSP middleware)."""
    response.headers.setdefault("Content-Security-Policy", build_policy())
    return response


def _refuse_method() -> HttpResponse:
    return HttpResponse("GET only\n", status=405, content_type="text/plain; charset=utf-8", headers={"Allow": "GET"})


@sync_and_async_middleware
def probe_middleware(get_response: Callable[[HttpRequest], Any]) -> Callable[[HttpRequest], Any]:
    if iscoroutinefunction(get_response):

        async def async_middleware(request: HttpRequest) -> HttpResponse:
            view = PROBES.get(request.path_info)
            if view is None:
                return await get_response(request)
            if request.method not in METHODS:
                return _with_policy(_refuse_method())
            if iscoroutinefunction(view):
                return _with_policy(await view(request))
            return _with_policy(view(request))  # quick and touching no database: fine on the loop

        return async_middleware

    def middleware(request: HttpRequest) -> HttpResponse:
        view = PROBES.get(request.path_info)
        if view is None:
            return get_response(request)
        if request.method not in METHODS:
            return _with_policy(_refuse_method())
        if iscoroutinefunction(view):
            return _with_policy(async_to_sync(view)(request))
        return _with_policy(view(request))

    return middleware


__all__ = ["PROBES", "probe_middleware"]
