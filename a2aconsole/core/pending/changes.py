"""One transaction type over `pending.json`: `PendingTx`, what every writer changes the file through.

Every writer of `pending.json` (the tool's send record, the watches' batches, the CLI, the web pages) changes
it through a `PendingTx` under the workspace lock (`pending.transaction`, or a batch of `PendingBatcher`):
read the records, change them through its methods, commit (`pending_store.py`). `records` and `find` only
read; what changes the file is said by a method: `add`, `replace`, `edit` (a record changed in place),
`remove`, `take`. The transaction knows which records changed and how, so a commit re-encodes only those,
and a commit that only adds or removes records may be a journal line (`pending_journal.py`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

from a2aconsole.core.pending.cache import Cache, Overlay
from a2aconsole.core.pending.keys import WatchKeys, watch_key
from a2aconsole.core.pending.records import WatchRecord

Op = tuple[str, Any]  # ("add", WatchRecord) or ("remove", watch id): what a journal line says


class PendingTx:
    """The records of `pending.json` (its journal applied) in one transaction under the workspace lock.

    Lookups by id are O(1); nothing is copied until `records` is asked for. A record found with `find` must
    not be changed: `edit` says a change in place (the commit re-encodes just that record)."""

    def __init__(self, base: list[WatchRecord], index: dict[str, WatchRecord]) -> None:
        self._base = base  # the file's records, as the store holds them: never reordered here
        self._index = index  # their index by id, likewise
        self.removed: set[str] = set()  # ids of base records gone
        self.replaced: dict[str, WatchRecord] = {}  # another record in a base record's place
        self.added: dict[str, WatchRecord] = {}  # after the base records, in order
        self.touched: set[str] = set()  # changed in place or put in place: re-encoded
        self.ops: list[Op] = []  # this transaction's adds and removes, as journal lines say them
        self.edits = False  # a change no journal line says (an edit, a replacement): the commit folds
        self.journal = b""  # the journal when loaded
        self.journal_sig: tuple[int, int, int, int] | None = None  # its signature then (`pending_store.file_sig`)
        self.journal_dirty = False  # a fold line or a cut line in it: the commit folds it
        self.journal_void = True  # its lines cancel out (the file's records as they are)
        self.cache: Cache | None = None  # what the store knew of the file (`PendingStore.load`)

    # reading

    @property
    def records(self) -> tuple[WatchRecord, ...]:
        """Every record, in file order (read only: change them through the methods)."""
        if not self.removed and not self.replaced:
            return (*self._base, *self.added.values())
        kept = [self.replaced.get(r.watch_id, r) for r in self._base if r.watch_id not in self.removed]
        return (*kept, *self.added.values())

    def find(self, watch_id: str) -> WatchRecord | None:
        """The record with this id, to read."""
        rec = self.added.get(watch_id)
        if rec is not None or watch_id in self.removed:
            return rec
        return self.replaced.get(watch_id) or self._index.get(watch_id)

    def watching(self, target: str, agent: str, task_id: str) -> bool:
        """Whether a record of chat `target` watches `agent`'s task `task_id`. The file's records are looked up
        in the store's index of them (`pending_keys.py`), the transaction's changes as they are now."""
        key = (target, agent, task_id)
        changed = (self.find(rid) for rid in (*self.added, *self.replaced, *self.touched))
        if any(r is not None and watch_key(r) == key for r in changed):
            return True
        keys = self._base_keys()
        if keys is None:
            return any(watch_key(r) == key for r in self.records)
        skip = (self.removed, self.replaced, self.touched)
        return any(all(rid not in ids for ids in skip) for rid in keys.ids(key))

    def _base_keys(self) -> WatchKeys | None:
        """The index of the file's records, from the store's cache (None: no cache, or repeated ids)."""
        return self.cache.watch_keys() if self.cache is not None else None

    @property
    def changed(self) -> bool:
        return bool(self.ops or self.touched)

    # changing

    def edit(self, watch_id: str) -> WatchRecord | None:
        """The record with this id, to change in place."""
        rec = self.find(watch_id)
        if rec is not None:
            self.touched.add(watch_id)
            self.edits = True
        return rec

    def add(self, *records: WatchRecord) -> None:
        """New records, after the others (copies: the caller's objects stay its own)."""
        for record in records:
            own = own_copy(record)
            self._add(own)
            self.ops.append(("add", own))

    def replace(self, record: WatchRecord) -> None:
        """`record` in the place of the record with its id; added after the others when there is none (a copy:
        the caller's object stays its own)."""
        rid = record.watch_id
        if self.find(rid) is None:
            return self.add(record)
        record = own_copy(record)
        if rid in self.added:
            self.added[rid] = record
        else:
            self.replaced[rid] = record
        self.touched.add(rid)
        self.edits = True
        return None

    def remove(self, watch_id: str) -> WatchRecord | None:
        """Take the record with this id out; it, or None when there is none."""
        rec = self._remove(watch_id)
        if rec is not None:
            self.ops.append(("remove", watch_id))
        return rec

    def take(self, which: Callable[[WatchRecord], bool]) -> list[WatchRecord]:
        """Take out every record `which` accepts; them, in file order."""
        taken = [r for r in self.records if which(r)]
        for r in taken:
            self.remove(r.watch_id)
        return taken

    # the journal's changes, applied as they were made (no journal line of this transaction's)

    @property
    def overlay(self) -> Overlay:
        """What the journal and this transaction did to the file's records: added, removed, replaced."""
        return (self.added, self.removed, self.replaced)

    def resume(self, overlay: Overlay) -> None:
        """Start from what a journal already known did to the file's records (`overlay`, copied)."""
        added, removed, replaced = overlay
        self.added, self.removed, self.replaced = dict(added), set(removed), dict(replaced)

    def _add(self, record: WatchRecord) -> None:
        rid = record.watch_id
        if self.find(rid) is not None:
            raise ValueError(f"watch {rid} is already in pending.json")
        self.added[rid] = record

    def _remove(self, watch_id: str) -> WatchRecord | None:
        rec = self.find(watch_id)
        if rec is None:
            return None
        if self.added.pop(watch_id, None) is None:
            self.removed.add(watch_id)
        self.touched.discard(watch_id)
        return rec

    def apply(self, ops: Iterable[Op]) -> None:
        for kind, value in ops:
            if kind == "remove":
                self._remove(value)
            elif self.find(value.watch_id) is None:
                self._add(value)
            elif value.watch_id in self.added:
                self.added[value.watch_id] = value
            else:
                self.replaced[value.watch_id] = value

    @property
    def net_empty(self) -> bool:
        """The file's records as they are: the journal's lines and this transaction's cancel out."""
        return not (self.added or self.removed or self.replaced or self.edits)


def own_copy(record: WatchRecord) -> WatchRecord:
    """A copy of `record` sharing nothing with it: the store keeps records across transactions, and a record
    changed behind its back would no longer be the file's. Its fields are copied as they are, the JSON
    containers all the way down."""
    return dataclasses.replace(record, extra=_copied(record.extra), end_events=_copied(record.end_events))


def _copied(value: Any) -> Any:
    """A JSON value copied all the way down (a record's `extra` is a few small containers)."""
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copied(v) for v in value]
    return value
