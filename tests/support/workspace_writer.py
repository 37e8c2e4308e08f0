"""A separate OS process that writes a workspace's files, for the cross-process tests.

`python -m tests.support.workspace_writer append <root> <who> <n>`: prints `ready`, waits for a line on
stdin, then n times appends `<who>-<i>` to pending.json (read-modify-write under the lock) and to
agents.json (optimistic: read, save with the version read, retry on conflict).
`python -m tests.support.workspace_writer journal <root> <who> <n> [padding]`: the same start, then n sends'
records, half of them becoming watches, half answered in the wait (`journal`); n = -1: until killed.
`python -m tests.support.workspace_writer churn <root> <padding>`: saves agents.json in a tight loop with a
growing counter, printing `ready` after the first save, until it is killed.
`python -m tests.support.workspace_writer crash <root> <phase>`: saves agents.json once and SIGKILLs itself at
one instant of the atomic write (`mid-write`, `before-fsync`, `before-replace`, `after-replace`).
`python -m tests.support.workspace_writer journal-crash <root> <phase>`: a send's record, then SIGKILLs itself
`before-replace` or `after-replace` of the fold that makes it a watch.
"""

from __future__ import annotations

import os
import signal
import sys

from a2aconsole.core import pending
from a2aconsole.core.errors import ConflictError
from a2aconsole.core.files.agents import AgentEntry
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.pending.records import WatchRecord


def churn_entries(counter: int, padding: int) -> list[AgentEntry]:
    return [AgentEntry("churn", "https://churn.example", description=f"{counter}:" + "x" * padding)]


def append(ws: Workspace, who: str, n: int) -> None:
    print("ready", flush=True)
    sys.stdin.readline()
    for i in range(n):
        name = f"{who}-{i}"
        with pending.transaction_sync(ws) as tx:
            tx.add(WatchRecord(watch_id=name, target="t", agent=who, task_id=str(i)))
        while True:
            current = ws.read_agents()
            try:
                ws.save_agents([*current.entries, AgentEntry(name, f"https://{who}.example/{i}")], current.version)
                break
            except ConflictError:
                continue


def journal(ws: Workspace, who: str, n: int, padding: int = 0) -> None:
    """Round i as a send: its sending record (a journal line), then on even rounds the wait runs out and the
    record becomes a plain watch (a durable change: a fold), on odd rounds the answer came in the wait and the
    record goes (a journal line). n < 0: until killed, printing `ready` after the first two rounds."""
    if n >= 0:
        print("ready", flush=True)
        sys.stdin.readline()
    i = 0
    while i != n:
        rec = WatchRecord(watch_id=f"{who}-{i}", target="t", agent=who, task_id=str(i), message="x" * padding)
        rec.state = "sending"
        with pending.transaction_sync(ws, durable=False) as tx:
            tx.add(rec)
        if i % 2 == 0:
            rec.state = "working"
            with pending.transaction_sync(ws) as tx:
                tx.replace(rec)
        else:
            with pending.transaction_sync(ws, durable=False) as tx:
                tx.remove(rec.watch_id)
        if i == 1 and n < 0:
            print("ready", flush=True)
        i += 1


def journal_crash(ws: Workspace, phase: str) -> None:
    """A send's record (a journal line), then the fold that makes it a watch, killed `before-replace` or
    `after-replace` of pending.json (before the journal is emptied)."""
    rec = WatchRecord(watch_id="s1", target="t", agent="bot", task_id="1", state="sending")
    with pending.transaction_sync(ws, durable=False) as tx:
        tx.add(rec)
    real_replace = os.replace

    def replace(src: str, dst: str) -> None:
        if phase == "before-replace":
            os.kill(os.getpid(), signal.SIGKILL)
        real_replace(src, dst)
        if phase == "after-replace":
            os.kill(os.getpid(), signal.SIGKILL)

    os.replace = replace  # type: ignore[assignment]
    rec.state = "working"
    with pending.transaction_sync(ws) as tx:
        tx.replace(rec)


def churn(ws: Workspace, padding: int) -> None:
    counter = 0
    while True:
        ws.save_agents(churn_entries(counter, padding), None)
        if counter == 0:
            print("ready", flush=True)
        counter += 1


def crash(ws: Workspace, phase: str) -> None:
    """Die at `phase` of the next save, the way a power cut or OOM kill would: no cleanup runs."""

    def die() -> None:
        os.kill(os.getpid(), signal.SIGKILL)

    real_fdopen, real_fsync, real_replace = os.fdopen, os.fsync, os.replace

    class HalfWriter:
        def __init__(self, f: object) -> None:
            self.f = f

        def __enter__(self) -> HalfWriter:
            return self

        def __exit__(self, *exc: object) -> None:
            self.f.close()

        def fileno(self) -> int:
            return self.f.fileno()

        def write(self, data: bytes) -> None:
            self.f.write(data[: len(data) // 2])
            self.f.flush()
            die()

    def fdopen(fd: int, *args: object, **kwargs: object) -> object:
        f = real_fdopen(fd, *args, **kwargs)
        return HalfWriter(f) if phase == "mid-write" else f

    def fsync(fd: int) -> None:
        if phase == "before-fsync":
            die()
        real_fsync(fd)

    def replace(src: str, dst: str) -> None:
        if phase == "before-replace":
            die()
        real_replace(src, dst)
        if phase == "after-replace":
            die()

    os.fdopen, os.fsync, os.replace = fdopen, fsync, replace  # type: ignore[assignment]
    ws.save_agents(churn_entries(1, 1000), None)


if __name__ == "__main__":
    mode, root, *rest = sys.argv[1:]
    if mode == "append":
        append(Workspace(root), rest[0], int(rest[1]))
    elif mode == "journal":
        journal(Workspace(root), rest[0], int(rest[1]), int(rest[2]) if len(rest) > 2 else 0)
    elif mode == "crash":
        crash(Workspace(root), rest[0])
    elif mode == "journal-crash":
        journal_crash(Workspace(root), rest[0])
    else:
        churn(Workspace(root), int(rest[0]))
