"""Batched pending.json changes: many changes, few writes, nothing lost, other writers respected."""

from __future__ import annotations

import asyncio

import pytest

from a2aconsole.core.errors import FileFormatError
from a2aconsole.core.files import atomic_write
from a2aconsole.core.pending import WatchRecord
from a2aconsole.core.pending_batch import PendingBatcher
from a2aconsole.core.workspace import Workspace


def rec(i: int) -> WatchRecord:
    return WatchRecord(f"w{i}", "chat1", "bot", f"t{i}", started_at="2026-01-01T00:00:00+00:00")


async def test_concurrent_changes_share_writes_and_all_land(workspace: Workspace, monkeypatch) -> None:
    async with workspace.pending_tx() as tx:
        tx.records.extend(rec(i) for i in range(200))
    batcher = PendingBatcher()
    writes = []
    commit = batcher._commit
    monkeypatch.setattr(batcher, "_commit", lambda ws, records: (writes.append(len(records)), commit(ws, records)))

    def claim(i: int):
        def change(tx):
            r = tx.find(f"w{i}")
            r.undelivered = f"text {i}"
            return r.watch_id

        return change

    got = await asyncio.gather(*(batcher.apply(workspace, claim(i)) for i in range(100)))
    assert got == [f"w{i}" for i in range(100)]
    removed = await asyncio.gather(*(batcher.apply(workspace, lambda tx, i=i: tx.remove(f"w{i}")) for i in range(50)))
    assert all(r is not None for r in removed)
    assert len(writes) <= 4  # two bursts of changes, a handful of writes
    records = workspace.read_pending().records
    assert [r.watch_id for r in records] == [f"w{i}" for i in range(50, 200)]
    assert [r.undelivered for r in records[:50]] == [f"text {i}" for i in range(50, 100)]

    # someone else rewrites the file: the next batch reads it again instead of its own last copy
    async with workspace.pending_tx() as tx:
        tx.records.append(rec(999))
    assert await batcher.apply(workspace, lambda tx: tx.find("w999") is not None)
    assert workspace.read_pending().records[-1].watch_id == "w999"


async def test_malformed_file_fails_every_change_and_stays(workspace: Workspace) -> None:
    atomic_write(workspace.pending_path, b"[{")
    batcher = PendingBatcher()
    results = await asyncio.gather(
        *(batcher.apply(workspace, lambda tx: tx.remove("w1")) for _ in range(3)), return_exceptions=True
    )
    assert all(isinstance(r, FileFormatError) for r in results)
    assert workspace.pending_path.read_bytes() == b"[{"
    with pytest.raises(FileFormatError):
        await batcher.apply(workspace, lambda tx: None)
