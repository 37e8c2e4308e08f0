"""daphne's server with the body cap applied while a request body arrives, before anything holds it.

Twisted spools a request body to a temp file, and daphne then reads all of it into the app's queue at once:
a 300 MB POST costs 300 MB of memory before the app sees the first byte, so an ASGI middleware is too late.
Here a declared `Content-Length` over `body_cap()` is answered 413 as soon as the headers are in, and a
chunked body as soon as it passes the cap; nothing past the cap is kept. A push with a body worth receiving
(chunked, or over EARLY_CHECK_BYTES) without the token of the watch it names is answered 404 when its
headers are in, so a stranger cannot make the console take in even a capped body. After such an answer the
connection is half-closed, the rest of the body is read and dropped for at most LINGER_SECONDS (so the
client gets to read the answer instead of a reset), then the connection is cut.
"""

from __future__ import annotations

import json
import logging
from io import BytesIO
from typing import Any
from urllib.parse import unquote

from daphne.http_protocol import HTTPFactory, WebRequest
from daphne.server import Server as DaphneServer
from twisted.internet import reactor

from a2aconsole.web.process.body_limit import body_cap, refused, too_large_body
from a2aconsole.web.views.push import NO_SUCH_WATCH, refused_before_body

log = logging.getLogger(__name__)

LINGER_SECONDS = 2.0
EARLY_CHECK_BYTES = 64 * 1024  # a push with a body over this (or chunked) is checked before the body arrives


class BoundedRequest(WebRequest):
    """daphne's HTTP request that refuses a body over the cap instead of receiving it, and a stranger's push
    with a body worth receiving before it arrives."""

    _received = 0
    _refused = False

    def gotLength(self, length: int | None) -> None:
        self._cap = body_cap()
        if length is not None and length > self._cap:
            self._refuse_before_body(413, b"Content Too Large", too_large_body(self._cap))
            refused(*self._request_line(), self._cap)
            return
        if (length is None or length > EARLY_CHECK_BYTES) and self._stranger_push():
            self._refuse_before_body(404, b"Not Found", json.dumps(NO_SUCH_WATCH).encode())
            return
        super().gotLength(length)

    def _stranger_push(self) -> bool:
        try:
            return refused_before_body(*self._request_line(), _headers(self))
        except Exception:  # a bug here must not drop the connection: the app checks the push again anyway
            log.exception("checking a push before its body failed")
            return False

    def handleContentChunk(self, data: bytes) -> None:
        if self._refused:
            return
        self._received += len(data)
        if self._received > self._cap:
            self.content.close()  # what was spooled so far goes at once
            self.content = BytesIO()
            self._answer(413, b"Content Too Large", too_large_body(self._cap))
            refused(*self._request_line(), self._cap)
            return
        super().handleContentChunk(data)

    def requestReceived(self, command: bytes, path: bytes, version: bytes) -> None:
        if not self._refused:  # a refused request never reaches the app
            super().requestReceived(command, path, version)

    def _request_line(self) -> tuple[str, str]:
        """The method and the decoded path. Before the body is in, only Twisted's channel has them (it keeps
        the request line in `_command` and `_path` until then); the tests of the cap fail if that changes."""
        channel = self.channel
        path = channel._path.partition(b"?")[0].decode("ascii", "replace")
        return channel._command.decode("ascii", "replace"), unquote(path)

    def _refuse_before_body(self, status: int, reason: bytes, body: bytes) -> None:
        self.requestHeaders.removeHeader(b"Expect")  # no "100 Continue" after the answer
        self.content = BytesIO()
        self._answer(status, reason, body)

    def _answer(self, status: int, reason: bytes, body: bytes) -> None:
        """Answer at once and close: the rest of the body is read and dropped, never parsed or kept."""
        self._refused = True
        head = (
            b"HTTP/1.1 %d %s\r\n"
            b"Content-Type: application/json\r\n"
            b"Content-Length: %d\r\n"
            b"Connection: close\r\n\r\n" % (status, reason, len(body))
        )
        channel = self.channel
        transport = channel.transport
        channel.dataReceived = _drop
        transport.write(head + body)
        transport.loseWriteConnection()
        reactor.callLater(LINGER_SECONDS, transport.abortConnection)


def _headers(request: WebRequest) -> dict[str, str]:
    """The request's headers by lower-case name (the last of repeated ones)."""
    return {
        name.decode("latin-1").lower(): values[-1].decode("latin-1")
        for name, values in request.requestHeaders.getAllRawHeaders()
    }


def _drop(data: bytes) -> None:
    return None


class BoundedHTTPFactory(HTTPFactory):
    def buildProtocol(self, addr: Any) -> Any:
        protocol = super().buildProtocol(addr)
        protocol.requestFactory = BoundedRequest
        return protocol


class Server(DaphneServer):
    """daphne's `Server` whose HTTP connections make `BoundedRequest`s."""

    @property
    def http_factory(self) -> HTTPFactory:
        return self._http_factory

    @http_factory.setter
    def http_factory(self, factory: HTTPFactory) -> None:
        # daphne's run() builds its HTTPFactory itself, with no option for the request class: take ours instead
        self._http_factory = BoundedHTTPFactory(self)
