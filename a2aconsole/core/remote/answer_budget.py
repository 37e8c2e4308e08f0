"""The byte budget of what an agent answers: every response body from an agent is read through a
BoundedStream, which stops at the budget, so an answer of any size costs at most the budget in memory.

`bound_answers(limit)` is a response hook of the shared httpx client (`http.new_http_client`), so it
covers every call the a2a-sdk makes over it (JSON-RPC and REST bodies, each server-sent event of a stream)
and the card fetch. `errors.translate` turns its exceptions into RemoteErrors naming the agent and the call.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import httpx


class AnswerTooLarge(Exception):
    """An agent's answer (a response body, or one event of a stream) went over the byte budget: reading stopped
    there, so it never sits in memory whole. `translate` turns it into a RemoteError naming agent and call."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the answer is over {megabytes(limit)}")
        self.limit = limit


class AnswerEncoded(Exception):
    """The answer came compressed though we ask for none: its real size is unknown until it is inflated."""

    def __init__(self, encoding: str) -> None:
        super().__init__(f"the answer is compressed ({encoding})")
        self.encoding = encoding


def megabytes(n: int) -> str:
    """`15728640` -> `15 MB`, `65536` -> `0.06 MB`: a byte budget as people read it."""
    mb = n / (1024 * 1024)
    return f"{mb:.0f} MB" if mb >= 10 else f"{mb:.2g} MB" if mb >= 0.1 else f"{mb:.2f} MB"


_EVENT_END = re.compile(rb"\r\n\r\n|\n\n|\r\r")  # a blank line ends a server-sent event


class BoundedStream(httpx.AsyncByteStream):
    """A response body that raises AnswerTooLarge once more than `limit` bytes came. For a server-sent event
    stream the budget is per event (bytes between blank lines), since a subscription lives for minutes."""

    def __init__(self, inner: httpx.AsyncByteStream, limit: int, per_event: bool) -> None:
        self.inner = inner
        self.limit = limit
        self.per_event = per_event

    async def __aiter__(self) -> AsyncIterator[bytes]:
        count = 0  # bytes of the body, or of the event under way
        tail = b""  # the last bytes seen, for an event end split across chunks
        async for chunk in self.inner:
            if not self.per_event:
                count += len(chunk)
            else:
                data = tail + chunk
                start = 0
                for m in _EVENT_END.finditer(data):
                    if m.end() <= len(tail):
                        continue  # an end found with the previous chunk
                    count += m.end() - max(start, len(tail))
                    if count > self.limit:
                        raise AnswerTooLarge(self.limit)
                    count, start = 0, m.end()
                count += len(data) - max(start, len(tail))
                tail = data[-3:]
            if count > self.limit:
                raise AnswerTooLarge(self.limit)
            yield chunk

    async def aclose(self) -> None:
        """Close the body and let go of it. httpx's response and its body stream refer to each other: a cycle only
        the garbage collector frees, with the request and connection objects it holds (about 100 per call, so a
        collection of ~0.25 ms every few sends to a quick agent). Let go here, a read response is freed at once."""
        inner, self.inner = self.inner, _CLOSED
        await inner.aclose()


class _Closed(httpx.AsyncByteStream):
    """The body of a closed response: httpx reads no further (`StreamClosed`), nor does this."""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        raise httpx.StreamClosed()
        yield b""  # an async generator, as the interface is


_CLOSED = _Closed()


def bound_answers(limit: int) -> Any:
    """Response hook: every body is read through a BoundedStream; a declared length over the budget, or a
    compressed body (we ask for none; its inflated size is unknown), is refused before anything is read."""

    async def hook(response: httpx.Response) -> None:
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            raise AnswerEncoded(encoding)
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise AnswerTooLarge(limit)
        per_event = "text/event-stream" in response.headers.get("content-type", "")
        response.stream = BoundedStream(response.stream, limit, per_event)  # type: ignore[arg-type]

    return hook
