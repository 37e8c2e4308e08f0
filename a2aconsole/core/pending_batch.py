"""Changes to `pending.json` from many watches at once, applied in one locked read-modify-write per batch.

A thousand watches finishing together would otherwise read and rewrite a large file a thousand times
each way. Each change is a function run on the batch's records under the workspace lock; its caller
resumes only after the batch holding it is written (fsynced), so "record first" still holds for every
single change. The file is written in a thread while the lock is held, so the event loop keeps
checking other watches meanwhile; the records this process wrote last are reused while the file is
unchanged on disk (same inode, size and mtime), so a batch parses the file only after someone else wrote it.

Encoding runs on the loop, not in the thread: a thread doing Python work holds the GIL, and then every
socket call of the loop waits for it (a convoy that made 1,000 settling watches take seconds longer). Each
record's text is kept and reused while its JSON is unchanged, so a batch that changes ten records of ten
thousand encodes ten; the file is byte for byte what `dump_pending` writes.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from typing import Any, TypeVar

from .errors import FileFormatError
from .files import write_locked
from .pending import WatchRecord
from .workspace import Workspace

T = TypeVar("T")
_Sig = tuple[int, int, int]
# a record, its JSON, its text in the file, and whether it is plain (only plain records' JSON can be trusted
# to stay as it was: a nested value may change in place behind the kept copy)
_Text = tuple[WatchRecord, dict[str, Any], str, bool]
_PLAIN = (str, type(None))  # 1 == True == 1.0 but their JSON differs: numbers are not kept


class BatchTx:
    """The records of one batch: `find` and `remove` by id in O(1) (a list scan per change is quadratic).

    A change alters a record only through `find` (or walks `records`, after which any record may have
    changed): the batch then re-encodes just the records found, not all ten thousand.
    """

    def __init__(self, records: list[WatchRecord], by_id: dict[str, WatchRecord] | None = None) -> None:
        self._records = records
        self._by_id = by_id if by_id is not None else {r.watch_id: r for r in records}
        self._removed: set[str] = set()
        self.touched: set[str] | None = set()  # None: any record may have changed
        self.exact = False  # the batcher's texts of the last write match these records one for one, in order

    def find(self, watch_id: str) -> WatchRecord | None:
        rec = None if watch_id in self._removed else self._by_id.get(watch_id)
        if rec is not None and self.touched is not None:
            self.touched.add(watch_id)
        return rec

    def remove(self, watch_id: str) -> WatchRecord | None:
        rec = self.find(watch_id)
        if rec is not None:
            self._removed.add(watch_id)
        return rec

    @property
    def records(self) -> list[WatchRecord]:
        self.touched = None
        return self.kept()

    def kept(self) -> list[WatchRecord]:
        """The records left after the batch's removals."""
        if not self._removed:
            return self._records
        return [r for r in self._records if r.watch_id not in self._removed]

    @property
    def removed(self) -> set[str]:
        return self._removed

    def index(self) -> dict[str, WatchRecord]:
        """The id index of `kept()` (the batch's own index, updated in place)."""
        for rid in self._removed:
            self._by_id.pop(rid, None)
        return self._by_id


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
        self._cache: dict[Workspace, tuple[_Sig, list[WatchRecord], dict[str, WatchRecord], bool]] = {}
        self._texts: dict[Workspace, dict[str, _Text]] = {}  # by id, in file order
        self._volatile: dict[Workspace, set[str]] = {}  # ids of records that are not plain

    async def apply(self, ws: Workspace, change: Callable[[BatchTx], T]) -> T:
        """Run `change(tx)` under the lock with other queued changes; returns its result once written."""
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._queues.setdefault(ws, []).append((change, fut))
        if ws not in self._writers:
            self._writers[ws] = asyncio.ensure_future(self._write(ws))
        return await asyncio.shield(fut)

    def _cached(self, ws: Workspace) -> BatchTx | None:
        """The records this process wrote last, when the file is still the one it wrote."""
        cached = self._cache.pop(ws, None)
        if cached is not None and cached[0] == _sig(ws.pending_path):
            tx = BatchTx(cached[1], cached[2])
            tx.exact = cached[3]
            return tx
        return None

    @staticmethod
    def _read(ws: Workspace) -> list[WatchRecord]:
        pf = ws.read_pending()
        if pf.parse_error:
            raise FileFormatError(str(ws.pending_path), pf.parse_error)
        return pf.records

    def _encode(self, ws: Workspace, tx: BatchTx) -> tuple[list[WatchRecord], dict[str, WatchRecord], bool, bytes]:
        """`dump_pending` of the batch's records, re-encoding only the records it changed (and those that are
        not plain). Returns the records, their index, whether the texts match them one for one, the bytes."""
        touched, removed = tx.touched, tx.removed
        texts = self._texts.get(ws)
        if tx.exact and touched is not None and texts is not None:
            # The common case, in O(changed): the texts of the last write, minus the removed, plus the changed.
            by_id = tx.index()
            volatile = self._volatile.get(ws, set()) - removed
            for rid in removed:
                texts.pop(rid, None)
            for rid in (touched | volatile) - removed:
                texts[rid] = entry = _entry(by_id[rid], texts.get(rid))
                (volatile.discard if entry[3] else volatile.add)(rid)
            self._volatile[ws] = volatile
            records = list(by_id.values())
            if len(texts) == len(records):
                return records, by_id, True, _join([t[2] for t in texts.values()])
        old = texts or {}
        records = tx.kept()
        texts = {}
        parts = []
        for r in records:
            rid = r.watch_id
            hit = old.get(rid)
            if hit is None or hit[0] is not r or not hit[3] or touched is None or rid in touched:
                hit = _entry(r, hit)
            texts[rid] = hit
            parts.append(hit[2])
        self._texts[ws] = texts
        self._volatile[ws] = {rid for rid, t in texts.items() if not t[3]}
        # the index afresh: a change that walked `records` may have added some
        by_id = tx.index() if touched is not None else {r.watch_id: r for r in records}
        return records, by_id, len(texts) == len(records), _join(parts)

    def _commit(
        self, ws: Workspace, records: list[WatchRecord], by_id: dict[str, WatchRecord], exact: bool, data: bytes
    ) -> None:
        write_locked(ws.pending_path, data)
        sig = _sig(ws.pending_path)
        if sig is not None:
            self._cache[ws] = (sig, records, by_id, exact)

    async def _write(self, ws: Workspace) -> None:
        try:
            while self._queues.get(ws):
                ops = self._queues.pop(ws)
                results: list[tuple[asyncio.Future[Any], Any, BaseException | None]] = []
                try:
                    async with ws.lock.ahold():
                        tx = self._cached(ws)
                        if tx is None:  # someone else wrote the file: parse it off the loop
                            tx = BatchTx(await asyncio.to_thread(self._read, ws))
                        for change, fut in ops:
                            try:
                                results.append((fut, change(tx), None))
                            except Exception as e:
                                results.append((fut, None, e))
                        await _finish_in_thread(self._commit, ws, *self._encode(ws, tx))
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


def _entry(r: WatchRecord, hit: _Text | None) -> _Text:
    """A record's text, reused from `hit` when its JSON is unchanged (and was plain)."""
    d = r.to_json()
    text = hit[2] if hit is not None and hit[3] and hit[1] == d else _record_text(d)
    return (r, d, text, all(isinstance(v, _PLAIN) for v in r.extra.values()))


def _join(parts: list[str]) -> bytes:
    return ("[\n" + ",\n".join(parts) + "\n]\n").encode() if parts else b"[]\n"


def _record_text(d: dict[str, Any]) -> str:
    """One record as `dump_pending` lays it out inside the array (indent 2, one level deep)."""
    return "  " + json.dumps(d, indent=2, ensure_ascii=False).replace("\n", "\n  ")


async def _finish_in_thread(fn: Callable[..., Any], *args: Any) -> None:
    """Run a write in a thread; if we are cancelled meanwhile, still wait for it (we hold the lock)."""
    task = asyncio.ensure_future(asyncio.to_thread(fn, *args))
    try:
        await asyncio.shield(task)
    except asyncio.CancelledError:
        await asyncio.wait({task})
        raise
