"""The one door to a workspace's `pending.json`: `read` it, or change it in a `transaction`.

Reads are fresh on every call. A transaction holds the workspace lock, loads the records (`PendingStore`) and
commits when its body ends without an exception; a malformed file raises and is left alone.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

from a2aconsole.core.files import Workspace, read_bytes, version_of
from a2aconsole.core.pending.changes import PendingTx
from a2aconsole.core.pending.journal import with_journal
from a2aconsole.core.pending.paths import file_path, journal_path
from a2aconsole.core.pending.records import WatchRecord, parse_pending
from a2aconsole.core.pending.store import STORE, file_sig


@dataclass
class PendingFile:
    path: Path
    records: list[WatchRecord]
    parse_error: str | None
    version: str


def read(ws: Workspace) -> PendingFile:
    """The records of `pending.json` with its journal applied (the journal read first: a fold in between
    empties it, and it is then read again)."""
    path, jpath = file_path(ws), journal_path(ws)
    for _ in range(3):
        before = file_sig(jpath)
        journal = read_bytes(jpath)
        data = read_bytes(path)
        if file_sig(jpath) == before:
            break
    version = version_of(data)
    if data is None and not journal:
        return PendingFile(path, [], None, version)
    try:
        records = parse_pending(data.decode("utf-8"), str(path)) if data is not None else []
    except (ValueError, UnicodeDecodeError) as e:
        return PendingFile(path, [], str(e), version)
    return PendingFile(path, with_journal(records, journal, data), None, version)


def stamp(ws: Workspace) -> tuple[object, ...]:
    """What changes whenever `read` may read something else (`pending.json` and its journal)."""
    return (file_sig(file_path(ws)), file_sig(journal_path(ws)))


@contextlib.asynccontextmanager
async def transaction(ws: Workspace, *, durable: bool = True) -> AsyncIterator[PendingTx]:
    """Read-modify-write `pending.json` under the lock: `async with pending.transaction(ws) as tx:`. The body's
    changes are committed when it ends without an exception. `durable=False`: no fsync (the change survives
    this process dying, not the machine crashing); such a change that only adds or removes records is a line
    appended to the journal."""
    async with ws.lock.ahold():
        tx = STORE.load(ws)
        yield tx
        STORE.write(ws, tx, STORE.plan(tx, durable=durable))


@contextlib.contextmanager
def transaction_sync(ws: Workspace, *, durable: bool = True) -> Iterator[PendingTx]:
    """`transaction` for code off the event loop (the CLI, Django views)."""
    with ws.lock.hold():
        tx = STORE.load(ws)
        yield tx
        STORE.write(ws, tx, STORE.plan(tx, durable=durable))
