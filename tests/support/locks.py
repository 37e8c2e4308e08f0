"""A workspace lock held by another holder while a test looks at what waits for it."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Callable

from a2aconsole.core.files.atomic import FileLock


@contextlib.asynccontextmanager
async def held_by_a_thread(lock: FileLock) -> AsyncIterator[Callable[[], None]]:
    """`lock` held by a thread of this process (as another process would hold it) from the start of the block
    until the function it yields is called, or the block ends."""
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with lock.hold():
            held.set()
            release.wait(30)

    thread = threading.Thread(target=hold)
    thread.start()
    try:
        assert await asyncio.to_thread(held.wait, 30), "the thread never took the lock"
        yield release.set
    finally:
        release.set()
        await asyncio.to_thread(thread.join, 30)
