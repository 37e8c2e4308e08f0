"""`pending.json`'s journal (`pending_journal.py`): a send's record is a line appended, not a rewrite of the file;
every reader sees it; a fold writes it into the file; a crash at any instant leaves the records as they were
before or after the change, never both, never neither."""

from __future__ import annotations

import json
import os
import stat

import pytest

from a2aconsole.core import pending_journal
from a2aconsole.core.files import version_of
from a2aconsole.core.pending import WatchRecord, dump_pending
from a2aconsole.core.pending_store import STORE
from a2aconsole.core.workspace import Workspace


def rec(watch_id: str, **kw: object) -> WatchRecord:
    return WatchRecord(watch_id, "chat1", "bot", f"task-{watch_id}", started_at="2026-01-01T00:00:00Z", **kw)


def ids(ws: Workspace) -> list[str]:
    return [r.watch_id for r in ws.read_pending().records]


def line(entry: dict) -> bytes:
    return json.dumps(entry).encode() + b"\n"


def append(ws: Workspace, data: bytes) -> None:
    """Lines another process (or a crash) left in the journal."""
    with open(ws.journal_path, "ab") as f:
        f.write(data)


@pytest.fixture
def seeded(workspace: Workspace) -> Workspace:
    with workspace.pending_tx_sync() as tx:
        tx.add(rec("w1"), rec("w2"))
    return workspace


async def test_a_send_record_is_a_journal_line_and_the_file_is_not_rewritten(seeded: Workspace) -> None:
    ws = seeded
    before = ws.pending_path.read_bytes()
    inode = os.stat(ws.pending_path).st_ino
    async with ws.pending_tx(durable=False) as tx:
        tx.add(rec("s1", state="sending"))
    assert ids(ws) == ["w1", "w2", "s1"] and ws.read_pending().records[-1].state == "sending"
    assert stat.S_IMODE(os.stat(ws.journal_path).st_mode) == 0o600  # it may hold a push token
    STORE.forget(ws)  # another process sees it too
    async with ws.pending_tx(durable=False) as tx:
        assert tx.find("s1") is not None
        tx.remove("s1")
    assert ids(ws) == ["w1", "w2"]
    assert ws.pending_path.read_bytes() == before and os.stat(ws.pending_path).st_ino == inode


async def test_a_durable_change_folds_the_journal_into_the_file(seeded: Workspace) -> None:
    ws = seeded
    async with ws.pending_tx(durable=False) as tx:
        tx.add(rec("s1", state="sending"))
    async with ws.pending_tx(durable=False) as tx:
        tx.remove("w1")
    async with ws.pending_tx() as tx:
        tx.edit("w2").state = "working"
    records = ws.read_pending().records
    assert [r.watch_id for r in records] == ["w2", "s1"] and records[0].state == "working"
    assert ws.pending_path.read_bytes() == dump_pending(records)  # the file's own format, byte for byte
    assert ws.journal_path.read_bytes() == b""


async def test_a_long_journal_is_emptied_when_its_lines_cancel_out(seeded: Workspace, monkeypatch) -> None:
    monkeypatch.setattr(pending_journal, "JOURNAL_LIMIT", 2000)
    ws = seeded
    before = ws.pending_path.read_bytes()
    for i in range(20):
        async with ws.pending_tx(durable=False) as tx:
            tx.add(rec(f"s{i}", state="sending", message="x" * 100))
        assert ids(ws) == ["w1", "w2", f"s{i}"]
        async with ws.pending_tx(durable=False) as tx:
            tx.remove(f"s{i}")
        assert len(ws.journal_path.read_bytes()) <= 2000
    assert ws.pending_path.read_bytes() == before
    # a long journal whose records stay is folded into the file
    for i in range(20):
        async with ws.pending_tx(durable=False) as tx:
            tx.add(rec(f"k{i}", message="x" * 100))
    assert ids(ws) == ["w1", "w2", *(f"k{i}" for i in range(20))]
    assert len(ws.journal_path.read_bytes()) <= 2000 and len(ws.pending_path.read_bytes()) > len(before)


