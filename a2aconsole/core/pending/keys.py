"""Which records of `pending.json` watch which task: the index behind `PendingTx.watching`.

A chat watches a task at most once, so every send's record checks that no record of its chat already watches
the task. A scan of the records did that in 0.8 ms of each send's event loop time at 10,000 watches; the
store keeps this index beside its cache of the file's records instead (built once after a parse, changed in
step with the records by each commit: `pending_store._fold`).
"""

from __future__ import annotations

from collections.abc import Iterable

from a2aconsole.core.pending.records import WatchRecord

WatchKey = tuple[str, str, str]  # (target, agent, task id)


def watch_key(r: WatchRecord) -> WatchKey:
    return (r.target, r.agent, r.task_id)


class WatchKeys:
    """The ids of a list of records (ids not repeated) by their watch key."""

    __slots__ = ("_ids", "_keys")

    def __init__(self, records: Iterable[WatchRecord] = ()) -> None:
        self._ids: dict[WatchKey, set[str]] = {}
        self._keys: dict[str, WatchKey] = {}
        for r in records:
            self.put(r)

    def put(self, r: WatchRecord) -> None:
        """`r` under its key as it is now (in place of what its id was under before)."""
        rid = r.watch_id
        self.drop(rid)
        key = watch_key(r)
        self._keys[rid] = key
        self._ids.setdefault(key, set()).add(rid)

    def drop(self, rid: str) -> None:
        key = self._keys.pop(rid, None)
        if key is not None:
            ids = self._ids[key]
            ids.discard(rid)
            if not ids:
                del self._ids[key]

    def ids(self, key: WatchKey) -> Iterable[str]:
        return self._ids.get(key, ())
