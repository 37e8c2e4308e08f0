"""How many remote calls the watches make at once, per agent and in all, and how many streams they hold open.

Ten thousand watches restored together would otherwise ask at once: every one creates its push config or
opens its stream, and the shared httpx pool spends its time matching thousands of queued requests to its
connections (a profile of such a restore: 87% of the CPU in that bookkeeping, no page answered). Every call a
watch makes (create push config, open a stream, GetTask, remove push config) takes a slot of its agent and a
slot of the process first; the rest wait their turn, first come first served.

An agent's slots follow the process's load: calls to an agent far away spend their time waiting for its answer,
and 8 at once keep a restore fast; calls to one close by (loopback) spend it in this process, where 8 at once
only queue work in front of the pages sharing the loop (and cost more CPU per call than 2 or 3 at once). So while
the process uses more than half a CPU and an agent's calls take under 20 ms on average (it is close by), its
slots halve (to 2 at the least) every 0.1 s; they grow back by one while not. (A first version shrank them while
calls took much longer than the agent's quickest, as TCP Vegas does: it read an agent's steady 40 ms delayed ACK
as congestion, and polled 4 times slower.)

A watch's first call goes before routine checks (a restored watch's task may have ended while no worker ran; a
poll that is due can wait a little), and while calls queue, the watches leave the process some CPU for its
pages (`CpuShare`).

Open streams (SubscribeToTask) hold a connection each for minutes: a watch takes a stream slot for as long as
it subscribes, and one that finds none left polls instead. The shared client's pool is sized from these
numbers (`http.new_http_client`), so open streams never take the connections the calls need.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections import deque
from collections.abc import AsyncIterator, Iterator
from typing import TypeVar

log = logging.getLogger(__name__)

CALLS_PER_AGENT = 8
CALLS_TOTAL = 16
# every ADJUST_EVERY seconds an agent's slots halve (to FEWEST) while the process used over BUSY of a CPU and
# the agent's calls are QUICK (close by: their time is this process's work), else they grow by one
ADJUST_EVERY = 0.1
FEWEST = 2
BUSY = 0.5
QUICK = 0.02
# the watches' calls start only while the process used under CPU_SHARE of a CPU over the last CPU_WINDOW seconds
CPU_SHARE = 0.85
CPU_WINDOW = 0.1
BULK = 32  # calls queued at once: bulk work (a restore, a wave of polls), not one chat's watches
STREAMS_PER_AGENT = 50
STREAMS_TOTAL = 100

T = TypeVar("T")


class Slots:
    """At most `size` holders at once; waiters are served first come first served, a watch's first call (`first`:
    it has not reached its agent since it was armed or restored) before the others. With `most` given, the size
    follows the process's load (`adjust`): fewer slots while the process is busy, as the calls' time then goes to
    work in this process, and more at once would only queue more of it in front of the pages sharing the loop;
    all of them while it is not, as the time then goes to waiting for the agent."""

    def __init__(self, most: int) -> None:
        self.most = most
        self.size = float(most)
        self.held = 0
        self._queues: tuple[deque[asyncio.Future[None]], deque[asyncio.Future[None]]] = (deque(), deque())
        self._adjusted = -math.inf
        self.average: float | None = None

    @contextlib.asynccontextmanager
    async def hold(self, first: bool = False) -> AsyncIterator[None]:
        await self._acquire(self._queues[0 if first else 1])
        try:
            yield
        finally:
            self.held -= 1
            self._grant()

    async def _acquire(self, queue: deque[asyncio.Future[None]]) -> None:
        if self.held < int(self.size) and not any(self._queues):
            self.held += 1
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        queue.append(fut)
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():  # granted, then cancelled before it ran: pass the slot on
                self.held -= 1
                self._grant()
            elif fut in queue:
                queue.remove(fut)
            raise

    def _grant(self) -> None:
        for queue in self._queues:
            while queue and self.held < int(self.size):
                fut = queue.popleft()
                if not fut.done():
                    self.held += 1
                    fut.set_result(None)

    def adjust(self, busy: bool, took: float, now: float) -> None:
        """A call took `took` seconds. Every ADJUST_EVERY: half the slots (FEWEST at the least) while the process
        is `busy` and calls are QUICK on average, else one more."""
        self.average = took if self.average is None else self.average * 0.9 + took * 0.1
        if now - self._adjusted < ADJUST_EVERY:
            return
        self._adjusted = now
        if busy and self.average < QUICK:
            self.size = max(float(min(FEWEST, self.most)), self.size / 2)
        elif self.size < self.most:
            self.size += 1
            self._grant()


class CpuShare:
    """How much CPU the process used lately (all its threads: the pages' too), measured every CPU_WINDOW."""

    def __init__(self, share: float = CPU_SHARE) -> None:
        self.share = share
        self.used = 0.0
        # first read at the first question: the process's CPU clock sums every thread's (a slow call under load),
        # and a send makes limits it hardly ever asks
        self._mark: tuple[float, float] | None = None

    def over(self) -> bool:
        """Whether the process used more than its share in the last window measured."""
        now = time.monotonic()
        if self._mark is None:
            self._mark = (now, time.process_time())
        began, cpu_then = self._mark
        if now - began >= CPU_WINDOW:  # the process's CPU clock is a slower call: read once a window
            cpu = time.process_time()
            self.used = (cpu - cpu_then) / (now - began)
            self._mark = (now, cpu)
        return self.used > self.share

    def pause(self) -> float:
        """0 while the process used no more than its share; else the seconds until the next measure."""
        if not self.over():
            return 0.0
        assert self._mark is not None
        return max(0.0, self._mark[0] + CPU_WINDOW - time.monotonic())


class CallLimits:
    """Slots for the watches' remote calls and open streams; an agent is named by a key (its URL's origin)."""

    def __init__(
        self,
        calls_per_agent: int = CALLS_PER_AGENT,
        calls_total: int = CALLS_TOTAL,
        streams_per_agent: int = STREAMS_PER_AGENT,
        streams_total: int = STREAMS_TOTAL,
        cpu_share: float = CPU_SHARE,
        busy_share: float = BUSY,
    ) -> None:
        self.calls_per_agent = calls_per_agent
        self.streams_per_agent = streams_per_agent
        self.streams_total = streams_total
        self._total = Slots(calls_total)
        self.cpu = CpuShare(cpu_share)
        self.busy_share = busy_share
        self._agents: dict[str, Slots] = {}
        self._streams: dict[str, int] = {}
        self._open = 0
        self.waiting = 0  # calls queued for a slot now
        self.waiting_first = 0  # of which first calls (the restore arms more watches only while few wait)
        self._room: list[tuple[int, asyncio.Future[None]]] = []
        self._refusing = False

    @contextlib.asynccontextmanager
    async def call(self, agent: str, *, first: bool = False) -> AsyncIterator[None]:
        """Hold a slot of `agent` and one of the process for one remote call. The agent's slot is taken first,
        so calls queued for a slow agent hold none of the process's slots while they wait. A watch's `first`
        call goes before the others (a restored watch whose task may have ended goes before a routine poll).
        While BULK calls queue and the process used more than its CPU share lately, a call waits up to CPU_WINDOW
        before it starts, so pages served meanwhile get the CPU."""
        own = self._agents.get(agent)
        if own is None:
            own = self._agents[agent] = Slots(self.calls_per_agent)
        self.waiting += 1
        self.waiting_first += first
        queued = True
        try:
            async with own.hold(first), self._total.hold(first):
                queued = False
                self._dequeue(first)
                pause = self.cpu.pause() if self.waiting >= BULK else 0.0
                if pause:
                    await asyncio.sleep(pause)
                began = time.monotonic()
                yield
                now = time.monotonic()
                own.adjust(self.cpu.over() or self.cpu.used > self.busy_share, now - began, now)
        finally:
            if queued:  # cancelled while waiting
                self._dequeue(first)

    def _dequeue(self, first: bool) -> None:
        """One call left the queue: wake whoever waits for room."""
        self.waiting -= 1
        self.waiting_first -= first
        ready = [e for e in self._room if self.waiting_first <= e[0]]
        for entry in ready:
            self._room.remove(entry)
            if not entry[1].done():
                entry[1].set_result(None)

    async def room(self, backlog: int) -> None:
        """Return once no more than `backlog` first calls wait for a slot."""
        while self.waiting_first > backlog:
            fut = asyncio.get_running_loop().create_future()
            entry = (backlog, fut)
            self._room.append(entry)
            try:
                await fut
            finally:
                if entry in self._room:
                    self._room.remove(entry)

    async def opening(self, agent: str, events: AsyncIterator[T], *, first: bool = False) -> AsyncIterator[T]:
        """A stream whose opening (the request until its first event) holds a call slot; the rest does not."""
        async with contextlib.aclosing(events):  # type: ignore[type-var]
            async with self.call(agent, first=first):
                try:
                    first = await anext(events)
                except StopAsyncIteration:
                    return
            yield first
            async for ev in events:
                yield ev

    def stream(self, agent: str) -> contextlib.AbstractContextManager[None] | None:
        """A stream slot of `agent`, held while the `with` block runs; None when every slot is taken (the
        watch polls instead)."""
        held = self._streams.get(agent, 0)
        if held >= self.streams_per_agent or self._open >= self.streams_total:
            if not self._refusing:
                self._refusing = True
                log.warning(
                    "open streams at their limit (%d per agent, %d in all): further subscribe watches poll instead",
                    self.streams_per_agent,
                    self.streams_total,
                )
            return None
        self._streams[agent] = held + 1
        self._open += 1
        return self._holding(agent)

    @contextlib.contextmanager
    def _holding(self, agent: str) -> Iterator[None]:
        try:
            yield
        finally:
            self._streams[agent] -= 1
            self._open -= 1
            self._refusing = False

    @property
    def open_streams(self) -> int:
        return self._open