async def test_lines_another_process_appended_are_read(seeded: Workspace) -> None:
    ws = seeded
    async with ws.pending_tx(durable=False) as tx:  # this process knows the journal as it left it
        tx.add(rec("s1"))
    append(ws, line({"add": rec("s2").to_json()}) + line({"remove": "s1"}) + line({"remove": "w1"}))
    async with ws.pending_tx(durable=False) as tx:
        assert [r.watch_id for r in tx.records] == ["w2", "s2"]
        tx.add(rec("s3"))
    assert ids(ws) == ["w2", "s2", "s3"]


@pytest.mark.parametrize("crash", ["before-replace", "after-replace"])
async def test_a_fold_cut_short_by_a_crash_counts_each_change_once(seeded: Workspace, crash: str) -> None:
    """The fold line is written before the file is replaced, and the journal emptied after: a crash between
    them leaves lines that a reader applies only when the file is not the folded one."""
    ws = seeded
    async with ws.pending_tx(durable=False) as tx:
        tx.add(rec("s1", state="sending"))
    async with ws.pending_tx(durable=False) as tx:
        tx.remove("w1")
    # the folding transaction changed w2 and took s1 out (a cancel): cut before or after the rename
    new = dump_pending([rec("w2", state="working")])
    append(ws, b"\n" + line({"fold": version_of(new)}))
    if crash == "after-replace":
        ws.pending_path.write_bytes(new)
    STORE.forget(ws)  # the next process
    want = [("w2", "working")] if crash == "after-replace" else [("w2", ""), ("s1", "sending")]
    assert [(r.watch_id, r.state) for r in ws.read_pending().records] == want
    async with ws.pending_tx(durable=False) as tx:  # the next commit folds the journal and empties it
        assert [(r.watch_id, r.state) for r in tx.records] == want
        tx.add(rec("s2"))
    assert [(r.watch_id, r.state) for r in ws.read_pending().records] == [*want, ("s2", "")]
    assert ws.journal_path.read_bytes() == b""
    assert ws.pending_path.read_bytes() == dump_pending(ws.read_pending().records)


async def test_a_line_cut_by_a_crash_is_skipped_and_folded_away(seeded: Workspace) -> None:
    ws = seeded
    async with ws.pending_tx(durable=False) as tx:
        tx.add(rec("s1"))
    append(ws, line({"add": rec("s2").to_json()})[:40])
    assert ids(ws) == ["w1", "w2", "s1"]
    async with ws.pending_tx(durable=False) as tx:
        tx.remove("w2")
    assert ids(ws) == ["w1", "s1"] and ws.journal_path.read_bytes() == b""


async def test_reading_records_changes_nothing_and_a_failed_change_is_not_kept(seeded: Workspace) -> None:
    ws = seeded
    before = ws.pending_path.read_bytes()
    async with ws.pending_tx() as tx:
        assert [r.watch_id for r in tx.records] == [r.watch_id for r in tx.records] == ["w1", "w2"]
        assert tx.find("w1") is not None and not tx.changed
    with pytest.raises(RuntimeError):
        async with ws.pending_tx() as tx:
            tx.edit("w1").state = "lost"
            tx.remove("w2")
            raise RuntimeError("abort")
    async with ws.pending_tx() as tx:  # the cached records were dropped with the failed change
        assert tx.find("w1").state == "" and tx.find("w2") is not None
    assert ws.pending_path.read_bytes() == before
    with pytest.raises(ValueError, match="already"):
        async with ws.pending_tx() as tx:
            tx.add(rec("w1"))


