"""Error answers under /api/: always JSON `{"error": ..., "field": ...}`, never a console page.

An agent host parses every answer as JSON, so a wrong method, a mistyped path, a refused host, a failed
CSRF check or a crash must all be JSON too. The views here answer what the API's own routes cannot
(`unknown_path`, and `methods` for a wrong method), and the error handlers, which a2aconsole/urls.py installs
as Django's, answer JSON for /api/ paths and the console's pages for every other path. Every API view is
CSRF-exempt (a host proves itself with a bearer token, never a session cookie), so no CSRF page is shown.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from asgiref.sync import iscoroutinefunction
from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import BadRequest, SuspiciousOperation
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.http.multipartparser import MultiPartParserError
from django.views import defaults
from django.views.decorators.csrf import csrf_exempt

API_PREFIX = "/api/"


def error(status: int, message: str, field: str | None = None, **headers: str) -> JsonResponse:
    """The one error shape of the API."""
    resp = JsonResponse({"error": message, "field": field}, status=status)
    for name, value in headers.items():
        resp[name.replace("_", "-")] = value
    return resp


def is_api(request: HttpRequest) -> bool:
    return request.path == API_PREFIX[:-1] or request.path.startswith(API_PREFIX)


def methods(*allowed: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Like Django's `require_http_methods`, but a refused method is a JSON 405 with the `Allow` header."""

    def decorate(view: Callable[..., Any]) -> Callable[..., Any]:
        def refuse(request: HttpRequest) -> JsonResponse:
            return error(
                405, f"{request.method} is not allowed here; use {' or '.join(allowed)}", Allow=", ".join(allowed)
            )

        if iscoroutinefunction(view):

            @wraps(view)
            async def async_wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
                if request.method not in allowed:
                    return refuse(request)
                return await view(request, *args, **kwargs)

            return async_wrapper

        @wraps(view)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if request.method not in allowed:
                return refuse(request)
            return view(request, *args, **kwargs)

        return wrapper

    return decorate


@csrf_exempt
@login_not_required
def unknown_path(request: HttpRequest, rest: str = "") -> JsonResponse:
    """Any path under /api/ the API has no route for."""
    return error(404, "no such API path; see /api/v1/openapi.json")


def _page(view: Callable[..., HttpResponse], request: HttpRequest, *args: Any) -> HttpResponse:
    """The console's error page. Django's error views check the CSRF token first, which parses the request's body:
    a broken form body (a multipart one without a boundary, too many fields) would turn any 404 into a 500."""
    try:
        return view(request, *args)
    except (MultiPartParserError, BadRequest, SuspiciousOperation):
        return HttpResponseBadRequest("<!doctype html><title>Bad request</title><h1>Bad request (400)</h1>")


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if is_api(request):
        return error(400, "bad request")
    return _page(defaults.bad_request, request, exception)


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if is_api(request):
        return error(403, "forbidden")
    return _page(defaults.permission_denied, request, exception)


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if is_api(request):
        return error(404, "no such API path; see /api/v1/openapi.json")
    return _page(defaults.page_not_found, request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    if is_api(request):
        return error(500, "the console failed on this call; try again, or ask the owner to check the server log")
    return _page(defaults.server_error, request)
