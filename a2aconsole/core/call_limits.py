"""How many remote calls the watches make at once, per agent and in all, and how many streams they hold open.

Ten thousand watches restored together would otherwise ask at once: every one creates its push config or
opens its stream, and the shared httpx pool spends its time matching thousands of queued requests to its
connections (a profile of such a restore: 87% of the CPU in that bookkeeping, no page answered). Every call a
watch makes (create push config, open a stream, GetTask, remove push config) takes a slot of its agent and a
slot of the process first; the rest wait their turn, first come first served.

Open streams (SubscribeToTask) hold a connection each for minutes: a watch takes a stream slot for as long as
it subscribes, and one that finds none left polls instead. The shared client's pool is sized from these
numbers (`client.new_http_client`), so open streams never take the connections the calls need.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Iterator
from typing import TypeVar

log = logging.getLogger(__name__)

CALLS_PER_AGENT = 8
CALLS_TOTAL = 16
STREAMS_PER_AGENT = 50
STREAMS_TOTAL = 100

T = TypeVar("T")


class CallLimits:
    """Slots for the watches' remote calls and open streams; an agent is named by a key (its URL's origin)."""

    def __init__(
        self,
        calls_per_agent: int = CALLS_PER_AGENT,
        calls_total: int = CALLS_TOTAL,
        streams_per_agent: int = STREAMS_PER_AGENT,
        streams_total: int = STREAMS_TOTAL,
    ) -> None:
        self.calls_per_agent = calls_per_agent
        self.streams_per_agent = streams_per_agent
        self.streams_total = streams_total
        self._total = asyncio.Semaphore(calls_total)
        self._agents: dict[str, asyncio.Semaphore] = {}
        self._streams: dict[str, int] = {}
        self._open = 0
        self.waiting = 0  # calls queued for a slot now (the restore arms more watches only while few wait)
        self._room: list[tuple[int, asyncio.Future[None]]] = []
        self._refusing = False

    @contextlib.asynccontextmanager
    async def call(self, agent: str) -> AsyncIterator[None]:
        """Hold a slot of `agent` and one of the process for one remote call. The agent's slot is taken first,
        so calls queued for a slow agent hold none of the process's slots while they wait."""
        own = self._agents.get(agent)
        if own is None:
            own = self._agents[agent] = asyncio.Semaphore(self.calls_per_agent)
        self.waiting += 1
        queued = True
        try:
            async with own, self._total:
                queued = False
                self._dequeue()
                yield
        finally:
            if queued:  # cancelled while waiting
                self._dequeue()

    def _dequeue(self) -> None:
        """One call left the queue: wake whoever waits for room."""
        self.waiting -= 1
        ready = [e for e in self._room if self.waiting <= e[0]]
        for entry in ready:
            self._room.remove(entry)
            if not entry[1].done():
                entry[1].set_result(None)

    async def room(self, backlog: int) -> None:
        """Return once no more than `backlog` calls wait for a slot."""
        while self.waiting > backlog:
            fut = asyncio.get_running_loop().create_future()
            entry = (backlog, fut)
            self._room.append(entry)
            try:
                await fut
            finally:
                if entry in self._room:
                    self._room.remove(entry)

    async def opening(self, agent: str, events: AsyncIterator[T]) -> AsyncIterator[T]:
        """A stream whose opening (the request until its first event) holds a call slot; the rest does not."""
        async with contextlib.aclosing(events):  # type: ignore[type-var]
            async with self.call(agent):
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