async def test_a_send_s_record_is_removed_by_one_line_unless_another_writer_came_between(seeded: Workspace) -> None:
    """`PendingStore.remove_added` (a send's answer going back): the record this process's journal line added is
    removed by one more line when neither file moved since; a record the caller keeps (a worker adopted it)
    stays; after another process's write, or for a record that is not a journal line's, it gives way to a
    transaction (None) and changes nothing."""
    ws = seeded
    for wid in ("s1", "s2", "s3"):
        async with ws.pending_tx(durable=False) as tx:
            tx.add(rec(wid, state="sending"))
    journal = ws.journal_path.read_bytes()
    with ws.lock.hold():
        assert STORE.remove_added(ws, "s1", lambda r: False) is True
        assert STORE.remove_added(ws, "s2", lambda r: r.watch_id == "s2") is False  # kept: adopted by a worker
        assert STORE.remove_added(ws, "w1", lambda r: False) is None  # in the file, not a journal line's
    assert ws.journal_path.read_bytes() == journal + b'{"remove":"s1"}\n'
    assert ids(ws) == ["w1", "w2", "s2", "s3"]
    append(ws, line({"remove": "s3"}))  # another process took s3 out meanwhile
    moved = ws.journal_path.read_bytes()
    with ws.lock.hold():
        assert STORE.remove_added(ws, "s2", lambda r: False) is None
    assert ws.journal_path.read_bytes() == moved
    async with ws.pending_tx(durable=False) as tx:  # the transaction sees the other process's line
        assert tx.find("s3") is None
        tx.remove("s2")
    assert ids(ws) == ["w1", "w2"]
    STORE.forget(ws)
    assert ids(ws) == ["w1", "w2"]  # as any reader parses the files


async def test_a_send_s_record_is_added_by_one_line_unless_the_files_moved(seeded: Workspace) -> None:
    """`PendingStore.add_new` (a send's record, written while its question is out): one line appended when
    neither file moved since this process wrote them, the chat's own watch of the task kept (nothing written),
    and a transaction (None, nothing written) after another process's write, for an id already there, or for a
    full journal. What it writes is what a transaction would have: any reader sees the same records."""
    ws = seeded
    async with ws.pending_tx(durable=False) as tx:  # this process's view of the files is now current
        tx.add(rec("s0", state="sending"))
    journal = ws.journal_path.read_bytes()
    with ws.lock.hold():
        assert STORE.add_new(ws, rec("s1", state="sending")) is True
        assert STORE.add_new(ws, WatchRecord("s2", "chat1", "bot", "task-w1")) is False  # chat1 watches task-w1
        assert STORE.add_new(ws, WatchRecord("s3", "chat1", "bot", "task-s0")) is False  # ... and task-s0 (a line)
        assert STORE.add_new(ws, rec("w2")) is None  # the id is taken: the transaction says so
    assert ws.journal_path.read_bytes() == journal + pending_journal.line(("add", rec("s1", state="sending")))
    assert ids(ws) == ["w1", "w2", "s0", "s1"]
    kept = rec("s4", extra={"sender": {"pid": 1}})
    with ws.lock.hold():
        assert STORE.add_new(ws, kept) is True
    kept.extra["sender"]["pid"] = 2  # the caller's record stays its own: the store kept a copy
    assert ws.read_pending().records[-1].extra["sender"]["pid"] == 1
    append(ws, line({"remove": "s0"}))  # another process's line
    moved = ws.journal_path.read_bytes()
    with ws.lock.hold():
        assert STORE.add_new(ws, rec("s5")) is None
    assert ws.journal_path.read_bytes() == moved
    STORE.forget(ws)
    assert ids(ws) == ["w1", "w2", "s1", "s4"]  # as any reader parses the files


async def test_a_full_journal_gives_a_send_s_record_to_a_transaction(seeded: Workspace, monkeypatch) -> None:
    ws = seeded
    async with ws.pending_tx(durable=False) as tx:
        tx.add(rec("s0", state="sending"))
    monkeypatch.setattr(pending_journal, "JOURNAL_LIMIT", len(ws.journal_path.read_bytes()) + 10)
    journal = ws.journal_path.read_bytes()
    with ws.lock.hold():
        assert STORE.add_new(ws, rec("s1", state="sending")) is None
    assert ws.journal_path.read_bytes() == journal
