"""The static files (CSS, htmx) served by the app itself, so one process needs no web server in front."""

from __future__ import annotations

import logging

from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.exceptions import SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase

from a2aconsole.web.process.in_loop import in_loop_chain

# The headers every console answer carries (HTTPS redirect, HSTS, nosniff, Referrer-Policy, COOP, the CSP,
# frame denial); in settings.MIDDLEWARE's order, each pure. Nothing that reads or writes a cookie.
HEADER_MIDDLEWARE = (
    "django.middleware.security.SecurityMiddleware",
    "a2aconsole.web.content_policy.StaticOnlyPolicy",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
)
TEXT = "text/plain; charset=utf-8"


class StaticFiles(ASGIStaticFilesHandler):
    """Django's handler, with the console's security headers on every answer, and its errors answered here.

    Django's own answers a missing file with the console's 404 page, whose CSRF decorator set a fresh
    `csrftoken` cookie (and none of the security headers, which come from middleware it skips); and it turned
    only Http404 into an answer: a path outside the static folder (`/static/%2e%2e/...`) raised a
    SuspiciousFileOperation, a 500 with a traceback. Here a missing file is a plain 404, a path outside a 400
    (logged as Django logs it), and no answer touches a cookie.
    """

    def __init__(self, application: object) -> None:
        super().__init__(application)
        self._answer = in_loop_chain(super().get_response_async, HEADER_MIDDLEWARE)

    async def get_response_async(self, request: HttpRequest) -> HttpResponseBase:
        return await self._answer(request)

    def serve(self, request: HttpRequest) -> HttpResponseBase:
        try:
            return super().serve(request)
        except Http404:
            response = HttpResponse("No such static file.\n", status=404, content_type=TEXT)  # not logged, as before
        except SuspiciousOperation as e:
            response = HttpResponse("Not a static file's path.\n", status=400, content_type=TEXT)
            logging.getLogger(f"django.security.{e.__class__.__name__}").error(
                str(e), extra={"status_code": 400, "request": request}
            )
        return response
