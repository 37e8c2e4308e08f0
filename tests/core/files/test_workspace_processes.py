"""The workspace files under real OS processes: concurrent writers lose nothing, a killed writer tears nothing."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from a2aconsole.core import pending
from a2aconsole.core.files.agents import dump_agents
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.pending.records import WatchRecord, dump_pending
from tests.support.workspace_writer import churn_entries

ROOT = Path(__file__).resolve().parents[3]
DEADLINE_SECONDS = 60


def writer(*args: str, go: bool = False) -> subprocess.Popen[str]:
    """`go`: the writer waits for a line on stdin before it starts (as `append` does)."""
    return subprocess.Popen(
        [sys.executable, "-m", "tests.support.workspace_writer", *args],
        cwd=ROOT,
        stdin=subprocess.PIPE if go or args[0] == "append" else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
    )


def kill_at_random(
    proc: subprocess.Popen[str], rng: random.Random, most: int, look: Callable[[], object], started: Callable[[], None]
) -> None:
    """Once the writer said `ready` and `started()` returned, let a random number of `look()`s pass (up to
    `most`), then SIGKILL it wherever it is; reaped either way."""
    try:
        assert proc.stdout.readline() == "ready\n"
        started()
        for _ in range(rng.randrange(1, most)):
            look()
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()


def load_if_present(path: Path) -> list | None:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    return json.loads(data)  # a torn or half-written file fails here


def test_two_processes_lose_no_update_and_the_files_stay_valid(workspace: Workspace) -> None:
    n = 60
    procs = [writer("append", str(workspace.root), who, str(n)) for who in ("a", "b")]
    for p in procs:
        assert p.stdout.readline() == "ready\n"
    for p in procs:  # both start together, so their saves interleave
        p.stdin.write("go\n")
        p.stdin.close()
    reads = 0
    deadline = time.monotonic() + DEADLINE_SECONDS
    while any(p.poll() is None for p in procs):
        assert time.monotonic() < deadline, "writers did not finish"
        load_if_present(pending.file_path(workspace))
        load_if_present(workspace.agents_path)
        reads += 1
    assert [p.returncode for p in procs] == [0, 0]
    assert reads > 0
    for p in procs:
        p.stdout.close()

    watch_ids = [r.watch_id for r in pending.read(workspace).records]
    agents = workspace.read_agents()
    assert agents.problems == [] and agents.parse_error is None
    for names in (watch_ids, [e.name for e in agents.entries]):
        assert len(names) == 2 * n
        for who in ("a", "b"):
            assert [x for x in names if x.startswith(f"{who}-")] == [f"{who}-{i}" for i in range(n)]
    switches = sum(1 for x, y in zip(watch_ids, watch_ids[1:], strict=False) if x[0] != y[0])
    assert switches >= 2, "the writers did not run concurrently"
    assert not list(workspace.a2a_dir.glob("*.tmp"))


def test_two_processes_sending_lose_no_record_and_keep_none_too_many(workspace: Workspace) -> None:
    """Sends' records as journal lines and the watches they become as folds, from two processes at once: every
    watch is there once, every answered send's record is gone, the file is in its own format."""
    n = 40
    procs = [writer("journal", str(workspace.root), who, str(n), go=True) for who in ("a", "b")]
    for p in procs:
        assert p.stdout.readline() == "ready\n"
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.close()
    deadline = time.monotonic() + DEADLINE_SECONDS
    while any(p.poll() is None for p in procs):
        assert time.monotonic() < deadline, "writers did not finish"
        ids = [r.watch_id for r in pending.read(workspace).records]
        assert len(ids) == len(set(ids))  # a reader never sees a record twice (journal and file)
    assert [p.returncode for p in procs] == [0, 0]
    for p in procs:
        p.stdout.close()
    records = pending.read(workspace).records
    for who in ("a", "b"):
        mine = [(r.watch_id, r.state) for r in records if r.agent == who]
        assert mine == [(f"{who}-{i}", "working") for i in range(0, n, 2)]
    with pending.transaction_sync(workspace) as tx:  # a durable change folds what is left of the journal
        tx.remove("a-0")
    assert pending.file_path(workspace).read_bytes() == dump_pending(pending.read(workspace).records)
    assert not pending.journal_path(workspace).exists() or not pending.journal_path(workspace).read_bytes()


