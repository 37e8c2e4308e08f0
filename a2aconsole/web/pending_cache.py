"""`pending.json` as the console's pages read it: parsed once per version of the file, not once per view.

The dashboard and the watch table read every workspace's file on every render (each live update of each tab):
10,000 watches are ~60 ms of JSON each time. A file is known by its `stat()`: inode, size and mtime in ns. Every
write replaces the file (`atomic_write`: a new inode), so whoever writes it (the worker, `manage.py a2a send`,
an editor) is seen at the next read; a send's record, a line appended to the journal beside it, changes the
journal's size (`pending.stamp`). Readers share the parsed records: they must not change them (the writers
read the file afresh under its lock, `pending.transaction`).
"""

from __future__ import annotations

import threading
from pathlib import Path

from a2aconsole.core import pending
from a2aconsole.core.files import Workspace
from a2aconsole.core.pending import PendingFile, WatchRecord

_lock = threading.Lock()
_parsed: dict[Path, tuple[tuple[object, ...], PendingFile]] = {}
_newest_first: dict[int, tuple[PendingFile, list[WatchRecord]]] = {}  # by id() of a cached file: its records sorted
KEPT = 64  # workspaces remembered (each chat target may have its own)


def read_pending(ws: Workspace) -> PendingFile:
    """`pending.read(ws)`, from memory while the file and its journal are as they were when last parsed."""
    path = pending.file_path(ws)
    stamp = pending.stamp(ws)  # pending.json and its journal (a send's record is a journal line)
    sig = stamp if stamp[0] is not None else None
    with _lock:
        hit = _parsed.get(path)
    if sig is not None and hit is not None and hit[0] == sig:
        return hit[1]
    pf = pending.read(ws)
    # Stat'ed before the read: a file replaced in between is cached under the older signature, so the next read
    # sees a different one and parses again (never the other way round).
    if sig is not None:
        with _lock:
            _parsed.pop(path, None)
            _parsed[path] = (sig, pf)
            if len(_parsed) > KEPT:
                _parsed.pop(next(iter(_parsed)))
    return pf


def newest_first(pf: PendingFile) -> list[WatchRecord]:
    """`pf`'s records, the newest start first: sorted once per version of the file (a page of 10,000 watches sorted
    them on every render, each live update of each tab). Shared like the records: not to be changed."""
    with _lock:
        hit = _newest_first.get(id(pf))
    if hit is not None and hit[0] is pf:  # the file itself is held, so its id is not another's
        return hit[1]
    ordered = sorted(pf.records, key=lambda r: r.started_at, reverse=True)
    with _lock:
        _newest_first[id(pf)] = (pf, ordered)
        while len(_newest_first) > KEPT:
            _newest_first.pop(next(iter(_newest_first)))
    return ordered
