"""Classic middleware run in the event loop, for the handlers that answer without the console's full stack
(the API and push receiver, the static files): Django would run each hook through `sync_to_async`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from asgiref.sync import markcoroutinefunction
from django.core.handlers.exception import convert_exception_to_response
from django.http import HttpRequest, HttpResponseBase
from django.utils.module_loading import import_string

Handler = Callable[[HttpRequest], Awaitable[HttpResponseBase]]


class InLoop:
    """A classic middleware whose hooks run in the event loop rather than through `sync_to_async`. Its hooks
    must be pure: no database, no blocking I/O."""

    def __init__(self, get_response: Handler, path: str) -> None:
        self.get_response = get_response
        self.inner: Any = import_string(path)(get_response)
        assert not any(hasattr(self.inner, h) for h in ("process_view", "process_exception")), path
        markcoroutinefunction(self)

    async def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.inner.process_request(request) if hasattr(self.inner, "process_request") else None
        response = response or await self.get_response(request)
        if hasattr(self.inner, "process_response"):
            response = self.inner.process_response(request, response)
        return response


def in_loop_chain(handler: Handler, middleware: Iterable[str]) -> Handler:
    """`handler` wrapped in `middleware` (in settings.MIDDLEWARE's order), an exception in any turned into its
    error answer as Django's own chain does."""
    chain = convert_exception_to_response(handler)
    for path in reversed(list(middleware)):
        chain = convert_exception_to_response(InLoop(chain, path))
    return chain
