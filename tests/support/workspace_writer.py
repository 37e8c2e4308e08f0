"""A separate OS process that writes a workspace's files, for the cross-process tests.

`python -m tests.support.workspace_writer append <root> <who> <n>`: prints `ready`, waits for a line on
stdin, then n times appends `<who>-<i>` to pending.json (read-modify-write under the lock) and to
agents.json (optimistic: read, save with the version read, retry on conflict).
`python -m tests.support.workspace_writer churn <root> <padding>`: saves agents.json in a tight loop with a
growing counter, printing `ready` after the first save, until it is killed.
`python -m tests.support.workspace_writer crash <root> <phase>`: saves agents.json once and SIGKILLs itself at
one instant of the atomic write (`mid-write`, `before-fsync`, `before-replace`, `after-replace`).
"""

from __future__ import annotations

import os
import signal
import sys

from a2aconsole.core.agents import AgentEntry
from a2aconsole.core.errors import ConflictError
from a2aconsole.core.pending import WatchRecord
from a2aconsole.core.workspace import Workspace


def churn_entries(counter: int, padding: int) -> list[AgentEntry]:
    return [AgentEntry("churn", "https://churn.example", description=f"{counter}:" + "x" * padding)]


def append(ws: Workspace, who: str, n: int) -> None:
    print("ready", flush=True)
    sys.stdin.readline()
    for i in range(n):
        name = f"{who}-{i}"
        with ws.pending_tx_sync() as tx:
            tx.add(WatchRecord(watch_id=name, target="t", agent=who, task_id=str(i)))
        while True:
            current = ws.read_agents()
            try:
                ws.save_agents([*current.entries, AgentEntry(name, f"https://{who}.example/{i}")], current.version)
                break
            except ConflictError:
                continue


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
    elif mode == "crash":
        crash(Workspace(root), rest[0])
    else:
        churn(Workspace(root), int(rest[0]))
