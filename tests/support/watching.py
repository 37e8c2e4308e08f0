"""Helpers for watch tests: start a real remote task, write its record, a delivery that can be waited on,
and a loopback push receiver that hands each POST to `registry.on_push` over the real wire."""

from __future__ import annotations

import asyncio
import socket
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import uvicorn

from a2aconsole.core.client import Remote, outgoing_message
from a2aconsole.core.clock import Clock, FakeClock
from a2aconsole.core.delivery import StaticDelivery
from a2aconsole.core.events import Event, MemorySink
from a2aconsole.core.pending import WatchRecord
from a2aconsole.core.snapshots import TaskSnapshot
from a2aconsole.core.workspace import Workspace


class Signal:
    """A condition a test awaits (with a deadline) and the code under test pokes: no sleeps, no polling."""

    def __init__(self) -> None:
        self._event: asyncio.Event | None = None

    def poke(self) -> None:
        if self._event is not None:
            self._event.set()

    async def until(self, check: Callable[[], bool], timeout: float = 15.0, what: str = "condition") -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not check():
            self._event = asyncio.Event()
            try:
                await asyncio.wait_for(self._event.wait(), deadline - loop.time())
            except TimeoutError:
                raise TimeoutError(f"timed out waiting for {what}") from None


class SignalClock(FakeClock):
    """A FakeClock a test can wait on: `await clock.until(lambda sleeps: ...)` wakes on every new sleep."""

    def __init__(self) -> None:
        super().__init__()
        self.signal = Signal()

    async def sleep(self, seconds: float) -> None:
        asyncio.get_running_loop().call_soon(self.signal.poke)  # runs once this sleep is registered
        await super().sleep(seconds)

    async def until(self, check: Callable[[list[float]], bool], timeout: float = 15.0) -> None:
        try:
            await self.signal.until(lambda: check(self.sleeps), timeout, "sleeps")
        except TimeoutError:
            raise TimeoutError(f"timed out waiting for matching sleeps; have {self.sleeps}") from None


class WaitableDelivery(StaticDelivery):
    """StaticDelivery whose deliveries a test can await; `available` can be flipped to simulate no session."""

    def __init__(self, workspaces: dict[str, Workspace], *, available: bool = True) -> None:
        super().__init__(workspaces, available=available)
        self.attempts = 0
        self.signal = Signal()
        self.sink: WaitableSink | None = None

    async def deliver(self, target: str, text: str, record: WatchRecord | None = None) -> bool:
        self.attempts += 1
        try:
            return await super().deliver(target, text, record)
        finally:
            self.signal.poke()

    async def wait_for(self, count: int, timeout: float = 15.0) -> list[tuple[str, str]]:
        """Wait for `count` deliveries, and (with `sink` set) for each to be settled in pending.json."""
        await self.signal.until(lambda: len(self.delivered) >= count, timeout, f"{count} deliveries")
        if self.sink is not None:
            sink = self.sink
            await sink.until(lambda: sink.kinds().count("delivered") >= count, timeout, f"{count} settled")
        return self.delivered

    async def wait_attempts(self, count: int, timeout: float = 15.0) -> None:
        await self.signal.until(lambda: self.attempts >= count, timeout, f"{count} delivery attempts")


class WaitableSink(MemorySink):
    """Events in a list, awaitable: `await sink.until(lambda: ...)`."""

    def __init__(self) -> None:
        super().__init__()
        self.signal = Signal()

    async def emit(self, event: Event) -> None:
        await super().emit(event)
        self.signal.poke()

    async def until(self, check: Callable[[], bool], timeout: float = 15.0, what: str = "events") -> None:
        await self.signal.until(check, timeout, what)

    def states(self) -> list[str]:
        return [e.state for e in self.events if e.kind == "state"]


async def start_task(remote: Remote, ws: Workspace, agent: str, text: str) -> TaskSnapshot:
    """Send `text` to the workspace's agent with returnImmediately: the running task."""
    entry = ws.read_agents().get(agent)
    assert entry is not None
    conn = await remote.connect(entry)
    task = await conn.send(outgoing_message(text, [], "", "", {}))
    assert isinstance(task, TaskSnapshot)
    return task


async def add_record(
    ws: Workspace,
    task: TaskSnapshot,
    agent: str,
    clock: Clock,
    *,
    target: str = "chat1",
    source: str = "poll",
    **kw: Any,
) -> WatchRecord:
    """Write a watch record for the task to pending.json (as the tool does before arming)."""
    rec = WatchRecord(
        watch_id=uuid.uuid4().hex,
        target=target,
        agent=agent,
        task_id=task.id,
        context_id=task.context_id,
        started_at=clock.now().isoformat(),
        source=source,
        **kw,
    )
    async with ws.pending_tx() as tx:
        tx.records.append(rec)
    return rec


class LoopbackServer:
    """An ASGI app served by uvicorn on 127.0.0.1 inside the test's own loop (so it shares the loop's runtime)."""

    def __init__(self, app: Any) -> None:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # accepted connections inherit it: no Nagle wait between a response's head and body (40 ms a request)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind(("127.0.0.1", 0))
        self._sock = sock
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        self._server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off", interface="asgi3"))
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> LoopbackServer:
        self._task = asyncio.ensure_future(self._server.serve(sockets=[self._sock]))
        while not self._server.started:  # uvicorn offers no start event; bounded by the test timeout
            if self._task.done():
                await self._task
            await asyncio.sleep(0.01)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._server.should_exit = True
        if self._task is not None:
            await self._task
        self._sock.close()


class PushReceiver(LoopbackServer):
    """A loopback HTTP server in the test's loop: POST /a2a/push/<id> -> `handler(id, token, body)`."""

    def __init__(self, handler: Callable[[str, str | None, bytes], Awaitable[str]]) -> None:
        super().__init__(self._app)
        self.handler = handler
        self.results: list[str] = []

    async def _app(self, scope: Any, receive: Any, send: Any) -> None:
        assert scope["type"] == "http"
        body, more = b"", True
        while more:
            msg = await receive()
            body += msg.get("body", b"")
            more = msg.get("more_body", False)
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        token = headers.get("x-a2a-notification-token")
        watch_id = scope["path"].rsplit("/", 1)[-1]
        result = await self.handler(watch_id, token, body)
        self.results.append(result)
        status = {"ok": 200, "not_found": 404}.get(result, 400)
        await send({"type": "http.response.start", "status": status, "headers": []})
        await send({"type": "http.response.body", "body": b""})


async def eventually(check: Callable[[], bool], timeout: float = 15.0, what: str = "condition") -> None:
    """Bounded polling for state owned by another thread or process (a test agent, a child process)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        if loop.time() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)
