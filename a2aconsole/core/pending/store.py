"""Loading and committing `PendingTx` transactions: the store of the process (`STORE`).

The store keeps, per workspace, the records it last read or wrote while the file is unchanged on disk (inode,
size, mtime, ctime), each record's text in the file, reused while its JSON is unchanged, and the journal as it last
saw it: a commit that changes ten records of ten thousand encodes ten, a transaction parses the file only
after another process wrote it, and a send's transaction reads no journal line but another process's.
Encoding is plain Python (run it on the event loop: a thread doing Python work holds the GIL and every
socket call of the loop waits for it); writing may go to a thread. The file is byte for byte what
`dump_pending` writes. A transaction takes the cache; only a commit that succeeded puts it back, so a
change that failed half-way is never kept.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import a2aconsole.core.pending.journal as pending_journal  # its limit, set lower by tests
from a2aconsole.core.errors import FileFormatError
from a2aconsole.core.files import Signature, append_locked, read_bytes, stat_signature, version_of, write_locked
from a2aconsole.core.pending.cache import Cache, Overlay, Text
from a2aconsole.core.pending.changes import PendingTx
from a2aconsole.core.pending.journal import journal_ops, line
from a2aconsole.core.pending.keys import WatchKeys
from a2aconsole.core.pending.paths import file_path, journal_path
from a2aconsole.core.pending.records import WatchRecord, parse_pending

if TYPE_CHECKING:
    from a2aconsole.core.files import Workspace

_TOKEN = "pushToken"
_PLAIN = (str, type(None))  # 1 == True == 1.0 but their JSON differs: numbers are not kept


def file_sig(path: Path) -> Signature | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return stat_signature(st)


@dataclass
class Commit:
    """What a commit writes: journal lines (`append`), or the whole file (`data`), or an empty journal."""

    durable: bool
    append: bytes = b""
    data: bytes | None = None
    truncate: bool = False
    cache: Cache | None = None

    @property
    def writes(self) -> bool:
        return bool(self.append) or self.data is not None or self.truncate


class PendingStore:
    """Loads and commits the transactions of every workspace of the process (one instance: `STORE`). Its
    callers hold the workspace lock, which also keeps them from using the cache of one workspace at once."""

    def __init__(self) -> None:
        self._caches: dict[Path, Cache] = {}
        # each file's push tokens as of a signature: still known while a transaction holds the cache (a batch of
        # the watches writes for milliseconds, in a thread, and the scrubber asks meanwhile)
        self._tokens: dict[Path, tuple[Signature | None, frozenset[str]]] = {}

    def forget(self, ws: Workspace) -> None:
        path = file_path(ws)
        self._caches.pop(path, None)
        self._tokens.pop(path, None)

    def load(self, ws: Workspace) -> PendingTx:
        """The workspace's records in a transaction. Raises FileFormatError for a malformed file."""
        tx = self._load(ws, parse=True)
        assert tx is not None
        return tx

    def load_cached(self, ws: Workspace) -> PendingTx | None:
        """`load` when the file need not be parsed (this process read or wrote it last), else None: the caller
        parses it off the event loop."""
        return self._load(ws, parse=False)

    def _load(self, ws: Workspace, *, parse: bool) -> PendingTx | None:
        path, jpath = file_path(ws), journal_path(ws)
        cache = self._caches.pop(path, None)
        sig = file_sig(path)
        data: bytes | None = None
        if cache is None or cache.sig != sig:
            if not parse:
                return None
            data = read_bytes(path)
            try:
                records = parse_pending(data.decode("utf-8"), str(path)) if data is not None else []
            except (ValueError, UnicodeDecodeError) as e:
                raise FileFormatError(str(path), str(e)) from None
            cache = Cache(sig, records, {r.watch_id: r for r in records})
        tx = PendingTx(cache.records, cache.index)
        tx.cache = cache
        jsig = file_sig(jpath)
        # an append-only file under the lock: unchanged signature, unchanged lines (another writer's
        # would have to empty it and write as many bytes again in the same clock tick)
        same = jsig is not None and jsig == cache.journal_sig
        journal = cache.journal if same else (read_bytes(jpath) or b"") if jsig is not None else b""
        tx.journal_sig = jsig
        if journal:
            tail = journal
            known = cache.journal
            if known and known.endswith(b"\n") and journal.startswith(known):
                tx.resume(cache.overlay)
                tx.journal_dirty = cache.journal_dirty
                tail = journal[len(known) :]
            if tail:

                def version() -> str:
                    return version_of(data if data is not None else read_bytes(path))

                ops, dirty, reset = journal_ops(tail, version)
                if reset:
                    tx.resume(({}, set(), {}))
                tx.journal_dirty = tx.journal_dirty or dirty
                tx.apply(ops)
        tx.journal = journal
        tx.journal_void = tx.net_empty
        return tx

    def _current(self, ws: Workspace) -> Cache | None:
        """The cache when neither file moved since this process last read or wrote them and the journal needs no
        fold: a journal line may then be appended without a transaction. Under the workspace lock."""
        path = file_path(ws)
        cache = self._caches.get(path)
        if cache is None or cache.journal_dirty or cache.journal_sig is None:
            return None
        if file_sig(path) != cache.sig or file_sig(journal_path(ws)) != cache.journal_sig:
            return None
        return cache

    def _append(self, ws: Workspace, cache: Cache, data: bytes, overlay: Overlay) -> None:
        """Append `data` (lines of this process) to the journal and keep the cache with the journal's new effect
        (`overlay`). The cache is taken while the file changes: a failed write leaves none behind."""
        path = file_path(ws)
        del self._caches[path]
        cache.journal_sig = stat_signature(append_locked(journal_path(ws), data))
        cache.journal += data
        cache.overlay = overlay
        self._caches[path] = cache

    def push_tokens(self, ws: Workspace, sig: Signature) -> frozenset[str] | None:
        """The push tokens of the records of `pending.json` when this process knows the file as it is (`sig`, its
        `file_sig` now): the same object while no commit changed a token. None when it does not (another
        process wrote the file, or it is malformed): the caller reads the file. Read without the lock: a cache is
        put back only whole, its records never changed in place once kept."""
        path = file_path(ws)
        cache = self._caches.get(path)
        if cache is not None and cache.sig == sig:
            tokens = cache.push_tokens()
            self._tokens[path] = (sig, tokens)
            return tokens
        known = self._tokens.get(path)
        return known[1] if known is not None and known[0] == sig else None

    def plan(self, tx: PendingTx, *, durable: bool = True) -> Commit | None:
        """What committing `tx` writes (None: nothing). Plain Python: run it on the event loop."""
        cache = tx.cache
        assert cache is not None, "a transaction from PendingStore.load"
        if not tx.changed and not tx.journal_dirty:
            return Commit(durable, cache=cache)
        if not durable and not tx.edits and not tx.journal_dirty:
            lines = b"".join(line(op) for op in tx.ops)
            if len(tx.journal) + len(lines) <= pending_journal.JOURNAL_LIMIT:
                return Commit(durable, append=lines, cache=cache)
            if tx.net_empty:  # long, and its lines and these cancel out: emptied
                return Commit(durable, truncate=True, cache=cache)
            if tx.journal_void:  # long, and its lines cancel out: emptied, then these
                return Commit(durable, append=lines, truncate=True, cache=cache)
            durable = True  # long, and still changing the file: folded, durably
        return _fold(cache, tx, durable)

    def write(self, ws: Workspace, tx: PendingTx, commit: Commit | None) -> None:
        """Write what `plan` said; the cache is kept once it is written."""
        if commit is None:
            return
        path, jpath = file_path(ws), journal_path(ws)
        appended = None
        if commit.append:
            appended = append_locked(jpath, commit.append, truncate=commit.truncate)
        elif commit.data is not None:
            if tx.journal:  # a line of its own, after a line a crash may have cut
                fold = json.dumps({"fold": version_of(commit.data)}).encode()
                append_locked(jpath, b"\n" + fold + b"\n", durable=commit.durable)
            write_locked(path, commit.data, durable=commit.durable)
            if commit.cache is not None:
                commit.cache.sig = file_sig(path)
                # known before the transaction gives the cache back (counted in step: no cost but a first time)
                self._tokens[path] = (commit.cache.sig, commit.cache.push_tokens())
        cache = commit.cache
        if (commit.truncate or commit.data is not None) and tx.journal and not commit.append:
            with contextlib.suppress(FileNotFoundError):
                os.truncate(jpath, 0)
        if cache is None:
            return
        if appended is not None:
            cache.journal_sig = stat_signature(appended)
        else:
            cache.journal_sig = file_sig(jpath) if commit.writes else tx.journal_sig
        if (commit.truncate or commit.data is not None) and not commit.append:
            cache.journal, cache.overlay, cache.journal_dirty = b"", ({}, set(), {}), False
        else:  # appended, or left as it was: what the journal does now is what the transaction saw
            cache.journal = (b"" if commit.truncate else tx.journal) + commit.append
            cache.overlay = tx.overlay
            cache.journal_dirty = tx.journal_dirty
        self._caches[path] = cache


