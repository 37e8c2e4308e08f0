"""Batched pending.json changes: many changes, few writes, nothing lost, other writers respected."""

from __future__ import annotations

import asyncio
import gc

import pytest

from a2aconsole.core import pending
from a2aconsole.core.errors import FileFormatError
from a2aconsole.core.files.atomic import atomic_write
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.pending import store as pending_store
from a2aconsole.core.pending.batch import PendingBatcher
from a2aconsole.core.pending.records import WatchRecord, dump_pending
from a2aconsole.core.pending.store import STORE


def rec(i: int) -> WatchRecord:
    return WatchRecord(f"w{i}", "chat1", "bot", f"t{i}", started_at="2026-01-01T00:00:00+00:00")


async def test_concurrent_changes_share_writes_and_all_land(workspace: Workspace, monkeypatch) -> None:
    async with pending.transaction(workspace) as tx:
        tx.add(*(rec(i) for i in range(200)))
    batcher = PendingBatcher()
    writes = []
    write = pending_store.write_locked
    monkeypatch.setattr(pending_store, "write_locked", lambda *a, **kw: (writes.append(a[0]), write(*a, **kw)))

    def claim(i: int):
        def change(tx):
            r = tx.edit(f"w{i}")
            r.undelivered = f"text {i}"
            return r.watch_id

        return change

    got = await asyncio.gather(*(batcher.apply(workspace, claim(i)) for i in range(100)))
    assert got == [f"w{i}" for i in range(100)]
    removed = await asyncio.gather(*(batcher.apply(workspace, lambda tx, i=i: tx.remove(f"w{i}")) for i in range(50)))
    assert all(r is not None for r in removed)
    assert len(writes) <= 4  # two bursts of changes, a handful of writes
    records = pending.read(workspace).records
    assert [r.watch_id for r in records] == [f"w{i}" for i in range(50, 200)]
    assert [r.undelivered for r in records[:50]] == [f"text {i}" for i in range(50, 100)]

    # someone else rewrites the file: the next batch reads it again instead of its own last copy
    async with pending.transaction(workspace) as tx:
        tx.add(rec(999))
    assert await batcher.apply(workspace, lambda tx: tx.find("w999") is not None)
    assert pending.read(workspace).records[-1].watch_id == "w999"


async def test_malformed_file_fails_every_change_and_stays(workspace: Workspace) -> None:
    atomic_write(pending.file_path(workspace), b"[{")
    batcher = PendingBatcher()
    results = await asyncio.gather(
        *(batcher.apply(workspace, lambda tx: tx.remove("w1")) for _ in range(3)), return_exceptions=True
    )
    assert all(isinstance(r, FileFormatError) for r in results)
    assert pending.file_path(workspace).read_bytes() == b"[{"
    with pytest.raises(FileFormatError):
        await batcher.apply(workspace, lambda tx: None)


async def test_file_is_what_dump_pending_writes_and_only_changed_records_are_encoded(
    workspace: Workspace, monkeypatch
) -> None:
    """A batch re-encodes only the records its changes edited; the bytes equal a full `dump_pending`."""
    async with pending.transaction(workspace) as tx:
        tx.add(*(rec(i) for i in range(50)))
        tx.records[3].extra = {"message": 'é \n "quoted"', "nested": {"a": [1, 2]}}  # nested: never kept
        tx.records[4].extra = {"count": 1}  # a number: never kept (1 == True, but not in JSON)
    batcher = PendingBatcher()
    encoded: list[str] = []
    record_text = pending_store._record_text
    monkeypatch.setattr(pending_store, "_record_text", lambda d: (encoded.append(d["watchId"]), record_text(d))[1])

    def claim(tx):
        r = tx.edit("w7")
        r.undelivered = "done ✓"
        return r

    STORE.forget(workspace)  # as if another process wrote the file
    await batcher.apply(workspace, claim)  # the file was read: every record encoded
    assert len(encoded) == 50
    assert pending.file_path(workspace).read_bytes() == dump_pending(pending.read(workspace).records)

    encoded.clear()
    await batcher.apply(workspace, lambda tx: setattr(tx.edit("w9"), "state", "completed"))
    await batcher.apply(workspace, lambda tx: tx.remove("w7"))
    assert sorted(encoded) == ["w3", "w3", "w4", "w4", "w9"]  # the changed one, plus the two never kept
    records = pending.read(workspace).records
    assert pending.file_path(workspace).read_bytes() == dump_pending(records)
    assert [r.watch_id for r in records] == [f"w{i}" for i in range(50) if i != 7]
    assert records[8].state == "completed" and records[3].extra["nested"] == {"a": [1, 2]}

    encoded.clear()
    await batcher.apply(workspace, lambda tx: setattr(tx.edit(tx.records[0].watch_id), "source", "subscribe"))
    assert sorted(encoded) == ["w0", "w3", "w4"]  # the edited one (and the never-kept)
    assert pending.read(workspace).records[0].source == "subscribe"
    assert pending.file_path(workspace).read_bytes() == dump_pending(pending.read(workspace).records)

    await batcher.apply(workspace, lambda tx: tx.add(rec(77)))
    await batcher.apply(workspace, lambda tx: setattr(tx.edit("w77"), "undelivered", "found"))
    assert pending.read(workspace).records[-1].undelivered == "found"
    assert pending.file_path(workspace).read_bytes() == dump_pending(pending.read(workspace).records)

    await batcher.apply(workspace, lambda tx: [tx.remove(f"w{i}") for i in [*range(50), 77]])
    assert pending.file_path(workspace).read_bytes() == dump_pending([]) == b"[]\n"


