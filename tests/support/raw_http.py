"""HTTP over a bare socket, for what an HTTP client library will not send: a huge body streamed from a
generator (declared or chunked) while the answer is read, a foreign Host header, raw bytes in the path."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

BLOCK = 64 * 1024


@dataclass
class RawResponse:
    status: int
    headers: dict[str, str]
    body: bytes
    sent: int  # body bytes the server took before it answered (or cut the connection)


def _parse(data: bytes) -> tuple[int, dict[str, str], bytes] | None:
    head, sep, body = data.partition(b"\r\n\r\n")
    if not sep:
        return None
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "-1"))
    if length >= 0 and len(body) < length:
        return None
    return int(lines[0].split()[1]), headers, body[:length] if length >= 0 else body


def request(url: str, head: bytes, body: Iterable[bytes] = (), timeout: float = 30.0) -> RawResponse:
    """Send `head` (the request line and headers), then `body` block by block until the whole answer is in."""
    parts = urlsplit(url)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=timeout)
    received = bytearray()
    answered = threading.Event()

    def read() -> None:
        try:
            while chunk := sock.recv(BLOCK):
                received.extend(chunk)
                if _parse(bytes(received)) is not None:
                    break
        except OSError:
            pass
        answered.set()

    reader = threading.Thread(target=read, daemon=True)
    sent = 0
    try:
        sock.sendall(head)
        reader.start()
        for block in body:
            if answered.is_set():
                break
            try:
                sock.sendall(block)
            except OSError:  # the server cut the connection after answering
                break
            sent += len(block)
        answered.wait(timeout)
    finally:
        sock.close()
        reader.join(timeout)
    parsed = _parse(bytes(received))
    if parsed is None:
        raise AssertionError(f"no complete answer; got {bytes(received[:300])!r}")
    status, headers, data = parsed
    return RawResponse(status, headers, data, sent)


def zeros(total: int) -> Iterator[bytes]:
    """`total` bytes of JSON-ish filler, one block at a time (never all in memory)."""
    block = b" " * BLOCK
    left = total
    while left > 0:
        yield block[: min(left, BLOCK)]
        left -= BLOCK


def chunked(blocks: Iterator[bytes]) -> Iterator[bytes]:
    """The blocks in HTTP/1.1 chunked transfer coding, with the closing chunk."""
    for block in blocks:
        yield b"%x\r\n%s\r\n" % (len(block), block)
    yield b"0\r\n\r\n"
