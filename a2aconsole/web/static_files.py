"""The static files (CSS, htmx) served by the app itself, so one process needs no web server in front."""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.exceptions import SuspiciousOperation
from django.core.handlers.exception import response_for_exception
from django.http import HttpRequest, HttpResponseBase


class StaticFiles(ASGIStaticFilesHandler):
    """Django's handler, with a path outside the static folder (`/static/%2e%2e/...`) answered 400.

    Django's own turns only Http404 into an answer: the SuspiciousFileOperation its path check raises became
    a 500 with a traceback, for anyone, logged in or not.
    """

    async def get_response_async(self, request: HttpRequest) -> HttpResponseBase:
        try:
            return await super().get_response_async(request)
        except SuspiciousOperation as e:
            request.close()  # the request's body file, which Django's handler closes only with an answer it made
            return await sync_to_async(response_for_exception, thread_sensitive=False)(request, e)
