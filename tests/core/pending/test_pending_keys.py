"""`PendingTx.watching`: whether a chat already watches a task, from the store's index of the records
(`pending_keys.py`), right through every way the records change, and a send's record not written twice."""

from __future__ import annotations

import itertools
import random
from datetime import UTC, datetime

from a2aconsole.core import pending
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.pending.changes import PendingTx
from a2aconsole.core.pending.records import WatchRecord
from a2aconsole.core.pending.store import STORE
from a2aconsole.core.tool.send import write_sending

TARGETS, AGENTS, TASKS = ("chat1", "chat2"), ("bot", "other"), ("t1", "t2", "t3")
KEYS = list(itertools.product(TARGETS, AGENTS, TASKS))


def scanned(records: tuple[WatchRecord, ...], key: tuple[str, str, str]) -> bool:
    return any((r.target, r.agent, r.task_id) == key for r in records)


def random_record(rng: random.Random, watch_id: str) -> WatchRecord:
    target, agent, task = rng.choice(KEYS)
    return WatchRecord(watch_id, target, agent, task, started_at="2026-01-01T00:00:00Z")


def change(rng: random.Random, tx: PendingTx, counter: itertools.count) -> None:
    """One to three random changes: add, remove, replace, or a record changed in place."""
    for _ in range(rng.randint(1, 3)):
        ids = [r.watch_id for r in tx.records]
        op = rng.choice(("add", "add", "remove", "replace", "edit") if ids else ("add",))
        if op == "add":
            tx.add(random_record(rng, f"w{next(counter)}"))
        elif op == "remove":
            tx.remove(rng.choice(ids))
        elif op == "replace":
            tx.replace(random_record(rng, rng.choice(ids)))
        else:
            rec = tx.edit(rng.choice(ids))
            rec.target, rec.agent, rec.task_id = rng.choice(KEYS)


async def test_watching_agrees_with_a_scan_of_the_records_through_every_kind_of_change(workspace: Workspace) -> None:
    rng, counter = random.Random(7), itertools.count()
    for step in range(300):
        durable = rng.random() < 0.3  # a durable change folds the journal into the file: the index changes in step
        async with pending.transaction(workspace, durable=durable) as tx:
            change(rng, tx, counter)
            for key in KEYS:  # the transaction's own changes, before they are written
                assert tx.watching(*key) == scanned(tx.records, key), (step, key)
        if rng.random() < 0.1:
            STORE.forget(workspace)  # as another process: the file parsed again, the index built anew
        async with pending.transaction(workspace) as tx:
            for key in KEYS:
                assert tx.watching(*key) == scanned(tx.records, key), (step, key)
    assert pending.file_path(workspace).exists() and pending.journal_path(workspace).exists()


async def test_a_send_s_record_is_not_written_when_its_chat_already_watches_the_task(workspace: Workspace) -> None:
    now = datetime.now(UTC)
    with pending.transaction_sync(workspace) as tx:  # in the file
        tx.add(WatchRecord("old", "chat1", "bot", "t1"))
    async with pending.transaction(workspace, durable=False) as tx:  # in the journal
        tx.add(WatchRecord("new", "chat1", "bot", "t2"))
    for task in ("t1", "t2"):
        written, error = await write_sending(workspace, WatchRecord(f"s-{task}", "chat1", "bot", task), now, 30)
        assert written is None and error is None
    written, error = await write_sending(workspace, WatchRecord("s-other", "chat2", "bot", "t1"), now, 30)
    assert written is not None and error is None  # another chat on the same task: a watch of its own
    assert [r.watch_id for r in pending.read(workspace).records] == ["old", "new", "s-other"]
