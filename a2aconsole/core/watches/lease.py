"""The worker lease: which process runs the watches of a workspace, so two workers never follow one watch.

Two kinds, one interface (`WorkerLeases` over a `LeaseStore`):

- **File** (the embedded default): an exclusive, non-blocking OS lock (`fcntl.flock`) on
  `<workspace>/.volcanic/a2a/.worker.lock`, held for as long as the process runs. The kernel drops it when the
  process ends, even on SIGKILL. Leases are counted per process: the runtimes of one process (tests run one per
  event loop) share it, since flock only has to keep *other* processes out.
- **Redis** (scale-out, `REDIS_URL` set): a key per workspace with an expiry, renewed by a heartbeat. A worker
  that stops renewing (killed, frozen with SIGSTOP, cut off) loses the lease when the key expires, and a standby
  takes over at its next heartbeat; the frozen one, once it runs again, finds the lease gone at its own next
  heartbeat and stops following those watches. The value names the holder's wake-up channel, so a wake-up that
  reaches another process can be handed to the holder.

A lease only decides who *follows* watches: every change to `pending.json` is still made under the workspace's
file lock, and a result is claimed in the file before it is delivered, so a moment of overlap at a takeover can
at worst repeat a check, never a delivery.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import threading
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

from a2aconsole.core import metrics
from a2aconsole.core.clock import Clock, SystemClock
from a2aconsole.core.files import Workspace, try_flock

log = logging.getLogger(__name__)

LEASE_FILE = ".worker.lock"
LEASE_TTL = 15.0  # seconds a Redis lease outlives its last renewal
HEARTBEAT = 5.0  # seconds between renewals (and a standby's attempts): a takeover within TTL + HEARTBEAT
WAKES_TTL = 3600  # seconds a noted push wake-up waits for the holder's rescan
MAX_WAKES = 10_000  # noted wake-ups taken per workspace and rescan


def lease_path(ws: Workspace) -> Path:
    return ws.a2a_dir / LEASE_FILE


class LeaseStore(Protocol):
    """Where leases live. `take` takes a free (or expired) lease or renews the holder's own."""

    async def take(self, ws: Workspace, holder: str, ttl: float) -> bool: ...

    async def give_back(self, ws: Workspace, holder: str) -> None: ...

    async def holder(self, ws: Workspace) -> str | None: ...

    async def note_wake(self, ws: Workspace, watch_id: str) -> None: ...

    async def take_wakes(self, ws: Workspace) -> list[str]: ...

    async def aclose(self) -> None: ...


class _Held:
    """One flock'd file description of this process and how many holders use it."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.users = 0


_held: dict[Path, _Held] = {}
_guard = threading.Lock()


def _try_lock(path: Path) -> int | None:
    fd = try_flock(path)
    if fd is None:
        return None
    try:  # who holds it, for an operator looking at the file; the lock is what counts
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
    except OSError:
        pass
    return fd


class FileLeaseStore:
    """flock leases: no expiry (the kernel releases them with the process), no holder to name."""

    def __init__(self) -> None:
        self._mine: set[Path] = set()

    async def take(self, ws: Workspace, holder: str, ttl: float) -> bool:
        path = lease_path(ws)
        if path in self._mine:
            return True
        with _guard:
            held = _held.get(path)
            if held is None:
                try:
                    fd = _try_lock(path)
                except OSError:  # a missing or read-only workspace: nothing to run there anyway
                    return False
                if fd is None:
                    return False
                held = _held[path] = _Held(fd)
            held.users += 1
        self._mine.add(path)
        return True

    async def give_back(self, ws: Workspace, holder: str) -> None:
        path = lease_path(ws)
        if path not in self._mine:
            return
        self._mine.discard(path)
        with _guard:
            held = _held.get(path)
            if held is None:
                return
            held.users -= 1
            if held.users <= 0:
                del _held[path]
                try:
                    fcntl.flock(held.fd, fcntl.LOCK_UN)
                finally:
                    os.close(held.fd)

    async def holder(self, ws: Workspace) -> str | None:
        return lease_holder(ws)

    async def note_wake(self, ws: Workspace, watch_id: str) -> None:
        return None  # one host, in-memory channel layer: the wake-up itself reaches the worker of this process

    async def take_wakes(self, ws: Workspace) -> list[str]:
        return []

    async def aclose(self) -> None:
        return None


# Take a free lease, or renew our own; never take another holder's live one.
_TAKE = """
local current = redis.call('GET', KEYS[1])
if current == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if current then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
"""
_GIVE_BACK = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


class RedisLeaseStore:
    """Leases as Redis keys with an expiry (`a2aconsole:lease:<hash of the workspace path>`)."""

    def __init__(self, url: str, socket_timeout: float = 5.0) -> None:
        import redis.asyncio as aioredis

        self._redis: Any = aioredis.from_url(
            url, socket_timeout=socket_timeout, socket_connect_timeout=socket_timeout, decode_responses=True
        )
        self._take = self._redis.register_script(_TAKE)
        self._give_back = self._redis.register_script(_GIVE_BACK)

    @staticmethod
    def key(ws: Workspace) -> str:
        return "a2aconsole:lease:" + hashlib.sha256(str(ws.root).encode()).hexdigest()[:32]

    async def take(self, ws: Workspace, holder: str, ttl: float) -> bool:
        return bool(await self._take(keys=[self.key(ws)], args=[holder, int(ttl * 1000)]))

    async def give_back(self, ws: Workspace, holder: str) -> None:
        await self._give_back(keys=[self.key(ws)], args=[holder])

    async def holder(self, ws: Workspace) -> str | None:
        value = await self._redis.get(self.key(ws))
        return str(value) if value else None

    @staticmethod
    def wakes_key(ws: Workspace) -> str:
        return "a2aconsole:wakes:" + hashlib.sha256(str(ws.root).encode()).hexdigest()[:32]

    async def note_wake(self, ws: Workspace, watch_id: str) -> None:
        key = self.wakes_key(ws)
        await self._redis.pipeline(transaction=False).sadd(key, watch_id).expire(key, WAKES_TTL).execute()

    async def take_wakes(self, ws: Workspace) -> list[str]:
        return [str(w) for w in await self._redis.spop(self.wakes_key(ws), MAX_WAKES) or []]

    async def aclose(self) -> None:
        await self._redis.aclose()


def new_holder_id() -> str:
    """A holder's id, also the name of its wake-up channel (a valid Channels channel name)."""
    return f"a2a-watches.{uuid.uuid4().hex}"


