"""`pending.json`'s journal (`pending_journal.py`): a send's record is a line appended, not a rewrite of the file;
every reader sees it; a fold writes it into the file; a crash at any instant leaves the records as they were
before or after the change, never both, never neither."""

from __future__ import annotations

import json
import os
import stat

import pytest

from a2aconsole.core import pending
from a2aconsole.core.files.atomic import version_of
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.pending import journal as pending_journal
from a2aconsole.core.pending.records import WatchRecord, dump_pending
from a2aconsole.core.pending.store import STORE


def rec(watch_id: str, **kw: object) -> WatchRecord:
    return WatchRecord(watch_id, "chat1", "bot", f"task-{watch_id}", started_at="2026-01-01T00:00:00Z", **kw)


def ids(ws: Workspace) -> list[str]:
    return [r.watch_id for r in pending.read(ws).records]


def line(entry: dict) -> bytes:
    return json.dumps(entry).encode() + b"\n"


def append(ws: Workspace, data: bytes) -> None:
    """Lines another process (or a crash) left in the journal."""
    with open(pending.journal_path(ws), "ab") as f:
        f.write(data)


@pytest.fixture
def seeded(workspace: Workspace) -> Workspace:
    with pending.transaction_sync(workspace) as tx:
        tx.add(rec("w1"), rec("w2"))
    return workspace


async def test_a_send_record_is_a_journal_line_and_the_file_is_not_rewritten(seeded: Workspace) -> None:
    ws = seeded
    before = pending.file_path(ws).read_bytes()
    inode = os.stat(pending.file_path(ws)).st_ino
    async with pending.transaction(ws, durable=False) as tx:
        tx.add(rec("s1", state="sending"))
    assert ids(ws) == ["w1", "w2", "s1"] and pending.read(ws).records[-1].state == "sending"
    assert stat.S_IMODE(os.stat(pending.journal_path(ws)).st_mode) == 0o600  # it may hold a push token
    STORE.forget(ws)  # another process sees it too
    async with pending.transaction(ws, durable=False) as tx:
        assert tx.find("s1") is not None
        tx.remove("s1")
    assert ids(ws) == ["w1", "w2"]
    assert pending.file_path(ws).read_bytes() == before and os.stat(pending.file_path(ws)).st_ino == inode


async def test_a_durable_change_folds_the_journal_into_the_file(seeded: Workspace) -> None:
    ws = seeded
    async with pending.transaction(ws, durable=False) as tx:
        tx.add(rec("s1", state="sending"))
    async with pending.transaction(ws, durable=False) as tx:
        tx.remove("w1")
    async with pending.transaction(ws) as tx:
        tx.edit("w2").state = "working"
    records = pending.read(ws).records
    assert [r.watch_id for r in records] == ["w2", "s1"] and records[0].state == "working"
    assert pending.file_path(ws).read_bytes() == dump_pending(records)  # the file's own format, byte for byte
    assert pending.journal_path(ws).read_bytes() == b""


async def test_a_long_journal_is_emptied_when_its_lines_cancel_out(seeded: Workspace, monkeypatch) -> None:
    monkeypatch.setattr(pending_journal, "JOURNAL_LIMIT", 2000)
    ws = seeded
    before = pending.file_path(ws).read_bytes()
    for i in range(20):
        async with pending.transaction(ws, durable=False) as tx:
            tx.add(rec(f"s{i}", state="sending", message="x" * 100))
        assert ids(ws) == ["w1", "w2", f"s{i}"]
        async with pending.transaction(ws, durable=False) as tx:
            tx.remove(f"s{i}")
        assert len(pending.journal_path(ws).read_bytes()) <= 2000
    assert pending.file_path(ws).read_bytes() == before
    # a long journal whose records stay is folded into the file
    for i in range(20):
        async with pending.transaction(ws, durable=False) as tx:
            tx.add(rec(f"k{i}", message="x" * 100))
    assert ids(ws) == ["w1", "w2", *(f"k{i}" for i in range(20))]
    assert len(pending.journal_path(ws).read_bytes()) <= 2000 and len(pending.file_path(ws).read_bytes()) > len(before)


async def test_lines_another_process_appended_are_read(seeded: Workspace) -> None:
    ws = seeded
    async with pending.transaction(ws, durable=False) as tx:  # this process knows the journal as it left it
        tx.add(rec("s1"))
    append(ws, line({"add": rec("s2").to_json()}) + line({"remove": "s1"}) + line({"remove": "w1"}))
    async with pending.transaction(ws, durable=False) as tx:
        assert [r.watch_id for r in tx.records] == ["w2", "s2"]
        tx.add(rec("s3"))
    assert ids(ws) == ["w2", "s2", "s3"]


@pytest.mark.parametrize("crash", ["before-replace", "after-replace"])
async def test_a_fold_cut_short_by_a_crash_counts_each_change_once(seeded: Workspace, crash: str) -> None:
    """The fold line is written before the file is replaced, and the journal emptied after: a crash between
    them leaves lines that a reader applies only when the file is not the folded one."""
    ws = seeded
    async with pending.transaction(ws, durable=False) as tx:
        tx.add(rec("s1", state="sending"))
    async with pending.transaction(ws, durable=False) as tx:
        tx.remove("w1")
    # the folding transaction changed w2 and took s1 out (a cancel): cut before or after the rename
    new = dump_pending([rec("w2", state="working")])
    append(ws, b"\n" + line({"fold": version_of(new)}))
    if crash == "after-replace":
        pending.file_path(ws).write_bytes(new)
    STORE.forget(ws)  # the next process
    want = [("w2", "working")] if crash == "after-replace" else [("w2", ""), ("s1", "sending")]
    assert [(r.watch_id, r.state) for r in pending.read(ws).records] == want
    async with pending.transaction(ws, durable=False) as tx:  # the next commit folds the journal and empties it
        assert [(r.watch_id, r.state) for r in tx.records] == want
        tx.add(rec("s2"))
    assert [(r.watch_id, r.state) for r in pending.read(ws).records] == [*want, ("s2", "")]
    assert pending.journal_path(ws).read_bytes() == b""
    assert pending.file_path(ws).read_bytes() == dump_pending(pending.read(ws).records)


async def test_a_line_cut_by_a_crash_is_skipped_and_folded_away(seeded: Workspace) -> None:
    ws = seeded
    async with pending.transaction(ws, durable=False) as tx:
        tx.add(rec("s1"))
    append(ws, line({"add": rec("s2").to_json()})[:40])
    assert ids(ws) == ["w1", "w2", "s1"]
    async with pending.transaction(ws, durable=False) as tx:
        tx.remove("w2")
    assert ids(ws) == ["w1", "s1"] and pending.journal_path(ws).read_bytes() == b""


async def test_reading_records_changes_nothing_and_a_failed_change_is_not_kept(seeded: Workspace) -> None:
    ws = seeded
    before = pending.file_path(ws).read_bytes()
    async with pending.transaction(ws) as tx:
        assert [r.watch_id for r in tx.records] == [r.watch_id for r in tx.records] == ["w1", "w2"]
        assert tx.find("w1") is not None and not tx.changed
    with pytest.raises(RuntimeError):
        async with pending.transaction(ws) as tx:
            tx.edit("w1").state = "lost"
            tx.remove("w2")
            raise RuntimeError("abort")
    async with pending.transaction(ws) as tx:  # the cached records were dropped with the failed change
        assert tx.find("w1").state == "" and tx.find("w2") is not None
    assert pending.file_path(ws).read_bytes() == before
    with pytest.raises(ValueError, match="already"):
        async with pending.transaction(ws) as tx:
            tx.add(rec("w1"))