def test_a_sending_writer_killed_anywhere_loses_no_record_and_doubles_none(workspace: Workspace) -> None:
    """Kill a writer of sends' records (journal lines, folds) at random instants: each run's watches are there
    for every round before the last, its answered sends are gone, only its last record may still be sending
    (as after a send killed in its wait: a worker adopts it); every earlier record stays; nothing is there
    twice, and no record that became a watch is sending again."""
    rng = random.Random(20261203)
    kept: dict[str, str] = {}
    for run in range(25):
        proc = writer("journal", str(workspace.root), f"r{run}", "-1", "3000")  # big records: long folds
        kill_at_random(proc, rng, 3000, pending.journal_path(workspace).stat, lambda: None)
        records = pending.read(workspace).records
        ids = [r.watch_id for r in records]
        assert len(ids) == len(set(ids)), "a record is there twice"
        now = {r.watch_id: r.state for r in records}
        assert {k: now.get(k) for k in kept} == kept, "an earlier record was lost or changed"
        mine = {int(r.watch_id.split("-")[1]): r.state for r in records if r.agent == f"r{run}"}
        last = max(mine)
        assert {i: s for i, s in mine.items() if i < last} == dict.fromkeys(range(0, last, 2), "working")
        assert mine[last] in (("sending", "working") if last % 2 == 0 else ("sending",))
        kept = now
    with pending.transaction_sync(workspace) as tx:  # the next durable change folds the journal, whatever was left
        tx.remove("r0-0")
    assert pending.file_path(workspace).read_bytes() == dump_pending(pending.read(workspace).records)
    assert {r.watch_id: r.state for r in pending.read(workspace).records} == {
        k: v for k, v in kept.items() if k != "r0-0"
    }


@pytest.mark.parametrize(("phase", "state"), [("before-replace", "sending"), ("after-replace", "working")])
def test_a_writer_killed_folding_the_journal_leaves_the_record_before_or_after(
    workspace: Workspace, phase: str, state: str
) -> None:
    """Killed after pending.json was replaced but before the journal was emptied, the journal's line is not
    applied again: the watch is not back to sending (the fold line says the file already has it)."""
    with pending.transaction_sync(workspace) as tx:
        tx.add(WatchRecord(watch_id="w0", target="t", agent="bot", task_id="0"))
    proc = writer("journal-crash", str(workspace.root), phase)
    proc.communicate(timeout=DEADLINE_SECONDS)
    assert proc.returncode == -signal.SIGKILL
    assert [(r.watch_id, r.state) for r in pending.read(workspace).records] == [("w0", ""), ("s1", state)]
    with pending.transaction_sync(workspace) as tx:  # the next durable change folds it for good
        assert [(r.watch_id, r.state) for r in tx.records] == [("w0", ""), ("s1", state)]
        tx.remove("w0")
    assert [(r.watch_id, r.state) for r in pending.read(workspace).records] == [("s1", state)]
    assert pending.journal_path(workspace).read_bytes() == b""


def test_a_writer_killed_mid_save_leaves_old_or_new_content(workspace: Workspace) -> None:
    padding = 300_000  # a big file makes the write window wide, so kills land inside saves
    rng = random.Random(20261202)
    last_counter = -1
    for _ in range(30):
        proc = writer("churn", str(workspace.root), str(padding))

        def saving() -> None:  # once it is saving in its loop
            inode = workspace.agents_path.stat().st_ino
            deadline = time.monotonic() + DEADLINE_SECONDS
            while workspace.agents_path.stat().st_ino == inode:
                assert time.monotonic() < deadline, "writer made no progress"

        kill_at_random(proc, rng, 2000, workspace.agents_path.stat, saving)
        assert proc.returncode == -signal.SIGKILL

        raw = workspace.agents_path.read_bytes()
        data = json.loads(raw)
        counter = int(data[0]["description"].split(":", 1)[0])
        assert raw == dump_agents(churn_entries(counter, padding)), "file is not exactly one saved content"
        assert counter >= 1
        last_counter = counter
        assert workspace.read_agents().get("churn") is not None

    # The next save under the lock (released by the kernel at the kill) works and sweeps the leftovers.
    workspace.save_agents(churn_entries(last_counter + 1, 10), workspace.read_agents().version)
    assert sorted(os.listdir(workspace.a2a_dir)) == [".lock", "agents.json"]


@pytest.mark.parametrize(
    ("phase", "survives"),
    [("mid-write", "old"), ("before-fsync", "old"), ("before-replace", "old"), ("after-replace", "new")],
)
def test_a_writer_killed_at_each_instant_of_a_save(workspace: Workspace, phase: str, survives: str) -> None:
    """The same, at chosen instants: the temp file may be left (torn), the real file never is."""
    old = workspace.save_agents(churn_entries(0, 1000), None)
    proc = writer("crash", str(workspace.root), phase)
    proc.communicate(timeout=DEADLINE_SECONDS)
    assert proc.returncode == -signal.SIGKILL
    raw = workspace.agents_path.read_bytes()
    expected = churn_entries(0 if survives == "old" else 1, 1000)
    assert raw == dump_agents(expected)
    temps = list(workspace.a2a_dir.glob(".agents.json.*.tmp"))
    assert len(temps) == (1 if survives == "old" else 0)
    af = workspace.read_agents()
    assert af.problems == [] and af.parse_error is None
    assert (af.version == old) is (survives == "old")
    workspace.save_agents(churn_entries(2, 10), af.version)
    assert sorted(os.listdir(workspace.a2a_dir)) == [".lock", "agents.json"]
