"""Changes to `pending.json` from many watches at once, applied in one transaction per batch.

A thousand watches finishing together would otherwise read and rewrite a large file a thousand times
each way. Each change is a function run on the batch's `PendingTx` under the workspace lock; its caller
resumes only after the batch holding it is written (fsynced), so "record first" still holds for every
single change. The file is encoded on the loop and written in a thread while the lock is held, so the event
loop keeps checking other watches meanwhile (`pending_store.py` says why encoding stays on the loop); the file
is parsed, off the loop, only after another process wrote it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from a2aconsole.core.files import Workspace
from a2aconsole.core.pending.changes import PendingTx
from a2aconsole.core.pending.store import STORE

T = TypeVar("T")
_Op = tuple[Callable[[PendingTx], Any], asyncio.Future[Any]]


class PendingBatcher:
    """One queue and at most one writer per workspace."""

    def __init__(self) -> None:
        self._queues: dict[Workspace, list[_Op]] = {}
        self._writers: dict[Workspace, asyncio.Task[None]] = {}

    async def apply(self, ws: Workspace, change: Callable[[PendingTx], T]) -> T:
        """Run `change(tx)` under the lock with other queued changes; returns its result once written."""
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._queues.setdefault(ws, []).append((change, fut))
        if ws not in self._writers:
            self._writers[ws] = asyncio.ensure_future(self._write(ws))
        try:
            return await asyncio.shield(fut)
        except asyncio.CancelledError:
            # the change stays queued (it may be written yet), but no one waits for its outcome any more: a
            # failure of its batch (the writer cancelled as the process stops) is not news to log
            fut.add_done_callback(_consume)
            raise

    async def _write(self, ws: Workspace) -> None:
        try:
            while self._queues.get(ws):
                ops = self._queues.pop(ws)
                results: list[tuple[asyncio.Future[Any], Any, BaseException | None]] = []
                try:
                    async with ws.lock.ahold():
                        tx = STORE.load_cached(ws)
                        if tx is None:  # another process wrote the file: parse it off the loop
                            tx = await asyncio.to_thread(STORE.load, ws)
                        for change, fut in ops:
                            try:
                                results.append((fut, change(tx), None))
                            except Exception as e:
                                results.append((fut, None, e))
                        commit = STORE.plan(tx)
                        if commit is not None and commit.writes:
                            await _finish_in_thread(STORE.write, ws, tx, commit)
                        else:
                            STORE.write(ws, tx, commit)
                except BaseException as e:  # the file could not be read or written: every change failed
                    for _, fut in ops:
                        if not fut.done():
                            fut.set_exception(e if isinstance(e, Exception) else RuntimeError("cancelled"))
                    if not isinstance(e, Exception):
                        raise
                    continue
                for fut, value, error in results:
                    if fut.done():
                        continue
                    if error is not None:
                        fut.set_exception(error)
                    else:
                        fut.set_result(value)
        finally:
            self._writers.pop(ws, None)


async def _finish_in_thread(fn: Callable[..., Any], *args: Any) -> None:
    """Run a write in a thread; if we are cancelled meanwhile, still wait for it (we hold the lock)."""
    task = asyncio.ensure_future(asyncio.to_thread(fn, *args))
    try:
        await asyncio.shield(task)
    except asyncio.CancelledError:
        await asyncio.wait({task})
        raise


def _consume(fut: asyncio.Future[Any]) -> None:
    if not fut.cancelled():
        fut.exception()
