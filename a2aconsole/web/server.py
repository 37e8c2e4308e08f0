"""daphne's server with the body cap applied while a request body arrives, before anything holds it.

Twisted spools a request body to a temp file, and daphne then reads all of it into the app's queue at once:
a 300 MB POST costs 300 MB of memory before the app sees the first byte, so an ASGI middleware is too late.
Here a declared `Content-Length` over `body_cap()` is answered 413 as soon as the headers are in, and a
chunked body as soon as it passes the cap; nothing past the cap is kept. After the answer the connection is
half-closed, the rest of the body is read and dropped for at most LINGER_SECONDS (so the client gets to
read the 413 instead of a reset), then the connection is cut.
"""

from __future__ import annotations

from io import BytesIO
from typing import Any

from daphne.http_protocol import HTTPFactory, WebRequest
from daphne.server import Server as DaphneServer
from twisted.internet import reactor

from a2aconsole.web.body_limit import body_cap, refused, too_large_body

LINGER_SECONDS = 2.0


class BoundedRequest(WebRequest):
    """daphne's HTTP request that refuses a body over the cap instead of receiving it."""

    _received = 0
    _refused = False

    def gotLength(self, length: int | None) -> None:
        self._cap = body_cap()
        if length is not None and length > self._cap:
            self.requestHeaders.removeHeader(b"Expect")  # no "100 Continue" after the 413
            self.content = BytesIO()
            self._refuse()
            return
        super().gotLength(length)

    def handleContentChunk(self, data: bytes) -> None:
        if self._refused:
            return
        self._received += len(data)
        if self._received > self._cap:
            self.content.close()  # what was spooled so far goes at once
            self.content = BytesIO()
            self._refuse()
            return
        super().handleContentChunk(data)

    def requestReceived(self, command: bytes, path: bytes, version: bytes) -> None:
        if not self._refused:  # a refused request never reaches the app
            super().requestReceived(command, path, version)

    def _refuse(self) -> None:
        self._refused = True
        channel = self.channel
        method = channel._command.decode("ascii", "replace")  # the request line is all Twisted has parsed yet
        path = channel._path.decode("ascii", "replace").partition("?")[0]
        refused(method, path, self._cap)
        body = too_large_body(self._cap)
        head = (
            b"HTTP/1.1 413 Content Too Large\r\n"
            b"Content-Type: application/json\r\n"
            b"Content-Length: %d\r\n"
            b"Connection: close\r\n\r\n" % len(body)
        )
        transport = channel.transport
        channel.dataReceived = _drop  # the rest of the body is read and dropped, never parsed or kept
        transport.write(head + body)
        transport.loseWriteConnection()
        reactor.callLater(LINGER_SECONDS, transport.abortConnection)


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