class WorkerLeases:
    """The leases one worker (a runtime's registry) holds. Not for sharing between workers.

    `holds` is a local answer (held, and renewed within the TTL by the monotonic clock, which goes on while a
    process is frozen); `acquire`, `renew` and `release_all` talk to the store.
    """

    def __init__(
        self,
        store: LeaseStore | None = None,
        *,
        holder: str | None = None,
        clock: Clock | None = None,
        ttl: float = LEASE_TTL,
    ) -> None:
        self.store: LeaseStore = store or FileLeaseStore()
        self.holder = holder or new_holder_id()
        self.clock: Clock = clock or SystemClock()
        self.ttl = ttl
        self._renewed: dict[Path, float] = {}
        self._workspaces: dict[Path, Workspace] = {}

    def __len__(self) -> int:
        return len(self._renewed)

    @property
    def expires(self) -> bool:
        """Whether a lease lapses without renewal (Redis), so a heartbeat must keep it."""
        return not isinstance(self.store, FileLeaseStore)

    def holds(self, ws: Workspace) -> bool:
        renewed = self._renewed.get(ws.root)
        if renewed is None:
            return False
        return not self.expires or self.clock.monotonic() - renewed < self.ttl

    def held(self) -> list[Workspace]:
        return [self._workspaces[root] for root in self._renewed]

    async def acquire(self, ws: Workspace) -> bool:
        """Take the workspace's lease without waiting; True when this worker holds it (now or already).

        A lease renewed within the last heartbeat is taken as held without asking the store. False when another
        process holds it, or the store cannot be reached (the lease is then not ours to assume)."""
        renewed = self._renewed.get(ws.root)
        if renewed is not None and (not self.expires or self.clock.monotonic() - renewed < HEARTBEAT):
            return True
        return await self._take(ws)

    async def _take(self, ws: Workspace) -> bool:
        try:
            ok = await self.store.take(ws, self.holder, self.ttl)
        except Exception as e:
            log.warning("worker lease of %s: the lease store failed (%s)", ws.root, type(e).__name__)
            return self.holds(ws)  # a passing failure: a lease we hold stays ours until the TTL runs out
        if ok:
            self._renewed[ws.root] = self.clock.monotonic()
            self._workspaces[ws.root] = ws
        metrics.lease_held(str(ws.root), ok)
        return ok  # a refused renewal is the heartbeat's to act on (`renew` stops the watches)

    def _lose(self, ws: Workspace) -> None:
        self._renewed.pop(ws.root, None)
        self._workspaces.pop(ws.root, None)
        metrics.lease_held(str(ws.root), False)

    async def acquire_all(self, workspaces: Iterable[Workspace]) -> list[Workspace]:
        """The workspaces whose lease this worker holds after trying each; the others are skipped."""
        return [ws for ws in workspaces if await self.acquire(ws)]

    async def renew(self) -> list[Workspace]:
        """The heartbeat: renew every lease held; returns the ones lost (taken by another holder, or not renewed
        within the TTL), which this worker must stop following."""
        lost = []
        for ws in self.held():
            try:
                ok = await self.store.take(ws, self.holder, self.ttl)
            except Exception as e:
                log.warning("worker lease of %s: renewal failed (%s)", ws.root, type(e).__name__)
                ok = self.holds(ws)  # a passing failure: still ours until the TTL runs out
            else:
                if ok:
                    self._renewed[ws.root] = self.clock.monotonic()
            if not ok:
                self._lose(ws)
                lost.append(ws)
        return lost

    async def note_wake(self, ws: Workspace, watch_id: str) -> None:
        """Keep a push's wake-up beside the lease until the holder acts on it: channel messages are at-most-once,
        so the holder's rescan takes what no message brought (`take_wakes`)."""
        try:
            await self.store.note_wake(ws, watch_id)
        except Exception as e:
            log.warning("worker lease of %s: noting a wake-up failed (%s)", ws.root, type(e).__name__)

    async def take_wakes(self, ws: Workspace) -> list[str]:
        """The wake-ups noted for the workspace since the last take (removed as taken)."""
        try:
            return await self.store.take_wakes(ws)
        except Exception as e:
            log.warning("worker lease of %s: reading noted wake-ups failed (%s)", ws.root, type(e).__name__)
            return []

    async def holder_of(self, ws: Workspace) -> str | None:
        """The id (wake-up channel) of the worker holding the lease, when the store knows it."""
        try:
            return await self.store.holder(ws)
        except Exception as e:
            log.warning("worker lease of %s: the lease store failed (%s)", ws.root, type(e).__name__)
            return None

    async def release_all(self) -> None:
        """Give every lease back (the worker stopped); idempotent."""
        for ws in self.held():
            self._lose(ws)
            try:
                await self.store.give_back(ws, self.holder)
            except Exception as e:
                log.warning("worker lease of %s: giving it back failed (%s)", ws.root, type(e).__name__)

    async def aclose(self) -> None:
        await self.release_all()
        await self.store.aclose()


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
