"""Helpers for watch tests: start a real remote task, write its record, a delivery and an event sink that can be
waited on, and a loopback push receiver that hands each POST to `registry.on_push` over the real wire.

`eventually` is the tests' one bounded wait: every loop that waits for a state goes through it, so a state that
never comes fails with `TimeoutError: timed out waiting for <what> ...` and what was last seen."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import socket
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import uvicorn

from a2aconsole.core import pending
from a2aconsole.core.clock import Clock
from a2aconsole.core.events import Event, EventSink, MemorySink
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.pending.records import WatchRecord
from a2aconsole.core.remote.client import Remote
from a2aconsole.core.remote.convert import outgoing_message
from a2aconsole.core.remote.values import TaskSnapshot
from a2aconsole.core.watches.delivery import StaticDelivery
from tests.support.clock import FakeClock

POLL_SECONDS = 0.02  # between checks of state another thread or process owns (nothing pokes a Signal there)
SHOWN_CHARS = 500  # of what was last seen, in a timeout's message


class Signal:
    """What the code under test pokes when something changed, so `eventually(..., signal=...)` checks again
    then instead of polling. Everyone waiting at a poke wakes."""

    def __init__(self) -> None:
        self._event: asyncio.Event | None = None

    def poke(self) -> None:
        if self._event is not None:
            self._event.set()

    def arm(self) -> asyncio.Event:
        """The event the next poke sets: armed before a check, so a poke during the check is not missed."""
        if self._event is None or self._event.is_set():
            self._event = asyncio.Event()
        return self._event


def describe(check: Callable[..., Any]) -> str:
    """A check in words for a timeout message: a lambda's own text (`len(agent.finished) == 1`), else its name."""
    try:
        source = " ".join(line.strip() for line in inspect.getsource(check).splitlines())
    except (OSError, TypeError):
        return getattr(check, "__name__", repr(check))
    start = source.find("lambda")
    if check.__name__ != "<lambda>" or start < 0:
        return check.__name__
    body = source[source.index(":", start) + 1 :].lstrip()
    depth, quote = 0, ""
    for i, ch in enumerate(body):  # the lambda's body ends at a comma or bracket its own text does not open
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}" or (ch == "," and depth == 0):
            if depth == 0:
                return body[:i].strip()
            depth -= 1
    return body.strip()


async def eventually(
    check: Callable[[], Any],
    *,
    what: str | None = None,
    timeout: float = 15.0,
    seen: Callable[[], Any] | None = None,
    signal: Signal | None = None,
) -> Any:
    """Wait until `check()` (sync or async) is true, and return its value; never longer than `timeout` seconds.

    With `signal`, check again each time the code under test pokes it; without, every POLL_SECONDS (for state
    another thread or process owns: a test agent, a child process). An async check counts against the same
    deadline. When it passes: `TimeoutError: timed out waiting for <what> (N s); last seen: ...`, where `what`
    defaults to the check's own text and the last seen is `seen()` or the check's last value when it says more
    than False."""
    loop = asyncio.get_running_loop()
    last: Any = None
    try:
        async with asyncio.timeout_at(loop.time() + timeout) as bound:
            while True:
                woken = signal.arm() if signal is not None else None
                result = check()
                last = (await result) if inspect.isawaitable(result) else result
                if last:
                    return last
                if woken is not None:
                    await woken.wait()
                else:
                    await asyncio.sleep(POLL_SECONDS)
    except TimeoutError:
        if not bound.expired():
            raise
        shown = seen() if seen is not None else last
        detail = "" if shown is None or shown is False else f"; last seen: {str(shown)[:SHOWN_CHARS]}"
        raise TimeoutError(f"timed out waiting for {what or describe(check)} ({timeout:g} s){detail}") from None


