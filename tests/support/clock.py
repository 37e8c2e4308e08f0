"""The fake clock of the tests: time moves only when a test says so, and a timeout on it fires then."""

from __future__ import annotations

import asyncio
import heapq
import itertools
from contextlib import AbstractAsyncContextManager
from datetime import UTC, datetime, timedelta
from typing import Any


class FakeClock:
    """A clock that only moves when a test calls `advance`; sleepers wake in deadline order.

    `sleeping` counts the coroutines currently asleep, so a test can wait until the code under test
    has reached its next sleep (`await clock.wait_for_sleepers(n)`) before advancing.
    """

    def __init__(self, start: datetime | None = None) -> None:
        self._wall = start or datetime(2026, 1, 1, tzinfo=UTC)
        self._mono = 0.0
        self._heap: list[tuple[float, int, asyncio.Future[None]]] = []
        self._seq = itertools.count()
        self._changed: asyncio.Event | None = None
        self.sleeps: list[float] = []

    def now(self) -> datetime:
        return self._wall + timedelta(seconds=self._mono)

    def monotonic(self) -> float:
        return self._mono

    @property
    def sleeping(self) -> int:
        return sum(1 for _, _, f in self._heap if not f.done())

    def _notify(self) -> None:
        if self._changed is not None:
            self._changed.set()

    async def sleep(self, seconds: float) -> None:
        seconds = max(0.0, seconds)
        self.sleeps.append(seconds)
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._heap, (self._mono + seconds, next(self._seq), fut))
        self._notify()
        try:
            await fut
        finally:
            if not fut.done():
                fut.cancel()

    async def wait_for_sleepers(self, count: int, timeout: float = 10.0) -> None:
        """Wait (in real time, bounded) until at least `count` coroutines sleep on this clock."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self.sleeping < count:
            self._changed = asyncio.Event()
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise TimeoutError(f"expected {count} sleepers, have {self.sleeping}")
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except TimeoutError:
                continue

    async def advance(self, seconds: float) -> None:
        """Move time forward, waking every sleeper whose deadline passed, in order."""
        target = self._mono + seconds
        while self._heap and self._heap[0][0] <= target:
            deadline, _, fut = heapq.heappop(self._heap)
            self._mono = max(self._mono, deadline)
            if not fut.done():
                fut.set_result(None)
            for _ in range(5):
                await asyncio.sleep(0)
        self._mono = target
        for _ in range(5):
            await asyncio.sleep(0)

    def timeout(self, seconds: float) -> AbstractAsyncContextManager[None]:
        return _ClockTimeout(self, seconds)


class _ClockTimeout:
    """`asyncio.timeout` for another clock: a sleeper on it cancels the task, and the exit turns that into
    TimeoutError (a cancellation from elsewhere stays one). A firing already scheduled when the block ends (the
    time passed in the turn its call was answered) does nothing: the task has gone on past the block."""

    def __init__(self, clock: FakeClock, seconds: float) -> None:
        self._clock, self._seconds = clock, seconds
        self._fired = False
        self._exited = False
        self._cancelling = 0
        self._task: asyncio.Task[Any] | None = None
        self._timer: asyncio.Future[None] | None = None

    async def __aenter__(self) -> None:
        self._task = asyncio.current_task()
        assert self._task is not None
        self._cancelling = self._task.cancelling()  # cancels asked before: not ours (as asyncio.Timeout counts)
        self._timer = asyncio.ensure_future(self._clock.sleep(self._seconds))
        self._timer.add_done_callback(self._fire)

    def _fire(self, timer: asyncio.Future[None]) -> None:
        if not timer.cancelled() and self._task is not None and not self._exited:
            self._fired = True
            self._task.cancel()

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        assert self._timer is not None and self._task is not None
        self._exited = True
        self._timer.remove_done_callback(self._fire)
        self._timer.cancel()
        if self._fired and self._task.uncancel() <= self._cancelling and exc_type is asyncio.CancelledError:
            raise TimeoutError from exc
