"""The worker lease: which process runs the watches of a workspace, so two workers never follow one watch.

A lease is an exclusive, non-blocking OS lock (`fcntl.flock`) on `<workspace>/.volcanic/a2a/.worker.lock`,
held for as long as the worker runs. The kernel drops it when the process ends, even on SIGKILL, so a
crashed worker never strands a workspace; a worker that cannot take a lease skips that workspace and
tries again at its next rescan. Leases are counted per process: the runtimes of one process (tests run
one per event loop) share the process's lease, since flock only has to keep *other* processes out.
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Iterable
from pathlib import Path

from . import metrics
from .workspace import Workspace

LEASE_FILE = ".worker.lock"


def lease_path(ws: Workspace) -> Path:
    return ws.a2a_dir / LEASE_FILE


class _Held:
    """One flock'd file description of this process and how many WorkerLeases use it."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.users = 0


_held: dict[Path, _Held] = {}
_guard = threading.Lock()


def _try_lock(path: Path) -> int | None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    try:  # who holds it, for an operator looking at the file; the lock is what counts
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
    except OSError:
        pass
    return fd


class WorkerLeases:
    """The leases one worker (a runtime's registry) holds. Not for sharing between workers."""

    def __init__(self) -> None:
        self._mine: set[Path] = set()

    def __len__(self) -> int:
        return len(self._mine)

    def holds(self, ws: Workspace) -> bool:
        return ws.root in self._mine

    def acquire(self, ws: Workspace) -> bool:
        """Take the workspace's lease without waiting; True when this worker holds it (now or already).

        False when another process holds it, or the lease file cannot be made (a missing or read-only
        workspace: nothing to run there anyway)."""
        if ws.root in self._mine:
            return True
        path = lease_path(ws)
        with _guard:
            held = _held.get(path)
            if held is None:
                try:
                    fd = _try_lock(path)
                except OSError:
                    return False
                if fd is None:
                    metrics.lease_held(str(ws.root), False)
                    return False
                held = _held[path] = _Held(fd)
                metrics.lease_held(str(ws.root), True)
            held.users += 1
        self._mine.add(ws.root)
        return True

    def acquire_all(self, workspaces: Iterable[Workspace]) -> list[Workspace]:
        """The workspaces whose lease this worker holds after trying each; the others are skipped."""
        return [ws for ws in workspaces if self.acquire(ws)]

    def release_all(self) -> None:
        """Give every lease back (the worker stopped); idempotent."""
        with _guard:
            for root in self._mine:
                path = lease_path(Workspace(root))
                held = _held.get(path)
                if held is None:
                    continue
                held.users -= 1
                if held.users <= 0:
                    del _held[path]
                    metrics.lease_held(str(root), False)
                    try:
                        fcntl.flock(held.fd, fcntl.LOCK_UN)
                    finally:
                        os.close(held.fd)
            self._mine.clear()


def lease_holder(ws: Workspace) -> str | None:
    """Who holds the workspace's lease, looked at without taking it: the pid the holder wrote ("" when it
    wrote none), or None when no process holds it (or there is no lease file yet).

    It looks with a shared lock taken and dropped at once: a worker trying the lease in that instant is
    refused and tries again at its next rescan, as after any lost race."""
    path = lease_path(ws)
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return os.read(fd, 32).decode("ascii", "replace").strip()
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)