class SignalClock(FakeClock):
    """A FakeClock a test can wait on: `await clock.until(lambda sleeps: ...)` wakes on every new sleep."""

    def __init__(self) -> None:
        super().__init__()
        self.signal = Signal()

    async def sleep(self, seconds: float) -> None:
        asyncio.get_running_loop().call_soon(self.signal.poke)  # runs once this sleep is registered
        await super().sleep(seconds)

    async def until(self, check: Callable[[list[float]], bool], timeout: float = 15.0) -> None:
        await eventually(
            lambda: check(self.sleeps),
            what=f"sleeps where {describe(check)}",
            timeout=timeout,
            seen=lambda: self.sleeps,
            signal=self.signal,
        )


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
        await eventually(
            lambda: len(self.delivered) >= count,
            what=f"{count} deliveries",
            timeout=timeout,
            seen=lambda: self.delivered,
            signal=self.signal,
        )
        if self.sink is not None:
            await self.sink.until_kind("delivered", count, timeout)
        return self.delivered

    async def wait_attempts(self, count: int, timeout: float = 15.0) -> None:
        await eventually(
            lambda: self.attempts >= count,
            what=f"{count} delivery attempts",
            timeout=timeout,
            seen=lambda: f"{self.attempts} attempts",
            signal=self.signal,
        )


class WaitableSink(MemorySink):
    """The tests' one event sink: events in a list, awaitable (`await sink.until(lambda: ...)`).

    With `inner` (e.g. the console's ChannelsBroadcast: TaskEvent rows, live updates) each event goes there first,
    so a test that waits for an event also waits for the real sink to have handled it."""

    def __init__(self, inner: EventSink | None = None) -> None:
        super().__init__()
        self.inner = inner
        self.signal = Signal()

    async def emit(self, event: Event) -> None:
        if self.inner is not None:
            await self.inner.emit(event)
        await super().emit(event)
        self.signal.poke()

    async def until(self, check: Callable[[], Any], timeout: float = 15.0, what: str | None = None) -> None:
        await eventually(check, what=what, timeout=timeout, seen=self.kinds, signal=self.signal)

    async def until_kind(self, kind: str, count: int = 1, timeout: float = 15.0) -> None:
        """Wait for `count` events of `kind`."""
        await self.until(lambda: self.kinds().count(kind) >= count, timeout, f"{count} {kind} event(s)")

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
    async with pending.transaction(ws) as tx:
        tx.add(rec)
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
        task = self._task = asyncio.ensure_future(self._server.serve(sockets=[self._sock]))
        # uvicorn offers no start event; a serve that ended (it could not start) raises its error here
        await eventually(lambda: self._server.started or task.done(), what=f"uvicorn to serve {self.url}")
        if task.done():
            await task
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


async def settled_at_agent(conn: Any, task_id: str, state: str, timeout: float = 15.0) -> None:
    """Wait until the agent itself (GetTask over `conn`) reports `state` for the task: it works in its own thread."""

    async def now() -> str:
        return (await conn.get_task(task_id)).state

    async def reached() -> bool:
        return await now() == state

    await eventually(reached, what=f"task {task_id} to be {state} at the agent", timeout=timeout)


@contextlib.asynccontextmanager
async def push_watched(
    agent: Any, workspace: Workspace, remote: Remote, clock: Clock, registry_for: Callable[..., Any], text: str
) -> AsyncIterator[tuple[Any, Any, Any, TaskSnapshot]]:
    """A task of `agent` (as "bot") followed by push into a PushReceiver, its first check done: the registry, its
    delivery and sink, and the task; the receiver serves until the block ends."""
    workspace.save_agents([{"name": "bot", "url": agent.url}], None)
    holder: list[Any] = []
    async with PushReceiver(lambda *a: holder[0].on_push(*a)) as receiver:
        reg, delivery, sink = registry_for(workspace, push_base_url=receiver.url)
        holder.append(reg)
        task = await start_task(remote, workspace, "bot", text)
        await reg.arm(workspace, await add_record(workspace, task, "bot", clock, source="poll"))
        await sink.until(lambda: "working" in sink.states(), what="the first check")
        assert pending.read(workspace).records[0].source == "push"
        yield reg, delivery, sink, task