def _fold(cache: Cache, tx: PendingTx, durable: bool) -> Commit | None:
    """`dump_pending` of the transaction's records, re-encoding only the records it changed (and those that are
    not plain); the cache after it is written."""
    texts = cache.texts
    if texts is not None:
        # the common case, in O(changed): the texts of the file, minus the removed, plus the changed and added
        index, removed = cache.index, tx.removed
        volatile = set(cache.volatile)
        moves: list[tuple[object, object]] = []  # push tokens that went and came: (before, after) per record
        lost = False  # a record whose token before is not known
        for rid in removed:
            gone = texts.pop(rid, None)
            if gone is None:
                lost = True
            elif _TOKEN in gone[1]:
                moves.append((gone[1][_TOKEN], None))
            index.pop(rid, None)
            volatile.discard(rid)
        index.update(tx.replaced)
        differs = bool(removed or tx.added or tx.replaced or tx.journal_dirty)
        for rid in (tx.touched | volatile | tx.replaced.keys()) - tx.added.keys():
            if rid in index:
                hit = texts.get(rid)
                texts[rid] = entry = _entry(index[rid], hit)
                differs = differs or hit is None or entry[2] != hit[2]
                if hit is None:
                    lost = True
                elif hit[1].get(_TOKEN) != entry[1].get(_TOKEN):
                    moves.append((hit[1].get(_TOKEN), entry[1].get(_TOKEN)))
                (volatile.discard if entry[3] else volatile.add)(rid)
        for rid, r in tx.added.items():
            index[rid] = r
            texts[rid] = entry = _entry(r, None)
            if _TOKEN in entry[1]:
                moves.append((None, entry[1][_TOKEN]))
            if not entry[3]:
                volatile.add(rid)
        records = list(index.values())
        if len(texts) == len(records):
            kept = Cache(cache.sig, records, index, texts, frozenset(volatile), keys=_keys_after(cache.keys, tx, index))
            kept.tokens, kept.token_counts = _tokens_after(cache, texts, moves, lost)
            if not differs:  # changed in place back to what it was: nothing to write
                return Commit(durable, cache=kept)
            return Commit(durable, data=_join([t[2] for t in texts.values()]), cache=kept)
        tx = PendingTx(records, index)  # unreachable for files without repeated ids: encode them all
    records = list(tx.records)
    old = cache.texts or {}
    fresh: dict[str, Text] = {}
    parts = []
    for r in records:
        rid = r.watch_id
        hit = old.get(rid)
        if hit is None or hit[0] is not r or not hit[3] or rid in tx.touched:
            hit = _entry(r, hit)
        fresh[rid] = hit
        parts.append(hit[2])
    exact = len(fresh) == len(records)
    volatile = frozenset(rid for rid, t in fresh.items() if not t[3])
    index = {r.watch_id: r for r in records}
    return Commit(
        durable, data=_join(parts), cache=Cache(cache.sig, records, index, fresh if exact else None, volatile)
    )


