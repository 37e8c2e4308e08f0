"""Changes to `pending.json` from many watches at once, applied in one locked read-modify-write per batch.

A thousand watches finishing together would otherwise read and rewrite a large file a thousand times
each way. Each change is a function run on the batch's records under the workspace lock; its caller
resumes only after the batch holding it is written (fsynced), so "record first" still holds for every
single change. The file is written in a thread while the lock is held, so the event loop keeps
checking other watches meanwhile; the records this process wrote last are reused while the file is
unchanged on disk (same inode, size and mtime), so a batch parses the file only after someone else wrote it.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from typing import Any, TypeVar

from .errors import FileFormatError
from .files import atomic_write
from .pending import WatchRecord, dump_pending
from .workspace import Workspace

T = TypeVar("T")
_Sig = tuple[int, int, int]


class BatchTx:
    """The records of one batch: `find` and `remove` by id in O(1) (a list scan per change is quadratic)."""

    def __init__(self, records: list[WatchRecord]) -> None:
        self._records = records
        self._by_id = {r.watch_id: r for r in records}
        self._removed: set[str] = set()

    def find(self, watch_id: str) -> WatchRecord | None:
        return None if watch_id in self._removed else self._by_id.get(watch_id)

    def remove(self, watch_id: str) -> WatchRecord | None:
        rec = self.find(watch_id)
        if rec is not None:
            self._removed.add(watch_id)
        return rec

    @property
    def records(self) -> list[WatchRecord]:
        if not self._removed:
            return self._records
        return [r for r in self._records if r.watch_id not in self._removed]


_Op = tuple[Callable[[BatchTx], Any], asyncio.Future[Any]]


def _sig(path: os.PathLike[str] | str) -> _Sig | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


class PendingBatcher:
    """One queue and at most one writer per workspace."""

    def __init__(self) -> None:
        self._queues: dict[Workspace, list[_Op]] = {}
        self._writers: dict[Workspace, asyncio.Task[None]] = {}
        self._cache: dict[Workspace, tuple[_Sig, list[WatchRecord]]] = {}

    async def apply(self, ws: Workspace, change: Callable[[BatchTx], T]) -> T:
        """Run `change(tx)` under the lock with other queued changes; returns its result once written."""
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._queues.setdefault(ws, []).append((change, fut))
        if ws not in self._writers:
            self._writers[ws] = asyncio.ensure_future(self._write(ws))
        return await asyncio.shield(fut)

    def _load(self, ws: Workspace) -> list[WatchRecord]:
        cached = self._cache.pop(ws, None)
        if cached is not None and cached[0] == _sig(ws.pending_path):
            return cached[1]
        pf = ws.read_pending()
        if pf.parse_error:
            raise FileFormatError(str(ws.pending_path), pf.parse_error)
        return pf.records

    def _commit(self, ws: Workspace, records: list[WatchRecord]) -> None:
        atomic_write(ws.pending_path, dump_pending(records))
        sig = _sig(ws.pending_path)
        if sig is not None:
            self._cache[ws] = (sig, records)

    async def _write(self, ws: Workspace) -> None:
        try:
            while self._queues.get(ws):
                ops = self._queues.pop(ws)
                results: list[tuple[asyncio.Future[Any], Any, BaseException | None]] = []
                try:
                    async with ws.lock.ahold():
                        tx = BatchTx(await asyncio.to_thread(self._load, ws))
                        for change, fut in ops:
                            try:
                                results.append((fut, change(tx), None))
                            except Exception as e:
                                results.append((fut, None, e))
                        await _finish_in_thread(self._commit, ws, tx.records)
                except BaseException as e:  # the file could not be read or written: every change failed
                    self._cache.pop(ws, None)
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