async def test_failed_write_fails_its_changes_and_the_next_batch_starts_from_the_file(
    workspace: Workspace, monkeypatch
) -> None:
    async with pending.transaction(workspace) as tx:
        tx.add(*(rec(i) for i in range(5)))
    batcher = PendingBatcher()
    await batcher.apply(workspace, lambda tx: tx.remove("w0"))  # texts and records now kept in memory
    write = pending_store.write_locked

    def fail_once(path, data, **kw):
        monkeypatch.setattr(pending_store, "write_locked", write)
        raise OSError("disk full")

    monkeypatch.setattr(pending_store, "write_locked", fail_once)
    with pytest.raises(OSError):
        await batcher.apply(workspace, lambda tx: setattr(tx.edit("w1"), "undelivered", "lost"))
    await batcher.apply(workspace, lambda tx: setattr(tx.edit("w2"), "undelivered", "kept"))
    records = pending.read(workspace).records
    assert [(r.watch_id, r.undelivered) for r in records] == [("w1", None), ("w2", "kept"), ("w3", None), ("w4", None)]
    assert pending.file_path(workspace).read_bytes() == dump_pending(records)


async def test_a_batched_write_sweeps_temp_files_a_killed_writer_left(workspace: Workspace) -> None:
    async with pending.transaction(workspace) as tx:
        tx.add(rec(1))
    # what a writer killed between its temp file and the rename leaves beside pending.json
    stale = pending.file_path(workspace).parent / ".pending.json.k1ll3d.tmp"
    stale.write_bytes(b'{"watches": [torn')
    await PendingBatcher().apply(workspace, lambda tx: tx.remove("w1"))
    assert not stale.exists()
    assert sorted(p.name for p in workspace.a2a_dir.iterdir() if p.name.endswith(".tmp")) == []
    assert pending.read(workspace).records == []


async def test_a_batch_cut_short_as_the_process_stops_logs_nothing_for_callers_that_gave_up(
    workspace: Workspace, caplog
) -> None:
    """The stop cancels the waiting callers and the writer: their changes fail, and no one is left to be told;
    asyncio logged each as "Future exception was never retrieved"."""
    batcher = PendingBatcher()
    async with workspace.lock.ahold():  # the writer waits for the lock while the stop comes
        callers = [asyncio.ensure_future(batcher.apply(workspace, lambda tx, i=i: tx.add(rec(i)))) for i in range(3)]
        for _ in range(3):  # the callers queue their changes; the writer takes them and waits for the lock
            await asyncio.sleep(0)
        assert workspace not in batcher._queues
        writer = batcher._writers[workspace]
        for task in (*callers, writer):
            task.cancel()
        await asyncio.wait({*callers, writer})
    assert all(c.cancelled() for c in callers) and writer.cancelled()
    del callers, writer, task
    gc.collect()
    assert "never retrieved" not in caplog.text
    assert pending.read(workspace).records == []