def _tokens_after(
    cache: Cache, texts: dict[str, Text], moves: list[tuple[object, object]], lost: bool
) -> tuple[frozenset[str] | None, Counter[str] | None]:
    """The push tokens after a fold that made `moves` (counted in place: the cache before it is discarded), or
    counted afresh from the records' texts after it; as they were when no token moved."""
    if not moves and not lost:
        return cache.tokens, cache.token_counts
    counts = cache.token_counts
    if counts is None or lost:
        counts = Counter(t for entry in texts.values() if isinstance(t := entry[1].get(_TOKEN), str))
    else:
        for before, after in moves:
            if isinstance(before, str):
                counts[before] -= 1
                if counts[before] <= 0:
                    del counts[before]
            if isinstance(after, str):
                counts[after] += 1
    return frozenset(counts), counts


def _keys_after(keys: WatchKeys | None, tx: PendingTx, index: dict[str, WatchRecord]) -> WatchKeys | None:
    """`keys` (the index of the records before `tx`) changed as `tx` changed the records (`index`, after it)."""
    if keys is not None:
        for rid in tx.removed:
            keys.drop(rid)
        for rid in (*tx.added, *tx.replaced, *tx.touched):
            r = index.get(rid)
            if r is None:
                keys.drop(rid)
            else:
                keys.put(r)
    return keys


def _entry(r: WatchRecord, hit: Text | None) -> Text:
    """A record's text, reused from `hit` when its JSON is unchanged (and was plain)."""
    d = r.to_json()
    text = hit[2] if hit is not None and hit[3] and hit[1] == d else _record_text(d)
    return (r, d, text, all(isinstance(v, _PLAIN) for v in r.extra.values()))


def _join(parts: list[str]) -> bytes:
    return ("[\n" + ",\n".join(parts) + "\n]\n").encode() if parts else b"[]\n"


def _record_text(d: dict[str, Any]) -> str:
    """One record as `dump_pending` lays it out inside the array (indent 2, one level deep)."""
    return "  " + json.dumps(d, indent=2, ensure_ascii=False).replace("\n", "\n  ")


STORE = PendingStore()
