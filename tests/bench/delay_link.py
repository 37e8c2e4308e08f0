"""A loopback link with latency: a TCP proxy that holds every chunk `delay` seconds in each direction, in order.

The benches compare the tool with the bare SDK over it, as over a real network (a send's 50-500 ms, not
loopback's 3 ms). It runs in a thread with its own event loop, so its work is not the measured loop's.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float) -> None:
    """Copy `reader` to `writer`, each chunk written `delay` after it was read (a queue keeps the order)."""
    queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

    async def deliver() -> None:
        while True:
            due, data = await queue.get()
            if not data:
                break
            await asyncio.sleep(max(0.0, due - time.monotonic()))
            writer.write(data)
            await writer.drain()
        with contextlib.suppress(OSError):
            writer.write_eof()

    sender = asyncio.create_task(deliver())
    try:
        while data := await reader.read(65536):
            queue.put_nowait((time.monotonic() + delay, data))
    finally:
        queue.put_nowait((time.monotonic() + delay, b""))
        with contextlib.suppress(OSError, ConnectionError):
            await sender


class DelayLink:
    """`with DelayLink(url, delay) as link:` then talk to `link.url`: the same server, `delay` seconds away."""

    def __init__(self, url: str, delay: float) -> None:
        self._target = urlsplit(url)
        self.delay = delay
        self.url = ""
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(asyncio.start_server(self._connect, "127.0.0.1", 0))
        port = self._server.sockets[0].getsockname()[1]
        self.url = urlunsplit(self._target._replace(netloc=f"127.0.0.1:{port}"))
        self._ready.set()
        self._loop.run_forever()

    async def _connect(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        try:
            server_r, server_w = await asyncio.open_connection(self._target.hostname, self._target.port)
        except OSError:
            client_w.close()
            return
        await asyncio.gather(
            _pipe(client_r, server_w, self.delay), _pipe(server_r, client_w, self.delay), return_exceptions=True
        )
        for w in (client_w, server_w):
            w.close()

    def __enter__(self) -> DelayLink:
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    async def _close(self) -> None:
        self._server.close()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    @classmethod
    @contextlib.contextmanager
    def around(cls, url: str, delay: float) -> Iterator[str]:
        """`url` itself when `delay` is 0, else a link's URL to it."""
        if not delay:
            yield url
            return
        with cls(url, delay) as link:
            yield link.url
